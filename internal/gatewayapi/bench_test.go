package gatewayapi

import (
	"context"
	"testing"

	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
)

// BenchmarkConvert converts the generated 100-namespace mesh with an
// ingress Gateway and an HTTPRoute per service (2,000 routes).
func BenchmarkConvert(b *testing.B) {
	files := meshgen.Generate(meshgen.Options{Ingress: meshgen.IngressGatewayAPI})
	var objs []model.Object
	for _, f := range files {
		objs = append(objs, loadtest.Objects(b, string(f.Data))...)
	}
	for b.Loop() {
		if _, err := Convert(context.Background(), objs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
