package load

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

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

// TestIntOrString: the IntOrString fields every Service has decode as
// their own JSON decoding does, and what that refuses is still refused by
// it, with its words.
func TestIntOrString(t *testing.T) {
	for _, value := range []string{"8080", "-1", "0", `"http"`, `"8080"`, "''", "1.5", "1e3", "2147483648", "99999999999999999999", "true", "[1]"} {
		v, _, _, msg := new(docParser).parse(chunk{data: []byte("targetPort: " + value + "\n"), line: 1})
		if msg != "" {
			t.Fatalf("%s: %s", value, msg)
		}
		var got corev1.ServicePort
		var errs []fieldError
		newGoSchema().decode(reflect.ValueOf(&got).Elem(), v, model.Path{}, true, &errs)
		var want corev1.ServicePort
		raw, _ := json.Marshal(valueOf(v))
		wantErr := kjson.UnmarshalCaseSensitivePreserveInts(raw, &want)
		if got.TargetPort != want.TargetPort || (len(errs) > 0) != (wantErr != nil) {
			t.Errorf("targetPort: %s decodes to %#v (errors %v), want %#v (error %v)", value, got.TargetPort, errs, want.TargetPort, wantErr)
		}
	}
}
