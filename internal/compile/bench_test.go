package compile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/testfiles"
)

// BenchmarkStages compiles the default generated mesh (100 namespaces ×
// 20 services, ~3,000 proxies, ~8,000 objects) from files and reports each
// stage's mean wall time as ms/<stage>, and the process's CPU time per
// compile as ms-cpu/op (on a shared machine wall time tells less); the
// sub-benchmarks add an ingress
// routing to every service, written as Istio VirtualServices or as
// Gateway API HTTPRoutes.
func BenchmarkStages(b *testing.B) {
	for _, ingress := range []string{"", meshgen.IngressIstio, meshgen.IngressGatewayAPI} {
		name := ingress
		if name == "" {
			name = "none"
		}
		b.Run("ingress="+name, func(b *testing.B) { benchStages(b, meshgen.Options{Ingress: ingress}) })
	}
	// Issue 25's yardstick: the mesh's own routes written as mesh
	// HTTPRoutes instead of VirtualServices. A Gateway API backend is a
	// Service, not a subset, so both meshes have a Service per version
	// and route to those (ingress=none routes to subsets, and has 2,000
	// Services fewer, which every proxy sees); the only other difference
	// is the HTTPRoute mesh's 100 ReferenceGrants, which the share each
	// tenth service sends to the next namespace needs.
	b.Run("routes=virtualservices", func(b *testing.B) { benchStages(b, meshgen.Options{VersionServices: true}) })
	b.Run("routes=httproutes", func(b *testing.B) { benchStages(b, meshgen.Options{HTTPRoutes: true}) })
}

func benchStages(b *testing.B, opts meshgen.Options) {
	dir := b.TempDir()
	if _, _, err := meshgen.Write(dir, opts); err != nil {
		b.Fatal(err)
	}
	total := map[string]float64{}
	var order []string
	start := testfiles.CPUTime()
	for b.Loop() {
		r, err := Run(context.Background(), Inputs{Paths: []string{dir}}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range r.Stages {
			if _, ok := total[s.Name]; !ok {
				order = append(order, s.Name)
			}
			total[s.Name] += float64(s.Duration.Microseconds()) / 1000
		}
	}
	b.ReportMetric(float64((testfiles.CPUTime()-start).Microseconds())/1000/float64(b.N), "ms-cpu/op")
	for _, name := range order {
		b.ReportMetric(total[name]/float64(b.N), "ms/"+name)
	}
}

// BenchmarkRecompile is serve's recompile of the default generated mesh
// (100 namespaces × 20 services, 3,000 proxies): compile and build every
// configuration as serve does, then again after no change, after an edit
// to one namespace's Sidecar, and after an edit to a VirtualService every
// namespace sees, each reusing the build before (ConfigSet). It reports
// each step's CPU time (ms-cpu/STEP) and wall time (ms-wall/STEP, which
// depends on what else runs), the proxies it rebuilt, and what among
// them was taken from the build before (emit.Carry): the clusters and the
// outbound listeners of scopes' parts, the proxies' own resources.
//
//	go test ./internal/compile -run '^$' -bench Recompile -benchtime 1x
func BenchmarkRecompile(b *testing.B) {
	src := b.TempDir()
	if _, _, err := meshgen.Write(src, meshgen.Options{}); err != nil {
		b.Fatal(err)
	}
	opts := BuildOptions{Format: "xds", Unchecked: true}
	for b.Loop() {
		dir := b.TempDir()
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		var prev *ConfigSet
		for _, step := range []struct{ name, file, old, new string }{
			{name: "full"},
			{name: "unchanged"},
			{"sidecar", "ns-004/sidecar.yaml", `- "ns-005/*"`, `- "ns-006/*"`},
			{"virtualservice", "ns-001/virtual-services.yaml", `timeout: "5s"`, `timeout: "7s"`},
		} {
			if step.file != "" {
				p := filepath.Join(dir, step.file)
				data, err := os.ReadFile(p)
				if err != nil || !bytes.Contains(data, []byte(step.old)) {
					b.Fatalf("%s lacks %q (%v)", step.file, step.old, err)
				}
				if err := os.WriteFile(p, bytes.Replace(data, []byte(step.old), []byte(step.new), 1), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			start, wall := testfiles.CPUTime(), time.Now()
			r, err := Run(context.Background(), Inputs{Paths: []string{dir}}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if prev, err = r.ConfigSet(context.Background(), opts, prev); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((testfiles.CPUTime() - start).Milliseconds()), "ms-cpu/"+step.name)
			b.ReportMetric(float64(time.Since(wall).Milliseconds()), "ms-wall/"+step.name)
			b.ReportMetric(float64(prev.Carried.Clusters), "carried-clusters/"+step.name)
			b.ReportMetric(float64(prev.Carried.Listeners), "carried-listeners/"+step.name)
			b.ReportMetric(float64(prev.Carried.Own), "carried-own/"+step.name)
			b.ReportMetric(float64(prev.Rebuilt), "rebuilt/"+step.name)
		}
	}
}
