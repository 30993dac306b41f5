package resolve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/gatewayapi"
	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
)

// TestSharedScopesMatchAlone: namespaces whose "*/*" listener picks the
// same services, or selects the same VirtualServices, share what they
// pick, select and bind, and each scope still equals the scope built
// alone, sharing nothing; namespaces whose lists differ (a service
// exported to them by name, a hostname of several namespaces defined
// there, a VirtualService private to them, a listener with a port) get
// their own. A namespace with generated routes of its own selects them
// first and binds their hosts again, sharing the rest.
func TestSharedScopesMatchAlone(t *testing.T) {
	pod := func(ns string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: %s, labels: {app: p}}\nspec: {containers: [{name: c, image: i}]}", ns)
	}
	service := func(name, ns, annotations string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s, annotations: {%s}}\nspec: {ports: [{name: http, port: 80}]}", name, ns, annotations)
	}
	entry := func(ns, host string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: shared, namespace: %s}\nspec: {hosts: [%s], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}", ns, host)
	}
	routeTo := func(name, ns, host, exportTo, annotations, dest string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: %s, annotations: {%s}}\nspec: {hosts: [%s], exportTo: [%q], http: [{route: [{destination: {host: %s}}]}]}", name, ns, annotations, host, exportTo, dest)
	}
	route := func(name, ns, host, exportTo, annotations string) string {
		return routeTo(name, ns, host, exportTo, annotations, "api.b.svc.cluster.local")
	}
	gen := model.AnnotationRouteSemantics + ": " + model.RouteSemanticsGateway
	common := []string{
		pod("a"), pod("b"), pod("c"), pod("d"), pod("e"), pod("f"), pod("g"), pod("h"),
		service("web", "a", ""), service("api", "b", ""),
		service("private", "b", "networking.istio.io/exportTo: c"),
		entry("d", "shared.example.com"), entry("e", "shared.example.com"),
		service("web", "h", ""),
		route("web", "a", "web.a.svc.cluster.local", "*", ""),
		route("mine", "f", "web.a.svc.cluster.local", ".", ""),
		sidecarYAML("g", "default", `{egress: [{port: {number: 80, protocol: HTTP, name: http}, hosts: ["*/*"]}]}`),
	}
	// A route generated from a Gateway API route of h, for h's service:
	// every namespace selects it, h first.
	generated := route("generated", "h", "web.h.svc.cluster.local", "*", gen)
	// One for a host no service has applies nowhere, h included.
	unserved := route("unserved", "h", "nosuch.example.com", "*", gen)
	// A route generated in b for a's service, which only b selects, and
	// wins there over a's written one.
	consumer := route("consumer", "b", "web.a.svc.cluster.local", "*", gen)
	// Namespace i defines the hostname of k's service too, so it keeps
	// its own service for it, and k's generated route does not apply
	// there (nor does k share the others' services).
	claimer := []string{pod("i"), entry("i", "web.k.svc.cluster.local"),
		pod("k"), service("web", "k", ""), route("generated", "k", "web.k.svc.cluster.local", "*", gen)}
	// Namespace j's service hidden is exported nowhere: j's scope infers
	// it from a's route to it, and j's generated route for it applies in
	// j alone.
	hidden := []string{pod("j"), service("hidden", "j", "networking.istio.io/exportTo: \"~\""),
		routeTo("to-hidden", "a", "web.example.com", "*", "", "hidden.j.svc.cluster.local"),
		route("generated", "j", "hidden.j.svc.cluster.local", "*", gen)}
	for _, tc := range []struct {
		name string
		docs []string
		// ownSelection: the namespaces whose selection is their own
		// array; ownBinding: those that do not share a's binding (among
		// b, c, h, i, j, k). Where a generated route of another
		// namespace is selected, c, which sees a service exported to it
		// by name, binds alone.
		ownSelection, ownBinding []string
	}{
		{"routes", common, []string{"f"}, nil},
		{"generated route", append(slices.Clone(common), generated, unserved), []string{"f", "h"}, []string{"c"}},
		{"consumer route", append(slices.Clone(common), generated, consumer), []string{"b", "f", "h"}, []string{"b", "c"}},
		{"hostname of the generated route's namespace", slices.Concat(common, []string{generated}, claimer), []string{"f", "h", "k"}, []string{"c", "i", "k"}},
		{"inferred service", slices.Concat(common, hidden), []string{"f", "j"}, []string{"c", "j"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mesh(t, "", tc.docs...)
			checkScopesAlone(t, m)
			byNs := map[string]*Scope{}
			for _, sc := range m.Scopes {
				byNs[sc.Namespace] = sc
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
			for _, ns := range []string{"b", "c", "f", "h", "i", "j", "k"} {
				sc := byNs[ns]
				if sc == nil {
					continue
				}
				if got, want := sameArray(sc.Listeners[0].VirtualServices, a.Listeners[0].VirtualServices), !slices.Contains(tc.ownSelection, ns); got != want {
					t.Errorf("namespace %s shares a's VirtualService selection: %v, want %v", ns, got, want)
				}
				if ns == "f" {
					continue
				}
				if got, want := sameArray(sc.VirtualServices, a.VirtualServices), !slices.Contains(tc.ownBinding, ns); got != want {
					t.Errorf("namespace %s shares a's binding: %v, want %v", ns, got, want)
				}
			}
		})
	}
}

// TestSharedScopesMatchAloneGatewayAPI is TestSharedScopesMatchAlone's
// comparison on generated meshes with Gateway API routes: random ones,
// and the default mesh's routes written as mesh HTTPRoutes, where the
// namespaces without a Sidecar share one binding.
func TestSharedScopesMatchAloneGatewayAPI(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("random ", seed), func(t *testing.T) {
			checkScopesAlone(t, convertedMesh(t, meshgen.RandomWith(seed, meshgen.RandomOptions{GatewayAPI: true})))
		})
	}
	t.Run("http routes", func(t *testing.T) {
		m := convertedMesh(t, meshgen.Generate(meshgen.Options{Namespaces: 5, ServicesPerNS: 6, HTTPRoutes: true}))
		checkScopesAlone(t, m)
		var first *Scope
		shared := 0
		for _, sc := range m.Scopes {
			if sc.Choice.Sidecar != nil || len(sc.VirtualServices) == 0 {
				continue
			}
			if first == nil {
				first = sc
			} else if sameArray(sc.VirtualServices, first.VirtualServices) {
				shared++
			} else {
				t.Errorf("%s does not share %s's binding", sc.Name(), first.Name())
			}
		}
		if shared < 2 {
			t.Errorf("%d scopes share a binding, want the 3 others without a Sidecar", shared)
		}
	})
}

// convertedMesh loads generated files and resolves them after the
// hierarchy stage and the Gateway API conversion, as a compile does.
func convertedMesh(t *testing.T, files []meshgen.File) *Mesh {
	t.Helper()
	var objs []model.Object
	for _, f := range files {
		o, ds := load.Bytes(f.Name, f.Data)
		if len(ds) > 0 {
			t.Fatalf("%s: %v", f.Name, ds)
		}
		objs = append(objs, o...)
	}
	mc, _ := load.MeshConfig(objs, load.MeshOptions{})
	m, err := Resolve(context.Background(), converted(t, objs, mc), Options{Mesh: mc})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// converted runs the hierarchy stage and the Gateway API conversion over
// objs: resolve's input in a compile.
func converted(tb testing.TB, objs []model.Object, mc model.MeshConfig) hierarchy.Result {
	tb.Helper()
	h, err := hierarchy.Run(context.Background(), objs, hierarchy.Options{}, hierarchy.PropagateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	conv, err := gatewayapi.Convert(context.Background(), h.Objects, gatewayapi.Options{DomainSuffix: mc.DomainSuffix, Namespaces: h.Forest.ExistingLabels()})
	if err != nil {
		tb.Fatal(err)
	}
	h.Objects = conv.Objects
	return h
}

// checkScopesAlone compares every scope of m with the scope built alone,
// sharing nothing, and with the scope built again among all of m's,
// sharing a fresh registry and index, once with each scope first: what
// scopes compute once and share must not depend on which computes it.
func checkScopesAlone(t *testing.T, m *Mesh) {
	t.Helper()
	alone := make([][]string, len(m.Scopes))
	for i, sc := range m.Scopes {
		alone[i] = scopeFacts(buildScope(newRegistry(sc.reg.all), freshVSIndex(m.vss), m.Config.DomainSuffix, sc.Choice, sc.Namespace))
		if got := scopeFacts(sc); !slices.Equal(got, alone[i]) {
			t.Errorf("scope of %s:\n%q\nbuilt alone:\n%q", sc.Namespace, got, alone[i])
		}
	}
	for first := range m.Scopes {
		regs := map[*registry]*registry{}
		vss := freshVSIndex(m.vss)
		for k := range m.Scopes {
			sc := m.Scopes[(first+k)%len(m.Scopes)]
			if regs[sc.reg] == nil {
				regs[sc.reg] = newRegistry(sc.reg.all)
			}
			again := buildScope(regs[sc.reg], vss, m.Config.DomainSuffix, sc.Choice, sc.Namespace)
			if got := scopeFacts(again); !slices.Equal(got, alone[(first+k)%len(m.Scopes)]) {
				t.Errorf("scope of %s, built after %s's:\n%q\nbuilt alone:\n%q", sc.Namespace, m.Scopes[first].Namespace, got, alone[(first+k)%len(m.Scopes)])
			}
		}
	}
}

// freshVSIndex is x without what its scopes computed once and share.
func freshVSIndex(x *vsIndex) *vsIndex {
	return &vsIndex{public: x.public, private: x.private, exported: x.exported, all: x.all, hosts: x.hosts, generated: x.generated, publicIn: x.publicIn, bound: map[*registry]*memo[vsBinding]{}}
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

// TestDecisionsMatchDecide: every scope's DestinationRule decisions, which
// scopes share where no DestinationRule names their namespace, are those
// decide makes for the scope's namespace, on generated meshes whose
// namespaces hold DestinationRules of their own.
func TestDecisionsMatchDecide(t *testing.T) {
	meshes := map[string][]meshgen.File{
		"default":     meshgen.Generate(meshgen.Options{Namespaces: 6, ServicesPerNS: 4}),
		"http routes": meshgen.Generate(meshgen.Options{Namespaces: 4, ServicesPerNS: 4, HTTPRoutes: true}),
	}
	for seed := int64(1); seed <= 8; seed++ {
		meshes[fmt.Sprint("random ", seed)] = meshgen.RandomWith(seed, meshgen.RandomOptions{GatewayAPI: seed%2 == 0})
	}
	for name, files := range meshes {
		t.Run(name, func(t *testing.T) {
			m := convertedMesh(t, files)
			byHost := newDRsByHost(m.DestinationRules, m.Config.DomainSuffix)
			based := 0
			for _, sc := range m.Scopes {
				if sc.base != nil {
					based++
				}
				for s, got := range sc.DestinationRules() {
					want := m.drs.decide(byHost, sc.Namespace, s, m.Config.DefaultDestinationRuleExportTo)
					if got.Service != s || got.Lookup.Step != want.Lookup.Step || got.Lookup.Key != want.Lookup.Key || !slices.Equal(got.Lookup.Rules, want.Lookup.Rules) ||
						got.Rule != want.Rule || !slices.Equal(got.Shadowed, want.Shadowed) {
						t.Errorf("%s, %s: decision %+v, decide gives %+v", sc.Name(), s.Host, got, want)
					}
				}
			}
			if name == "default" && based < 2 {
				t.Errorf("%d scopes start from the shared list, want several", based)
			}
		})
	}
}

// TestCandidatesNamedByListener: a listener that names no "*/" host picks
// and selects from the services and VirtualServices of the namespaces it
// names what it would from all of them.
func TestCandidatesNamedByListener(t *testing.T) {
	meshes := map[string][]meshgen.File{"default": meshgen.Generate(meshgen.Options{Namespaces: 8, ServicesPerNS: 4})}
	for seed := int64(1); seed <= 12; seed++ {
		meshes[fmt.Sprint("random ", seed)] = meshgen.RandomWith(seed, meshgen.RandomOptions{GatewayAPI: seed%2 == 0})
	}
	for name, files := range meshes {
		t.Run(name, func(t *testing.T) {
			m := convertedMesh(t, files)
			named := 0
			for _, sc := range m.Scopes {
				for _, l := range sc.Listeners {
					if _, all := l.hosts.importsAll(); all || l.hosts.allExact || l.hosts.byNs["*"] != nil {
						continue
					}
					named++
					got, want := pickServices(sc.reg, l, sc.Namespace), pickAmong(l, [][]*Service{sc.reg.byNs[sc.Namespace], sc.reg.public})
					if !slices.Equal(got.services, want.services) || !slices.Equal(got.entries, want.entries) {
						t.Errorf("%s picks %v, from all services %v", sc.Name(), describeServices(got.services), describeServices(want.services))
					}
					if got, want := selectAmong(m.vss, l, sc.Namespace), selectFrom(m.vss, l, sc.Namespace, m.vss.visibleLists(sc.Namespace, MeshGateway)); !slices.Equal(got, want) {
						t.Errorf("%s selects %d VirtualServices, from all %d", sc.Name(), len(got), len(want))
					}
				}
			}
			if name == "default" && named == 0 {
				t.Error("no listener names namespaces only")
			}
		})
	}
}

// TestQuietVirtualServicesInferNothing: a scope built on the shared
// services, which skips the VirtualServices that infer nothing there,
// holds what inferring from every VirtualService it selects gives.
func TestQuietVirtualServicesInferNothing(t *testing.T) {
	meshes := map[string]*Mesh{
		"default":     convertedMesh(t, meshgen.Generate(meshgen.Options{Namespaces: 6, ServicesPerNS: 4})),
		"http routes": convertedMesh(t, meshgen.Generate(meshgen.Options{Namespaces: 4, ServicesPerNS: 4, HTTPRoutes: true})),
		"inferred": mesh(t, "",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec: {containers: [{name: c, image: i}]}",
			"apiVersion: v1\nkind: Service\nmetadata: {name: hidden, namespace: a, annotations: {networking.istio.io/exportTo: \"~\"}}\nspec: {ports: [{name: http, port: 80}]}",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: b}\nspec: {ports: [{name: http, port: 80}, {name: grpc, port: 81}]}",
			"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r, namespace: b}\nspec: {hosts: [web.b.svc.cluster.local], http: [{route: [{destination: {host: hidden.a.svc.cluster.local}}, {destination: {host: web.b.svc.cluster.local, port: {number: 81}}}]}]}"),
	}
	for seed := int64(1); seed <= 8; seed++ {
		meshes[fmt.Sprint("random ", seed)] = convertedMesh(t, meshgen.RandomWith(seed, meshgen.RandomOptions{GatewayAPI: true}))
	}
	for name, m := range meshes {
		t.Run(name, func(t *testing.T) {
			based, inferred := 0, 0
			for _, sc := range m.Scopes {
				if sc.base == nil {
					continue
				}
				based++
				all := &Scope{Namespace: sc.Namespace, reg: sc.reg, Services: slices.Clone(sc.base.services), imports: slices.Clone(sc.base.imports), slot: slices.Clone(sc.base.slot)}
				all.inferServices(sc.reg, sc.Listeners[0], sc.Listeners[0].VirtualServices, m.vss.all)
				inferred += len(all.Services) - len(sc.base.services)
				services := func(sc *Scope) []string {
					return slices.DeleteFunc(scopeFacts(sc), func(f string) bool { return !strings.HasPrefix(f, "service ") })
				}
				if got, want := services(sc), services(all); !slices.Equal(got, want) {
					t.Errorf("%s:\n%q\ninferring from every VirtualService:\n%q", sc.Name(), got, want)
				}
			}
			if based == 0 || name == "inferred" && inferred == 0 {
				t.Errorf("%d scopes built on the shared services, %d services inferred", based, inferred)
			}
		})
	}
}
