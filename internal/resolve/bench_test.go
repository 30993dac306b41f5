package resolve

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/meshgen/meshgentest"
	"github.com/meshc/meshc/internal/testfiles"
)

// BenchmarkResolve resolves every proxy of the generated mesh: scopes,
// DestinationRule decisions and VirtualService bindings.
func BenchmarkResolve(b *testing.B) {
	objs, mc := meshgentest.Load(b, meshgen.Options{})
	b.ReportAllocs()
	b.ResetTimer()
	var m *Mesh
	for b.Loop() {
		m = resolveObjects(b, objs, hierarchy.Options{}, Options{Mesh: mc})
	}
	b.ReportMetric(float64(len(m.Proxies)), "proxies")
	b.ReportMetric(float64(len(m.Scopes)), "scopes")
}

// BenchmarkResolveStage is the resolve stage alone, as a compile runs it
// after the hierarchy and the Gateway API conversion, on the default
// generated mesh and on issue 25's twins: the same routes as
// VirtualServices and as mesh HTTPRoutes, which resolve should find
// about as costly. Besides wall time it reports CPU time and the share of
// the processors' time they had nothing to run (%idle), which tell more on
// a shared machine.
func BenchmarkResolveStage(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts meshgen.Options
	}{
		{"mesh=default", meshgen.Options{}},
		{"routes=virtualservices", meshgen.Options{VersionServices: true}},
		{"routes=httproutes", meshgen.Options{HTTPRoutes: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			objs, mc := meshgentest.Load(b, tc.opts)
			h := converted(b, objs, mc)
			b.ReportAllocs()
			b.ResetTimer()
			var m *Mesh
			var err error
			// Collections, which run on idle processors, would hide the
			// stage's idle time; meshc seldom collects while it resolves
			// (GOGC 800).
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
			idle0, total0 := idleCPU()
			start := testfiles.CPUTime()
			for b.Loop() {
				if m, err = Resolve(context.Background(), h, Options{Mesh: mc}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((testfiles.CPUTime()-start).Microseconds())/1000/float64(b.N), "ms-cpu/op")
			b.StopTimer()
			idle1, total1 := idleCPU()
			b.ReportMetric(100*(idle1-idle0)/(total1-total0), "%idle")
			b.ReportMetric(float64(len(m.Scopes)), "scopes")
		})
	}
}

// idleCPU is the time the runtime's processors had nothing to run, and
// their time in all, so far (runtime/metrics, brought up to date by a
// collection): a share of idle time that the machine's other load leaves
// alone, unlike wall time.
func idleCPU() (idle, total float64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/cpu/classes/idle:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64(), s[1].Value.Float64()
}

// BenchmarkDigestViews digests every view of the generated mesh, as a
// diff does for each side before building the proxies whose digests
// differ.
func BenchmarkDigestViews(b *testing.B) {
	objs, mc := meshgentest.Load(b, meshgen.Options{})
	m := resolveObjects(b, objs, hierarchy.Options{}, Options{Mesh: mc})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d, err := m.NewDigester()
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range m.Views {
			if _, err := d.View(v); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(m.Views)), "views")
}

// BenchmarkOutboundRoutes resolves the outbound route configurations of
// one proxy of every scope of the generated mesh, as a build does once
// per scope; the mesh's memo of translations and vhosts is warm after
// the first round, as it is for every scope but the first in a build.
func BenchmarkOutboundRoutes(b *testing.B) {
	objs, mc := meshgentest.Load(b, meshgen.Options{})
	m := resolveObjects(b, objs, hierarchy.Options{}, Options{Mesh: mc})
	seen := map[*Scope]bool{}
	var views []*ProxyView
	for _, v := range m.Views {
		if v.Proxy.Type == SidecarProxy && !seen[v.Scope] {
			seen[v.Scope] = true
			views = append(views, v)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, v := range views {
			m.OutboundRoutes(v)
		}
	}
	b.ReportMetric(float64(len(views)), "scopes")
}
