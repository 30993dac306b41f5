package emit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/meshgen/meshgentest"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// generatedMesh resolves a synthetic mesh of 100 namespaces × 20
// services, ~3,000 proxies; by default every 4th namespace has a Sidecar.
func generatedMesh(b *testing.B, opts meshgen.Options) *resolve.Mesh {
	b.Helper()
	objs, mc := meshgentest.Load(b, opts)
	m, _ := resolvetest.Stages(objs, mc)
	return m
}

// BenchmarkBuildProxy compiles, validates and serialises one proxy of the
// generated mesh: one that sees the whole mesh, and one a Sidecar trims.
// "first" is a proxy built by a fresh Emitter, nothing shared yet; "next"
// is another proxy of the same scope, which reuses its shared part.
func BenchmarkBuildProxy(b *testing.B) {
	m := generatedMesh(b, meshgen.Options{})
	for _, tc := range []struct{ name, ns string }{{"no-sidecar", "ns-001"}, {"sidecar", "ns-004"}} {
		var view *resolve.ProxyView
		for _, v := range m.Views {
			if v.Proxy.Namespace == tc.ns {
				view = v
				break
			}
		}
		for _, format := range []Format{Bootstrap, XDS} {
			for _, warm := range []bool{false, true} {
				name := tc.name + "/" + string(format) + "/first"
				if warm {
					name = tc.name + "/" + string(format) + "/next"
				}
				b.Run(name, func(b *testing.B) {
					opts := Options{Format: format}
					e := New(m, opts)
					if warm {
						e.parts.expect(m, m.Views)
						_, out, err := e.Render(view)
						if err != nil {
							b.Fatal(err)
						}
						e.Release(out)
					}
					b.ReportAllocs()
					var cfg *Config
					var out Output
					for b.Loop() {
						if !warm {
							e = New(m, opts)
						}
						var err error
						if cfg, out, err = e.Render(view); err != nil {
							b.Fatal(err)
						}
						e.Release(out) // as Write does once the files are written
					}
					b.ReportMetric(float64(len(cfg.Clusters)), "clusters")
					b.ReportMetric(float64(out.Entry.Bytes), "bytes")
				})
			}
		}
	}
}

// BenchmarkBuildAll writes every proxy of the generated mesh with a
// Sidecar in every namespace, as a mesh that size needs: without one, each
// proxy's config is ~33 MB (MC8001), ~100 GB for the mesh.
func BenchmarkBuildAll(b *testing.B) {
	m := generatedMesh(b, meshgen.Options{SidecarEveryNth: 1})
	e := New(m, Options{})
	out := filepath.Join(b.TempDir(), "out")
	for b.Loop() {
		if err := os.Mkdir(out, 0o755); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Write(context.Background(), m.Views, WriteOptions{Dir: out}); err != nil {
			b.Fatal(err)
		}
		// A build replaces the previous one; removing it is part of the cost.
		if err := os.RemoveAll(out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Views)), "proxies")
}

// BenchmarkBuildAllShared writes every proxy of a 40-namespace mesh with
// a Sidecar in every second namespace (600 proxies) in the shared layout,
// the default of meshc build; it reports the bytes written.
func BenchmarkBuildAllShared(b *testing.B) {
	m := generatedMesh(b, meshgen.Options{Namespaces: 40, ServicesPerNS: 10, SidecarEveryNth: 2})
	out := filepath.Join(b.TempDir(), "out")
	var written int
	for b.Loop() {
		if err := os.Mkdir(out, 0o755); err != nil {
			b.Fatal(err)
		}
		res, err := New(m, Options{Shared: true}).Write(context.Background(), m.Views, WriteOptions{Dir: out})
		if err != nil {
			b.Fatal(err)
		}
		written = 0
		_ = filepath.WalkDir(out, func(_ string, d os.DirEntry, _ error) error {
			if info, err := d.Info(); err == nil && !d.IsDir() {
				written += int(info.Size())
			}
			return nil
		})
		if len(res.Index) != len(m.Views) {
			b.Fatalf("%d proxies written of %d", len(res.Index), len(m.Views))
		}
		if err := os.RemoveAll(out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Views)), "proxies")
	b.ReportMetric(float64(written)/(1<<20), "MiB-written")
}
