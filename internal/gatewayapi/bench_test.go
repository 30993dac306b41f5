package gatewayapi

import (
	"context"
	"testing"

	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/testfiles"
)

// BenchmarkConvert converts generated 100-namespace meshes: one with an
// ingress Gateway and an HTTPRoute per service (2,000 routes), and issue
// 25's yardstick, the mesh's own routes as 1,000 mesh HTTPRoutes with
// 100 ReferenceGrants (compile's BenchmarkStages/routes=httproutes). It
// reports the process's CPU time per conversion as ms-cpu/op too: on a
// shared machine wall time tells less.
func BenchmarkConvert(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts meshgen.Options
	}{
		{"ingress=gatewayapi", meshgen.Options{Ingress: meshgen.IngressGatewayAPI}},
		{"routes=httproutes", meshgen.Options{HTTPRoutes: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var objs []model.Object
			for _, f := range meshgen.Generate(bc.opts) {
				objs = append(objs, loadtest.Objects(b, string(f.Data))...)
			}
			nss := map[string]map[string]string{}
			for _, o := range objs {
				if ns, ok := o.(*model.Namespace); ok {
					nss[ns.Name] = ns.Labels
				}
			}
			start := testfiles.CPUTime()
			for b.Loop() {
				if _, err := Convert(context.Background(), objs, Options{Namespaces: nss}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((testfiles.CPUTime()-start).Microseconds())/1000/float64(b.N), "ms-cpu/op")
		})
	}
}
