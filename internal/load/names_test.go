package load

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestNameChecks: the fast checks of names agree with the API server's.
func TestNameChecks(t *testing.T) {
	names := []string{
		"", "a", "-", "a-", "-a", "a-b", "a--b", "A", "aB", "a_b", "a.b", "a..b", ".a", "a.", "a.-b", "a-.b",
		"0", "9to5", "svc-02-v1", "reviews.default", "é", "a b", strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 64) + ".b", strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 126) + "ab",
	}
	for _, name := range names {
		if got, want := isDNS1123Subdomain(name), validation.IsDNS1123Subdomain(name); !slices.Equal(got, want) {
			t.Errorf("isDNS1123Subdomain(%q) = %q, want %q", name, got, want)
		}
		if got, want := plainLabel(name), len(validation.IsDNS1123Label(name)) == 0; got != want {
			t.Errorf("plainLabel(%q) = %t, want %t", name, got, want)
		}
	}
}
