package resolve

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/model"
)

// vsYAML writes a VirtualService; spec is YAML flow without braces.
func vsYAML(ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: %s}\nspec: {%s}\n", name, ns, spec)
}

func loadVSs(t *testing.T, defaults []string, docs ...string) []*VirtualService {
	t.Helper()
	var out []*VirtualService
	for _, o := range objects(t, docs...) {
		out = append(out, newVirtualService(o.(*model.VirtualService), "cluster.local", defaults))
	}
	return out
}

// vsScope builds a scope for proxies in proxyNs with a Sidecar spec (""
// for none), services and VirtualServices.
func vsScope(t *testing.T, proxyNs, spec string, services []*Service, vss ...string) *Scope {
	t.Helper()
	base := scopeFor(t, proxyNs, spec)
	return buildScope(newRegistry(services), newVSIndex(loadVSs(t, []string{"*"}, vss...), "cluster.local", []string{"*"}), "cluster.local", base.Choice, proxyNs)
}

const c21Sidecar = "{egress: [{port: {number: 7443, protocol: http_proxy, name: p}, hosts: ['foo/virtualbar.foo.svc.cluster.local']}]}"

var c21VS = vsYAML("foo", "virtualbar", "hosts: [virtualbar], http: [{route: [{destination: {host: baz.svc.cluster.local}}], mirror: {host: foo.svc.cluster.local}}]")

func TestC21VirtualServiceInferredDestinations(t *testing.T) {
	sc := vsScope(t, "mynamespace", c21Sidecar, []*Service{
		svc("foo.svc.cluster.local", "ns1", ports(7443)),
		svc("baz.svc.cluster.local", "ns3", ports(7443)),
		svc("bar.svc.cluster.local", "ns2", ports(7443, 7442)),
		svc("barprime.svc.cluster.local", "ns3", ports(7442)),
	}, c21VS)
	want := []string{"baz.svc.cluster.local@ns3[7443]", "foo.svc.cluster.local@ns1[7443]"}
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, want) {
		t.Errorf("services = %v, want %v", got, want)
	}
	if len(sc.Listeners[0].Services) != 0 {
		t.Errorf("inferred services must not get listeners: %v", describeServices(sc.Listeners[0].Services))
	}
	if imp, _ := sc.Import("baz.svc.cluster.local"); imp.ViaVirtualService == nil || imp.ViaVirtualService.Name != "virtualbar" {
		t.Errorf("provenance of baz: %+v", imp)
	}
}

func TestC22ExplicitImportBeatsInference(t *testing.T) {
	spec := "{egress: [{port: {number: 7443, protocol: http_proxy, name: p}, hosts: ['foo/virtualbar.foo.svc.cluster.local', 'ns2/foo.svc.cluster.local']}]}"
	sc := vsScope(t, "mynamespace", spec, []*Service{
		svc("foo.svc.cluster.local", "ns1", ports(7443)),
		svc("foo.svc.cluster.local", "ns2", ports(8000)),
		svc("baz.svc.cluster.local", "ns3", ports(7443)),
	}, c21VS)
	want := []string{"baz.svc.cluster.local@ns3[7443]", "foo.svc.cluster.local@ns2[8000]"}
	if got := describeServices(sc.Services); !sameMultiset(got, want) {
		t.Errorf("services = %v, want %v", got, want)
	}
}

func TestC23InferencePrefersProxyNamespace(t *testing.T) {
	sc := vsScope(t, "mynamespace", c21Sidecar, []*Service{
		svc("foo.svc.cluster.local", "ns1", ports(7443)),
		svc("foo.svc.cluster.local", "mynamespace", ports(8000)),
		svc("baz.svc.cluster.local", "ns3", ports(7443)),
	}, c21VS)
	if got := describeServices(sc.Services); !slices.Contains(got, "foo.svc.cluster.local@mynamespace[8000]") {
		t.Errorf("services = %v", got)
	}
}

func TestC24InferenceTieBreak(t *testing.T) {
	sc := vsScope(t, "mynamespace", c21Sidecar, []*Service{
		svc("foo.svc.cluster.local", "ns1", ports(7443), created(1000)),
		svc("foo.svc.cluster.local", "ns2", ports(8000), created(2000)),
	}, c21VS)
	if got := describeServices(sc.Services); !slices.Contains(got, "foo.svc.cluster.local@ns1[7443]") {
		t.Errorf("oldest should win: %v", got)
	}
	sc = vsScope(t, "mynamespace", c21Sidecar, []*Service{
		svc("foo.svc.cluster.local", "ns1", ports(7443), exports(".")),
		svc("foo.svc.cluster.local", "ns2", ports(8000)),
	}, c21VS)
	if got := describeServices(sc.Services); !slices.Contains(got, "foo.svc.cluster.local@ns2[8000]") {
		t.Errorf("a service hidden from the proxy must not be inferred: %v", got)
	}
}

func TestC25VirtualServiceDestinationPorts(t *testing.T) {
	spec := "{egress: [{hosts: ['foo/virtualbar.foo.svc.cluster.local']}]}"
	two := []*Service{svc("baz.svc.cluster.local", "ns3", ports(8000, 7000)), svc("foo.svc.cluster.local", "ns1", ports(8000, 7000))}
	tests := []struct {
		name     string
		services []*Service
		vs       string
		want     []string
	}{
		{"http route and mirror", two,
			"hosts: [virtualbar], http: [{route: [{destination: {host: baz.svc.cluster.local, port: {number: 7000}}}], mirror: {host: foo.svc.cluster.local, port: {number: 7000}}}]",
			[]string{"baz.svc.cluster.local@ns3[7000]", "foo.svc.cluster.local@ns1[7000]"}},
		{"tcp route", two, "hosts: [virtualbar], tcp: [{route: [{destination: {host: baz.svc.cluster.local, port: {number: 7000}}}]}]",
			[]string{"baz.svc.cluster.local@ns3[7000]"}},
		{"tls route", two, "hosts: [virtualbar], tls: [{match: [{sniHosts: [virtualbar]}], route: [{destination: {host: baz.svc.cluster.local, port: {number: 7000}}}]}]",
			[]string{"baz.svc.cluster.local@ns3[7000]"}},
		{"port the service lacks", []*Service{svc("baz.svc.cluster.local", "ns3", ports(7443))},
			"hosts: [virtualbar], http: [{route: [{destination: {host: baz.svc.cluster.local, port: {number: 7000}}}]}]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := vsScope(t, "mynamespace", spec, tt.services, vsYAML("foo", "virtualbar", tt.vs))
			if got := describeServices(sc.Services); !sameMultiset(got, tt.want) {
				t.Errorf("services = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestC26SourceNamespaceFilter(t *testing.T) {
	vs := vsYAML("foo", "virtualbar", "hosts: [virtualbar], http: ["+
		"{match: [{sourceNamespace: mynamespace}], route: [{destination: {host: baz.svc.cluster.local}}]},"+
		"{match: [{sourceNamespace: foo}], route: [{destination: {host: foo.svc.cluster.local}}]},"+
		"{route: [{destination: {host: bar.svc.cluster.local}}]}]")
	sc := vsScope(t, "mynamespace", c21Sidecar, []*Service{
		svc("baz.svc.cluster.local", "ns1", ports(7443)),
		svc("foo.svc.cluster.local", "ns1", ports(7443)),
		svc("bar.svc.cluster.local", "ns2", ports(7443), kube),
	}, vs)
	want := []string{"bar.svc.cluster.local@ns2[7443]", "baz.svc.cluster.local@ns1[7443]"}
	if got := describeServices(sc.Services); !sameMultiset(got, want) {
		t.Errorf("services = %v, want %v", got, want)
	}
}

func vsNames(vss []*VirtualService) []string {
	return mapSlice(vss, func(v *VirtualService) string { return v.Object.Name })
}

func TestC30VirtualServiceExclusions(t *testing.T) {
	vss := []string{
		vsYAML("a", "vs-a", "hosts: [a.com], http: [{route: [{destination: {host: a.com}}]}]"),
		vsYAML("b", "vs-b", "hosts: [b.com], http: [{route: [{destination: {host: b.com}}]}]"),
		vsYAML("a", "vs-multi", "hosts: [drop.com, keep.com], http: [{route: [{destination: {host: keep.com}}]}]"),
	}
	tests := []struct {
		hosts string
		want  []string
	}{
		{"'*/*'", []string{"vs-a", "vs-b", "vs-multi"}},
		{"'*/*', '~b/*'", []string{"vs-a", "vs-multi"}},
		{"'*/*', '~/a.com'", []string{"vs-b", "vs-multi"}},
		{"'*/*', '~/drop.com'", []string{"vs-a", "vs-b", "vs-multi"}},
		{"'*/*', '~/drop.com', '~/keep.com'", []string{"vs-a", "vs-b"}},
		{"'*/*', '~a/a.com'", []string{"vs-b", "vs-multi"}},
		{"'~/*'", nil},
	}
	for _, tt := range tests {
		t.Run(tt.hosts, func(t *testing.T) {
			sc := vsScope(t, "x", "{egress: [{hosts: ["+tt.hosts+"]}]}", nil, vss...)
			if got := vsNames(sc.Listeners[0].VirtualServices); !sameMultiset(got, tt.want) {
				t.Errorf("VirtualServices = %v, want %v", got, tt.want)
			}
		})
	}
	wild := []string{
		vsYAML("a", "vs-exact", "hosts: [a.com], http: [{route: [{destination: {host: a.com}}]}]"),
		vsYAML("a", "vs-wild", "hosts: ['*.com'], http: [{route: [{destination: {host: a.com}}]}]"),
	}
	for hosts, want := range map[string][]string{"'*/*', '~/*.com'": nil, "'*/*', '~/a.com'": {"vs-wild"}} {
		sc := vsScope(t, "x", "{egress: [{hosts: ["+hosts+"]}]}", nil, wild...)
		if got := vsNames(sc.Listeners[0].VirtualServices); !sameMultiset(got, want) {
			t.Errorf("%s: VirtualServices = %v, want %v", hosts, got, want)
		}
	}
}

func visibleHosts(x *vsIndex, ns, gw string) []string {
	var out []string
	for _, vs := range x.visible(ns, gw) {
		out = append(out, string(vs.Hosts[0]))
	}
	return out
}

func TestC37VirtualServiceVisibility(t *testing.T) {
	route := "http: [{route: [{destination: {host: x}}]}]"
	x := newVSIndex(loadVSs(t, []string{"*"},
		vsYAML("test1", "rule1", "hosts: [rule1.com], exportTo: ['.', ns1], "+route),
		vsYAML("test2", "rule2", "hosts: [rule2.com], exportTo: [test2, ns1, test1], "+route),
		vsYAML("test2", "rule2gw", "hosts: [rule2gw.com], gateways: [default/gateway, mesh], exportTo: [test2, ns1, test1], "+route),
		vsYAML("test3", "rule3", "hosts: [rule3.com], gateways: [mesh], exportTo: [test1, test2, '*'], "+route),
		vsYAML("test3", "rule3gw", "hosts: [rule3gw.com], gateways: [default/gateway], exportTo: [test1, test2, '*'], "+route),
		vsYAML("zzz", "zzz", "hosts: [rootNS.com], "+route),
	), "cluster.local", []string{"*"})
	mesh := map[string][]string{
		"test1":  {"rule1.com", "rule2.com", "rule2gw.com", "rule3.com", "rootNS.com"},
		"test2":  {"rule2.com", "rule2gw.com", "rule3.com", "rootNS.com"},
		"ns1":    {"rule1.com", "rule2.com", "rule2gw.com", "rule3.com", "rootNS.com"},
		"random": {"rule3.com", "rootNS.com"},
	}
	for ns, want := range mesh {
		if got := visibleHosts(x, ns, MeshGateway); !reflect.DeepEqual(got, want) {
			t.Errorf("mesh, %s: %v, want %v", ns, got, want)
		}
	}
	for ns, want := range map[string][]string{
		"test1": {"rule2gw.com", "rule3gw.com"}, "test2": {"rule2gw.com", "rule3gw.com"},
		"ns1": {"rule2gw.com", "rule3gw.com"}, "random": {"rule3gw.com"},
	} {
		if got := visibleHosts(x, ns, "default/gateway"); !reflect.DeepEqual(got, want) {
			t.Errorf("gateway, %s: %v, want %v", ns, got, want)
		}
	}
}

func TestC38MeshDefaultVirtualServiceExportTo(t *testing.T) {
	route := "http: [{route: [{destination: {host: x}}]}]"
	x := newVSIndex(loadVSs(t, []string{".", "ns1"},
		vsYAML("test1", "mesh-rule1", "hosts: [mesh-rule1], "+route),
		vsYAML("test2", "mesh-rule2", "hosts: [mesh-rule2], "+route),
		vsYAML("test1", "gw-rule", "hosts: [gw-rule], gateways: [default/gateway], "+route),
	), "cluster.local", []string{".", "ns1"})
	names := func(ns, gw string) []string { return vsNames(x.visible(ns, gw)) }
	for _, tt := range []struct {
		ns, gw string
		want   []string
	}{
		{"test1", MeshGateway, []string{"mesh-rule1"}},
		{"ns1", MeshGateway, []string{"mesh-rule1", "mesh-rule2"}},
		{"test2", MeshGateway, []string{"mesh-rule2"}},
		{"random", MeshGateway, nil},
		{"test1", "default/gateway", []string{"gw-rule"}},
		{"ns1", "default/gateway", []string{"gw-rule"}},
		{"random", "default/gateway", nil},
	} {
		if got := names(tt.ns, tt.gw); !slices.Equal(got, tt.want) {
			t.Errorf("%s %s: %v, want %v", tt.gw, tt.ns, got, tt.want)
		}
	}
}

func TestVirtualServiceConflictOldestPublicWins(t *testing.T) {
	// docs/semantics/virtual-services.md §6.3 / docs/semantics/cases.md C40 (c) and (m): no merging, oldest public wins over
	// a newer one in the client's own namespace.
	route := func(dest string) string {
		return "hosts: [known.default.svc.cluster.local], http: [{route: [{destination: {host: " + dest + "}}]}]"
	}
	older := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a, namespace: arbitrary, creationTimestamp: '2024-01-01T00:00:00Z'}\nspec: {" + route("arbitrary.example.com") + "}\n"
	newer := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: b, namespace: not-default, creationTimestamp: '2024-01-02T00:00:00Z'}\nspec: {" + route("other.example.com") + "}\n"
	sc := vsScope(t, "not-default", "", []*Service{svc("known.default.svc.cluster.local", "default", ports(80), kube)}, newer, older)
	if len(sc.VirtualServices) != 1 {
		t.Fatalf("choices = %+v", sc.VirtualServices)
	}
	c := sc.VirtualServices[0]
	if c.Winner.Object.Name != "a" || len(c.Losers()) != 1 || c.Losers()[0].Object.Name != "b" {
		t.Errorf("winner %s losers %v", c.Winner.Object.Name, vsNames(c.Losers()))
	}
}
