package meshgen

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

// digests lists every file's SHA-256, one line each.
func digests(files []File) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "  %x %s\n", sha256.Sum256(f.Data), f.Name)
	}
	return b.String()
}

// TestGoldenDigests pins the bytes of the meshes made without the
// Gateway API options, so those options cannot change them.
func TestGoldenDigests(t *testing.T) {
	var b strings.Builder
	for seed := int64(1); seed <= 20; seed++ {
		fmt.Fprintf(&b, "random seed %d\n%s", seed, digests(Random(seed)))
	}
	for _, o := range []Options{{Namespaces: 3, ServicesPerNS: 10, SidecarEveryNth: 2, Seed: 7}, {Namespaces: 12, ServicesPerNS: 20}} {
		fmt.Fprintf(&b, "generate %d namespaces of %d services, sidecar every %d, seed %d\n%s",
			o.Namespaces, o.ServicesPerNS, o.SidecarEveryNth, o.Seed, digests(Generate(o)))
	}
	testfiles.Golden(t, filepath.Join("testdata", "digests.golden"), []byte(b.String()))
}
