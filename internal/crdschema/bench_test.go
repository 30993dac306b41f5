package crdschema

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/meshc/meshc/internal/testfiles"
)

// BenchmarkValidateUnique validates, through a new Memo each time, the
// objects of the generated mesh's HTTPRoute twin whose content is unique:
// 100 mesh HTTPRoutes each sending a share to a Service of another
// namespace, and 100 ReferenceGrants admitting them. They differ only in
// inert fields (inert.go), so the Memo judges one of each. It reports
// the CPU time of one object.
func BenchmarkValidateUnique(b *testing.B) {
	routes, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		b.Fatal(err)
	}
	grants, _, err := GatewayAPI("referencegrants", "v1beta1")
	if err != nil {
		b.Fatal(err)
	}
	type job struct {
		s   *Schema
		obj map[string]any
	}
	var jobs []job
	for i := range 100 {
		jobs = append(jobs,
			job{routes, object(b, "httproutes", "v1", fmt.Sprintf(`{"parentRefs": [{"group": "", "kind": "Service", "name": "svc-10"}], "rules": [{"backendRefs": [{"name": "svc-10-v1", "port": 8080, "weight": 90}, {"name": "svc-10-v2", "port": 8080, "weight": 5}, {"name": "svc-10-v1", "namespace": "ns-%03d", "port": 8080, "weight": 5}], "timeouts": {"request": "5s"}}]}`, i+1))},
			job{grants, object(b, "referencegrants", "v1beta1", fmt.Sprintf(`{"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "ns-%03d"}], "to": [{"group": "", "kind": "Service"}]}`, i))})
	}
	ctx := context.Background()
	m := NewMemo()
	for _, j := range jobs {
		if vs := m.Validate(ctx, j.s, j.obj); len(vs) > 0 {
			b.Fatalf("valid object breaks %v", vs)
		}
	}
	start := testfiles.CPUTime()
	for b.Loop() {
		m := NewMemo()
		for _, j := range jobs {
			m.Validate(ctx, j.s, j.obj)
		}
	}
	b.ReportMetric(float64((testfiles.CPUTime()-start).Microseconds())/float64(b.N*len(jobs)), "µs-cpu/object")
}

// BenchmarkCompileRules compiles the CEL rules of every node below the
// root of HTTPRoute v1, as the first object to reach each node has them
// compiled, from the stored rules (celrules.bin). The caches of the
// protocol buffers and of the library are warm after the first round,
// which a process is not: this measures the work beside them.
func BenchmarkCompileRules(b *testing.B) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		b.Fatal(err)
	}
	var nodes []*schema.Structural
	forEachOwnRules(s, nil, func(_ string, own *schema.Structural, _ any) { nodes = append(nodes, own) })
	start := testfiles.CPUTime()
	for b.Loop() {
		for _, n := range nodes {
			newCELRules(n, false, nil)
		}
	}
	b.ReportMetric(float64((testfiles.CPUTime()-start).Microseconds())/float64(b.N), "µs-cpu/op")
}
