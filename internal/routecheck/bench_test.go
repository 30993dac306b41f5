package routecheck

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/request"
)

// BenchmarkRun: 1,000 requests from ten proxies of the generated
// 100-namespace mesh, as a test file of meshc test would ask them; the
// compile is outside the loop, each iteration builds the ten proxies and
// walks the requests.
func BenchmarkRun(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "mesh")
	if _, _, err := meshgen.Write(dir, meshgen.Options{}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	run, err := compile.Run(ctx, compile.Inputs{Paths: []string{dir}}, compile.Options{})
	if err != nil {
		b.Fatal(err)
	}
	f := &File{Path: "bench"}
	noRoute := false
	for i := range 1000 {
		f.Tests = append(f.Tests, Case{Name: fmt.Sprint(i), Expect: Expect{NoRoute: &noRoute},
			Call: request.Call{From: fmt.Sprintf("ns-%03d/svc-01-v1", 1+i%10), Target: fmt.Sprintf("http://svc-%02d:8080/p/%d", 1+(i/10)%20, i)}})
	}
	for b.Loop() {
		results, err := Run(ctx, run, []*File{f})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range results {
			if !r.Passed() {
				b.Fatalf("%s: %v", r.Case.Name, r.Failures)
			}
		}
	}
}
