package load

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/model"
)

// TestGoSchemaErrorOrder holds the order of schema errors to a walk through
// sorted keys, whatever order the keys are written in.
func TestGoSchemaErrorOrder(t *testing.T) {
	c := chunk{data: []byte("spec:\n  type: 7\n  selector: {b: 1, a: [x]}\n  ports:\n  - port: x\n    name: 2\n  - port: y\n  clusterIP: false\n"), line: 1}
	v, _, _, msg := new(docParser).parse(c)
	if msg != "" {
		t.Fatal(msg)
	}
	want := []string{"spec.clusterIP", "spec.ports[0].name", "spec.ports[0].port", "spec.ports[1].port", "spec.selector.a", "spec.selector.b", "spec.type"}
	var errs []fieldError
	var svc corev1.Service
	newGoSchema().decode(reflect.ValueOf(&svc).Elem(), v, model.Path{}, false, &errs)
	var got []string
	for _, e := range errs {
		got = append(got, e.Path.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("error paths = %q, want %q", got, want)
	}
}
