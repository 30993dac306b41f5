package gatewayapi

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/model"
)

// convert loads YAML documents and converts them, with the namespaces the
// Namespace objects among them declare.
func convert(t testing.TB, docs ...string) *Result {
	t.Helper()
	return convertWith(t, Options{}, docs...)
}

// convertWith is convert with options; their Namespaces are replaced.
func convertWith(t testing.TB, opts Options, docs ...string) *Result {
	t.Helper()
	objs := loadtest.Objects(t, docs...)
	nss := map[string]map[string]string{}
	for _, o := range objs {
		if ns, ok := o.(*model.Namespace); ok {
			nss[ns.Name] = ns.Labels
		}
	}
	opts.Namespaces = nss
	res, err := Convert(context.Background(), objs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// generated finds a generated object by kind and namespace/name.
func generated[T model.Object](t testing.TB, res *Result, id string) T {
	t.Helper()
	for _, o := range res.Generated {
		m := o.Meta()
		if x, ok := o.(T); ok && m.Namespace+"/"+m.Name == id {
			return x
		}
	}
	var names []string
	for _, o := range res.Generated {
		names = append(names, o.Meta().Kind+" "+o.Meta().Namespace+"/"+o.Meta().Name)
	}
	t.Fatalf("no generated %s; have %v", id, names)
	var zero T
	return zero
}

// specJSON is a spec message as compact JSON, for comparisons.
func specJSON(t testing.TB, m proto.Message) string {
	t.Helper()
	b, err := protojson.MarshalOptions{}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v) // sorted keys, no spaces
	return string(out)
}

// codes lists the diagnostics as "CODE line: message" lines, sorted.
func codes(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code+" "+d.Message)
	}
	slices.Sort(out)
	return out
}

// hasDiag reports whether a diagnostic of code has a message holding
// every part.
func hasDiag(ds []diag.Diagnostic, code string, parts ...string) bool {
	return slices.ContainsFunc(ds, func(d diag.Diagnostic) bool {
		if d.Code != code {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(d.Message, p) {
				return false
			}
		}
		return true
	})
}

const gatewayHeader = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
  namespace: edge
spec:
  gatewayClassName: istio
  listeners:
`

// edgeGrant is the ReferenceGrant g of namespace certs opening every
// object of kind (core group) to the Gateways of namespace edge.
func edgeGrant(kind string) string {
	return `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: edge}]
  to: [{group: "", kind: ` + kind + `}]`
}
