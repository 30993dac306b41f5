package crdschema

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/model"
)

// validSpecs is one valid spec of each Gateway API resource, written as
// its CRD's JSON.
var validSpecs = map[string]string{
	"gatewayclasses":          `{"controllerName": "istio.io/gateway-controller"}`,
	"gateways":                `{"gatewayClassName": "istio", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}, {"name": "tls", "port": 443, "protocol": "TLS", "hostname": "*.example.com", "tls": {"mode": "Passthrough"}}]}`,
	"listenersets":            `{"parentRef": {"name": "gw"}, "listeners": [{"name": "http", "port": 8080, "protocol": "HTTP"}]}`,
	"httproutes":              `{"parentRefs": [{"name": "gw"}], "hostnames": ["shop.example.com"], "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/api"}}], "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x-a", "value": "b"}]}}], "backendRefs": [{"name": "web", "port": 80, "weight": 3}], "timeouts": {"request": "5s"}}]}`,
	"grpcroutes":              `{"parentRefs": [{"name": "gw"}], "rules": [{"matches": [{"method": {"service": "shop.Cart", "method": "Add"}}], "backendRefs": [{"name": "cart", "port": 9090}]}]}`,
	"tcproutes":               `{"parentRefs": [{"name": "gw", "sectionName": "tcp"}], "rules": [{"backendRefs": [{"name": "db", "port": 5432}]}]}`,
	"tlsroutes":               `{"parentRefs": [{"name": "gw"}], "hostnames": ["db.example.com"], "rules": [{"backendRefs": [{"name": "db", "port": 443}]}]}`,
	"referencegrants":         `{"from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "shop"}], "to": [{"group": "", "kind": "Service"}]}`,
	"backendtlspolicies":      `{"targetRefs": [{"group": "", "kind": "Service", "name": "web"}], "validation": {"hostname": "web.example.com", "wellKnownCACertificates": "System"}}`,
	"xbackendtrafficpolicies": `{"targetRefs": [{"group": "", "kind": "Service", "name": "web"}], "retryConstraint": {"budget": {"percent": 30, "interval": "20s"}, "minRetryRate": {"count": 5, "interval": "1s"}}}`,
}

// object is a Gateway API object of plural's kind at version with spec,
// decoded as meshc's YAML reader leaves it (numbers as json.Number).
func object(t testing.TB, plural, version, spec string) map[string]any {
	t.Helper()
	k := kindOf(t, plural)
	doc := fmt.Sprintf(`{"apiVersion": %q, "kind": %q, "metadata": {"name": "r", "namespace": "shop"}, "spec": %s}`,
		k.Group+"/"+version, k.Kind, spec)
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("%s: %v", plural, err)
	}
	return obj
}

func kindOf(t testing.TB, plural string) *model.Kind {
	t.Helper()
	for _, k := range model.Kinds() {
		if k.Family == model.GatewayAPI && k.Plural == plural {
			return k
		}
	}
	t.Fatalf("no Gateway API kind %q", plural)
	return nil
}

// TestGatewayAPISchemasCompile compiles every served version of every
// embedded CRD and checks that a valid object passes it: a rule that does
// not compile would be reported on every object.
func TestGatewayAPISchemasCompile(t *testing.T) {
	for plural, spec := range validSpecs {
		for _, version := range kindOf(t, plural).Versions {
			s, ok, err := GatewayAPI(plural, version)
			if !ok || err != nil {
				t.Errorf("%s %s: ok %v, err %v", plural, version, ok, err)
				continue
			}
			obj := object(t, plural, version, spec)
			before := fmt.Sprint(obj)
			if vs := s.Validate(context.Background(), obj); len(vs) > 0 {
				t.Errorf("%s %s: a valid object breaks %v", plural, version, vs)
			}
			if after := fmt.Sprint(obj); after != before {
				t.Errorf("%s %s: Validate changed its input:\n%s\n%s", plural, version, before, after)
			}
		}
	}
	if _, ok, _ := GatewayAPI("httproutes", "v1alpha1"); ok {
		t.Error("httproutes v1alpha1 is not served, yet has a schema")
	}
	if _, ok, _ := GatewayAPI("udproutes", "v1"); ok {
		t.Error("udproutes are not decoded, yet have a schema")
	}
}

// TestValidateDefaultsFirst checks that defaults are applied before the
// rules run, as the API server applies them: the parentRefs rule compares
// group and kind, which a ref that leaves them out gets from the CRD.
func TestValidateDefaultsFirst(t *testing.T) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		t.Fatal(err)
	}
	obj := object(t, "httproutes", "v1", `{"parentRefs": [{"name": "gw", "sectionName": "a"}, {"name": "gw", "kind": "Gateway", "group": "gateway.networking.k8s.io", "sectionName": "a"}]}`)
	vs := s.Validate(context.Background(), obj)
	if len(vs) != 1 || vs[0].Path.String() != "spec.parentRefs" || !strings.Contains(vs[0].Msg, "must be unique") {
		t.Errorf("got %v, want one spec.parentRefs uniqueness violation", vs)
	}
}

func TestParseFieldPath(t *testing.T) {
	tests := []struct {
		in   string
		want model.Path
	}{
		{"<nil>", nil},
		{"", nil},
		{"spec", model.Path{}.Key("spec")},
		{"spec.rules[0].filters[12].type", model.Path{}.Key("spec").Key("rules").Index(0).Key("filters").Index(12).Key("type")},
		{"spec.infrastructure.labels[app.kubernetes.io/name]", model.Path{}.Key("spec").Key("infrastructure").Key("labels").Key("app.kubernetes.io/name")},
		{"spec.listeners[a1]", model.Path{}.Key("spec").Key("listeners").Key("a1")},
		{"spec.x[", model.Path{}.Key("spec").Key("x").Key("[")},
		{"[3]", model.Path{}.Index(3)},
	}
	for _, tt := range tests {
		if got := ParseFieldPath(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseFieldPath(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestValidateMapKeysWithDots checks that a violation inside a map key
// with dots lands at that key, which the OpenAPI validator writes without
// brackets.
func TestValidateMapKeysWithDots(t *testing.T) {
	s, _, err := GatewayAPI("gateways", "v1")
	if err != nil {
		t.Fatal(err)
	}
	obj := object(t, "gateways", "v1", `{"gatewayClassName": "istio", "listeners": [{"name": "a", "port": 80, "protocol": "HTTP"}], "infrastructure": {"labels": {"app.kubernetes.io/name": "not valid!"}}}`)
	vs := s.Validate(context.Background(), obj)
	want := model.Path{}.Key("spec").Key("infrastructure").Key("labels").Key("app.kubernetes.io/name")
	if len(vs) != 1 || !reflect.DeepEqual(vs[0].Path, want) {
		t.Errorf("got %v, want one violation at %s", vs, want)
	}
}

// TestValidateHostileValues puts values of every JSON type in place of
// each field of each valid object: validation must report, never panic.
func TestValidateHostileValues(t *testing.T) {
	hostile := []any{nil, "", "x", int64(-1), json.Number("1e400"), json.Number("99999999999999999999"), 1.5, true, []any{}, []any{nil}, map[string]any{}, map[string]any{"": nil}}
	for plural, spec := range validSpecs {
		version := kindOf(t, plural).Versions[0]
		s, _, err := GatewayAPI(plural, version)
		if err != nil {
			t.Fatal(err)
		}
		obj := object(t, plural, version, spec)
		for _, p := range leaves(obj["spec"], model.Path{}.Key("spec")) {
			for _, v := range hostile {
				mutated := object(t, plural, version, spec)
				set(mutated, p, v)
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s: %s = %#v: panic %v", plural, p, v, r)
						}
					}()
					s.Validate(context.Background(), mutated)
				}()
			}
		}
	}
}

// leaves are the paths of every value inside v, containers included.
func leaves(v any, at model.Path) []model.Path {
	out := []model.Path{at}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			out = append(out, leaves(x[k], at.Key(k))...)
		}
	case []any:
		for i, e := range x {
			out = append(out, leaves(e, at.Index(i))...)
		}
	}
	return out
}

// set replaces the value at p (which exists) in obj.
func set(obj map[string]any, p model.Path, v any) {
	var cur any = obj
	for i, e := range p {
		last := i == len(p)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[e.Key] = v
			}
			cur = c[e.Key]
		case []any:
			if last {
				c[e.Index] = v
			}
			cur = c[e.Index]
		}
	}
}

// TestMemoValidateExact: an object whose content encoding was met before
// is judged as Validate judges it, without being built again, and each
// caller owns the violations it gets.
func TestMemoValidateExact(t *testing.T) {
	s, _, err := GatewayAPI("httproutes", "v1")
	if err != nil {
		t.Fatal(err)
	}
	bad := `{"parentRefs": [{"name": "gw"}], "rules": [{"timeouts": {"request": "1s", "backendRequest": "2s"}}]}`
	want := s.Validate(context.Background(), object(t, "httproutes", "v1", bad))
	if len(want) == 0 {
		t.Fatal("the bad route passed")
	}
	m := NewMemo()
	builds := 0
	build := func() map[string]any { builds++; return object(t, "httproutes", "v1", bad) }
	for i := range 3 {
		got := m.ValidateExact(context.Background(), s, []byte("bad"), build)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("call %d: got %v, want %v", i, got, want)
		}
		got[0].Path[0].Key = "changed"
	}
	if builds != 1 {
		t.Errorf("built %d times, want once", builds)
	}
	if got := m.ValidateExact(context.Background(), s, []byte("good"), func() map[string]any {
		return object(t, "httproutes", "v1", validSpecs["httproutes"])
	}); len(got) != 0 {
		t.Errorf("a valid route under another encoding: %v", got)
	}
}
