package resolve

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/model"
)

// TestSharedScopesMatchAlone: namespaces whose "*/*" listener picks the
// same services, or selects the same VirtualServices, share what they
// pick, select and bind, and each scope still equals the scope built
// alone, sharing nothing; namespaces whose lists differ (a service
// exported to them by name, a hostname of several namespaces defined
// there, a VirtualService private to them, a listener with a port, a
// generated route of theirs) get their own.
func TestSharedScopesMatchAlone(t *testing.T) {
	pod := func(ns string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: %s, labels: {app: p}}\nspec: {containers: [{name: c, image: i}]}", ns)
	}
	service := func(name, ns, annotations string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s, annotations: {%s}}\nspec: {ports: [{name: http, port: 80}]}", name, ns, annotations)
	}
	entry := func(ns string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: shared, namespace: %s}\nspec: {hosts: [shared.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}", ns)
	}
	route := func(name, ns, host, exportTo, annotations string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: %s, annotations: {%s}}\nspec: {hosts: [%s], exportTo: [%q], http: [{route: [{destination: {host: api.b.svc.cluster.local}}]}]}", name, ns, annotations, host, exportTo)
	}
	common := []string{
		pod("a"), pod("b"), pod("c"), pod("d"), pod("e"), pod("f"), pod("g"), pod("h"),
		service("web", "a", ""), service("api", "b", ""),
		service("private", "b", "networking.istio.io/exportTo: c"),
		entry("d"), entry("e"),
		service("web", "h", ""),
		route("web", "a", "web.a.svc.cluster.local", "*", ""),
		route("mine", "f", "web.a.svc.cluster.local", ".", ""),
		sidecarYAML("g", "default", `{egress: [{port: {number: 80, protocol: HTTP, name: http}, hosts: ["*/*"]}]}`),
	}
	// A route generated from a Gateway API route of h, for h's service:
	// every namespace selects it, and it binds by the scope's services.
	generated := route("generated", "h", "web.h.svc.cluster.local", "*", model.AnnotationRouteSemantics+": "+model.RouteSemanticsGateway)
	for _, tc := range []struct {
		name string
		docs []string
		// bound: a and b share their binding (no generated route); h
		// shares the others' VirtualService selection then.
		bound bool
	}{
		{"routes", common, true},
		{"generated route", append(slices.Clone(common), generated), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mesh(t, "", tc.docs...)
			byNs := map[string]*Scope{}
			for _, sc := range m.Scopes {
				byNs[sc.Namespace] = sc
				alone := buildScope(newRegistry(m.reg.all), freshVSIndex(m.vss), m.Config.DomainSuffix, sc.Choice, sc.Namespace)
				if got, want := scopeFacts(sc), scopeFacts(alone); !slices.Equal(got, want) {
					t.Errorf("scope of %s:\n%q\nbuilt alone:\n%q", sc.Namespace, got, want)
				}
			}
			a := byNs["a"]
			if a == nil || len(a.Listeners) != 1 || len(a.Listeners[0].Services) == 0 || len(a.VirtualServices) == 0 {
				t.Fatalf("namespace a has no scope importing services and routes: %+v", a)
			}
			for ns, want := range map[string]bool{"b": true, "c": false, "d": false, "e": false, "f": true, "g": false, "h": true} {
				if got := sameArray(byNs[ns].Listeners[0].Services, a.Listeners[0].Services); got != want {
					t.Errorf("namespace %s shares a's services: %v, want %v", ns, got, want)
				}
			}
			for ns, want := range map[string]bool{"b": true, "c": true, "f": false, "h": tc.bound} {
				if got := sameArray(byNs[ns].Listeners[0].VirtualServices, a.Listeners[0].VirtualServices); got != want {
					t.Errorf("namespace %s shares a's VirtualService selection: %v, want %v", ns, got, want)
				}
			}
			if got := sameArray(byNs["b"].VirtualServices, a.VirtualServices); got != tc.bound {
				t.Errorf("namespace b shares a's binding: %v, want %v", got, tc.bound)
			}
		})
	}
}

// freshVSIndex is x without what its scopes computed once and share.
func freshVSIndex(x *vsIndex) *vsIndex {
	return &vsIndex{public: x.public, private: x.private, exported: x.exported, all: x.all, hosts: x.hosts, generatedIn: x.generatedIn}
}

// sameArray reports whether two non-empty slices are one array.
func sameArray[T any](a, b []T) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// scopeFacts renders what a scope holds for comparison: its listeners'
// services and VirtualServices, the merged list with each import's reason,
// the bindings and the hostnames picked from several namespaces.
func scopeFacts(sc *Scope) []string {
	var out []string
	for _, l := range sc.Listeners {
		out = append(out, fmt.Sprintf("listener %d: %v %v", l.Port.GetNumber(), describeServices(l.Services), l.entries))
		for _, vs := range l.VirtualServices {
			out = append(out, "selects "+vs.Object.Namespace+"/"+vs.Object.Name)
		}
	}
	for i, s := range sc.Services {
		imp := sc.imports[i]
		via := ""
		if imp.ViaVirtualService != nil {
			via = imp.ViaVirtualService.Name
		}
		out = append(out, fmt.Sprintf("service %v: %s %q via %q port %d", describeServices([]*Service{s}), imp.Service.Host, imp.Entry, via, imp.Port))
	}
	for _, c := range sc.VirtualServices {
		out = append(out, fmt.Sprintf("binds %s to %s (%s), losers %d", c.Host, c.Winner.Object.Name, sc.VSReason(c.Winner), len(c.Losers())))
	}
	for _, vs := range sc.winners {
		out = append(out, "winner "+vs.Object.Name)
	}
	for _, c := range sc.Ambiguous {
		out = append(out, fmt.Sprintf("ambiguous %s: %s/%s over %v (%s)", c.Host, c.Winner.Namespace, c.Winner.Host, describeServices(c.Losers), c.TieBreak))
	}
	return out
}
