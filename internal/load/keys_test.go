package load

import (
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
)

// TestLoaderKeys: the loader's findings have distinct keys that name the
// object and field, or the document of the file when there is no object,
// and never a line: blank lines and comments added above leave them be.
func TestLoaderKeys(t *testing.T) {
	input := `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: {host: reviews}
      weight: -1
    timeout: 1s
    retries: {attempts: -2}
---
a: [b
---
apiVersion: v1
kind: Service
metadata: {namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: a, namespace: shop}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {namespace: a}
- apiVersion: v1
  kind: Service
  metadata: {namespace: b}
`
	_, ds := Bytes("in.yaml", []byte(input))
	keys := diag.Keys(ds)
	for _, want := range []string{
		"MC1001/file=in.yaml/doc=2",
		"MC1002/Service/file=in.yaml/doc=3",
		"MC1004/Service/shop/api/copy=2",
		"MC1004/Service/shop/api/copy=3",
		"MC1005/kind=Widget",
		"MC1002/Service/file=in.yaml/doc=8/item=items[0]",
		"MC1002/Service/file=in.yaml/doc=8/item=items[1]",
	} {
		if !slices.Contains(keys, want) {
			t.Errorf("no key %s in %q", want, keys)
		}
	}
	fields := 0
	for _, k := range keys {
		if strings.HasPrefix(k, "MC1003/VirtualService/shop/reviews/field=spec.http[0].") && strings.Contains(k, "/problem=") {
			fields++
		}
	}
	if fields < 2 {
		t.Errorf("schema problems are not keyed by field and problem: %q", keys)
	}
	sorted := slices.Sorted(slices.Values(keys))
	if c := slices.Compact(slices.Clone(sorted)); len(c) != len(sorted) {
		t.Errorf("keys repeat: %q", sorted)
	}
	_, moved := Bytes("in.yaml", []byte("# a comment\n\n\n"+input))
	if got := slices.Sorted(slices.Values(diag.Keys(moved))); !slices.Equal(got, sorted) {
		t.Errorf("keys changed with the lines:\n  %q\n  %q", sorted, got)
	}
}
