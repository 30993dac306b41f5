package compile

import (
	"context"
	"testing"

	"github.com/meshc/meshc/internal/meshgen"
)

// BenchmarkStages compiles the default generated mesh (100 namespaces ×
// 20 services, ~3,000 proxies, ~8,000 objects) from files and reports each
// stage's mean wall time as ms/<stage>; the sub-benchmarks add an ingress
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
}

func benchStages(b *testing.B, opts meshgen.Options) {
	dir := b.TempDir()
	if _, _, err := meshgen.Write(dir, opts); err != nil {
		b.Fatal(err)
	}
	total := map[string]float64{}
	var order []string
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
	for _, name := range order {
		b.ReportMetric(total[name]/float64(b.N), "ms/"+name)
	}
}
