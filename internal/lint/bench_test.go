package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/meshgen/meshgentest"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
	"github.com/meshc/meshc/internal/testfiles"
)

// BenchmarkRun runs every analyzer over the resolved default synthetic
// mesh: 100 namespaces × 20 services, ~3,000 proxies, ~8,000 objects.
func BenchmarkRun(b *testing.B) {
	objs, mc := meshgentest.Load(b, meshgen.Options{})
	m, _ := resolvetest.Stages(objs, mc)
	b.ReportAllocs()
	b.ResetTimer()
	var ds int
	for b.Loop() {
		ds = len(analyze(b, m, Analyzers(), Options{}))
	}
	b.ReportMetric(float64(ds), "diagnostics")
}

// BenchmarkAnalyzer runs each analyzer alone over the generated mesh, the
// shared facts it reads included, so a slow one shows by its code.
func BenchmarkAnalyzer(b *testing.B) {
	objs, mc := meshgentest.Load(b, meshgen.Options{})
	m, _ := resolvetest.Stages(objs, mc)
	for _, a := range Analyzers() {
		b.Run(a.Entry.Code, func(b *testing.B) {
			for b.Loop() {
				analyze(b, m, []*Analyzer{a}, Options{})
			}
		})
	}
}

// BenchmarkAnalyzerRoutes runs each analyzer alone over issue 25's twins:
// the same routes written as VirtualServices and as mesh HTTPRoutes that
// the gatewayapi stage converts, so a cost the conversion adds shows by
// its code; "all" runs them together, as lint does.
func BenchmarkAnalyzerRoutes(b *testing.B) {
	for _, twin := range []struct {
		name string
		o    meshgen.Options
	}{
		{"vs", meshgen.Options{VersionServices: true}},
		{"hr", meshgen.Options{HTTPRoutes: true}},
	} {
		objs, mc := meshgentest.Load(b, twin.o)
		m, _ := resolvetest.Stages(objs, mc)
		runs := map[string][]*Analyzer{"all": Analyzers()}
		names := []string{"all"}
		for _, a := range Analyzers() {
			runs[a.Entry.Code] = []*Analyzer{a}
			names = append(names, a.Entry.Code)
		}
		for _, name := range names {
			b.Run(name+"/"+twin.name, func(b *testing.B) {
				// CPU time, the collector's included, tells the twins
				// apart on a busy machine better than wall time.
				start := testfiles.CPUTime()
				for b.Loop() {
					analyze(b, m, runs[name], Options{})
				}
				b.ReportMetric(float64((testfiles.CPUTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkSharedHosts is issue 14's quadratic case: n VirtualServices
// that each list the same n hosts, seen by one namespace. Findings must
// grow with the groups, not the pairs: one finding here, whatever n.
func BenchmarkSharedHosts(b *testing.B) {
	const n = 300
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("service-%03d.shared-hosts.example.com", i)
	}
	list := strings.Join(hosts, ", ")
	docs := []string{fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: ext, namespace: team}\nspec: {hosts: [%s], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}\n", list)}
	for i := range n {
		docs = append(docs, fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs-%03d, namespace: team}\nspec: {hosts: [%s], http: [{route: [{destination: {host: %s}}]}]}\n", i, list, hosts[0]))
	}
	objs := loadtest.Objects(b, docs...)
	b.ReportAllocs()
	b.ResetTimer()
	var ds []diag.Diagnostic
	for b.Loop() {
		ds = analyze(b, resolvetest.Resolve(objs), Analyzers(), Options{})
	}
	if got := len(only(ds, diag.VirtualServiceHostConflict.Code)); got != 1 {
		b.Fatalf("%d MC5001 findings, want 1", got)
	}
}
