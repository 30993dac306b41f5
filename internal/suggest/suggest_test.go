package suggest

import "testing"

func TestDidYouMean(t *testing.T) {
	cands := []string{"host", "subset", "port", "trafficPolicy"}
	for name, want := range map[string]string{
		"hots":           ` (did you mean "host"?)`,
		"traffic_policy": ` (did you mean "trafficPolicy"?)`,
		"subsets":        ` (did you mean "subset"?)`,
		"zzzzzz":         "",
		"po":             ` (did you mean "port"?)`,
		"xyz":            "", // nothing within half the candidate's length
	} {
		if got := DidYouMean(name, cands); got != want {
			t.Errorf("DidYouMean(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"reviews", "reviews-v1", 3}} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
