package resolve

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/model"
)

func TestC08ServiceIndex(t *testing.T) {
	all := []*Service{
		svc("svc-unset", "test1", named("svc-unset")),
		svc("svc-public", "test1", exports("*")),
		svc("svc-private", "test1", exports(".")),
		svc("svc-none", "test1", exports("~")),
		svc("svc-namespace", "test1", exports("namespace")),
	}
	r := newRegistry(all)
	if got := hostsOf(r.public); !reflect.DeepEqual(got, []string{"svc-public", "svc-unset"}) {
		t.Errorf("public = %v", got)
	}
	if got := hostsOf(r.byNs["test1"]); !reflect.DeepEqual(got, []string{"svc-private"}) {
		t.Errorf("visible by name in test1 = %v", got)
	}
	if got := hostsOf(r.byNs["namespace"]); !reflect.DeepEqual(got, []string{"svc-namespace"}) {
		t.Errorf("visible by name in namespace = %v", got)
	}
	for _, ns := range []string{"test1", "namespace", "other"} {
		for _, s := range r.visibleTo(ns) {
			if s.Host == "svc-none" {
				t.Errorf("svc-none visible in %s", ns)
			}
		}
	}
	for _, s := range all {
		if r.byHostNs[s.Host]["test1"] != s {
			t.Errorf("%s missing from the host/namespace index", s.Host)
		}
	}
}

func TestC09VisibilityPerNamespace(t *testing.T) {
	k8s4 := svc("svc4", "test4", kube)
	all := []*Service{
		svc("svc1", "test1", exports(".", "ns1")),
		svc("svc2", "test2", exports("test1", "ns1", "test2")),
		svc("svc3", "test3", exports("test1", "*", "test2")),
		svc("svc4", "test4"), svc("svc4", "test4"), k8s4,
	}
	r := newRegistry(all)
	for ns, want := range map[string][]string{
		"test1":  {"svc1", "svc2", "svc3", "svc4", "svc4", "svc4"},
		"test2":  {"svc2", "svc3", "svc4", "svc4", "svc4"},
		"ns1":    {"svc1", "svc2", "svc3", "svc4", "svc4", "svc4"},
		"random": {"svc3", "svc4", "svc4", "svc4"},
	} {
		if got := hostsOf(r.visibleTo(ns)); !reflect.DeepEqual(got, want) {
			t.Errorf("visible in %s = %v, want %v", ns, got, want)
		}
	}
	if r.byHostNs["svc4"]["test4"] != k8s4 {
		t.Error("the host/namespace index should hold the Kubernetes svc4")
	}
}

func TestC10MeshDefaultServiceExportTo(t *testing.T) {
	def := []string{".", "bar"}
	mk := func(h, ns string, e ...string) *Service {
		s := svc(h, ns)
		s.exportTo = newExportTo(e, def, ns)
		return s
	}
	r := newRegistry([]*Service{mk("svc-unset-1", "test1"), mk("svc-unset-2", "test2"), mk("svc-bar-ns", "bar"), mk("svc-public", "test1", "*")})
	for ns, want := range map[string][]string{
		"test1": {"svc-unset-1", "svc-public"},
		"test2": {"svc-unset-2", "svc-public"},
		"bar":   {"svc-bar-ns", "svc-unset-1", "svc-unset-2", "svc-public"},
	} {
		if got := hostsOf(r.visibleTo(ns)); !reflect.DeepEqual(got, want) {
			t.Errorf("visible in %s = %v, want %v", ns, got, want)
		}
	}
	if got := hostsOf(r.public); !reflect.DeepEqual(got, []string{"svc-public"}) {
		t.Errorf("public = %v", got)
	}
}

func TestC11VisibilityPredicate(t *testing.T) {
	tests := []struct {
		name, svcNs string
		exportTo    []string
		meshDefault []string
		want        bool
	}{
		{"no exportTo, default '.', same namespace", "foo", nil, []string{"."}, true},
		{"no exportTo, default '.', other namespace", "bar", nil, []string{"."}, false},
		{"no exportTo, default '*'", "bar", nil, []string{"*"}, true},
		{"exportTo '.' elsewhere", "bar", []string{"."}, []string{"*"}, false},
		{"exportTo names foo", "bar", []string{"foo"}, []string{"*"}, true},
		{"exportTo names baz", "bar", []string{"baz"}, []string{"*"}, false},
		{"exportTo ~", "bar", []string{"~"}, []string{"*"}, false},
		{"exportTo * and ~", "bar", []string{"*", "~"}, []string{"*"}, true},
		{"exportTo ~ and .", "bar", []string{"~", "."}, []string{"*"}, false},
		{"default '.', foo; service in bar", "bar", nil, []string{".", "foo"}, true},
		{"default '.', baz; service in bar", "bar", nil, []string{".", "baz"}, false},
		{"default '.', baz; service in foo", "foo", nil, []string{".", "baz"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newExportTo(tt.exportTo, tt.meshDefault, tt.svcNs).visibleIn("foo"); got != tt.want {
				t.Errorf("visible in foo = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestC12SidecarChoice(t *testing.T) {
	m := mesh(t, "",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: nosidecar, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}",
		sidecarYAML("default", "foo", "{workloadSelector: {labels: {app: foo}}, egress: [{hosts: ['./*']}]}"),
		sidecarYAML("istio-system", "global", "{egress: [{hosts: ['*/*']}]}"),
		"apiVersion: v1\nkind: Pod\nmetadata: {name: foo, namespace: default, labels: {app: foo}}\nspec: {containers: [{name: c}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: bar, namespace: default, labels: {app: bar}}\nspec: {containers: [{name: c}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: nosidecar}\nspec: {containers: [{name: c}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: gw, namespace: istio-system, labels: {istio: ingressgateway, sidecar.istio.io/inject: 'true'}, annotations: {inject.istio.io/templates: gateway}}\nspec: {containers: [{name: c}]}",
	)
	for id, want := range map[string]string{
		"default/foo":       "default/foo (workload selector)",
		"default/bar":       "istio-system/global (root namespace default)",
		"nosidecar/other":   "istio-system/global (root namespace default)",
		"istio-system/gw":   "gateway",
		"istio-system/none": "",
	} {
		ns, name, _ := strings.Cut(id, "/")
		v, ok := m.View(ns, name)
		if want == "" {
			if ok {
				t.Errorf("%s should not be a proxy", id)
			}
			continue
		}
		if !ok {
			t.Fatalf("no proxy %s", id)
		}
		if got := v.Choice.String(); got != want {
			t.Errorf("%s: sidecar %q, want %q", id, got, want)
		}
	}
	if v, _ := m.View("default", "bar"); v.Scope.Namespace != "default" {
		t.Errorf("the root Sidecar must be evaluated for the proxy's namespace, got %s", v.Scope.Namespace)
	}
}

func TestC13RootSidecarDot(t *testing.T) {
	docs := []string{
		sidecarYAML("istio-system", "default", "{egress: [{hosts: ['./*', 'istio-system/*']}]}"),
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: foo, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {istio-injection: enabled}}",
	}
	for _, s := range []struct{ name, ns string }{{"svc1", "default"}, {"svc2", "foo"}, {"svc3", "foo"}, {"svc4", "istio-system"}} {
		docs = append(docs, "apiVersion: v1\nkind: Service\nmetadata: {name: "+s.name+", namespace: "+s.ns+"}\nspec: {ports: [{port: 80, name: http}]}")
	}
	docs = append(docs,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: foo}\nspec: {containers: [{name: c}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c}]}")
	m := mesh(t, "", docs...)
	for ns, want := range map[string][]string{
		"foo":     {"svc2.foo.svc.cluster.local", "svc3.foo.svc.cluster.local", "svc4.istio-system.svc.cluster.local"},
		"default": {"svc1.default.svc.cluster.local", "svc4.istio-system.svc.cluster.local"},
	} {
		v, _ := m.View(ns, "p")
		if got := hostsOf(v.Scope.Services); !reflect.DeepEqual(got, want) {
			t.Errorf("proxy in %s sees %v, want %v", ns, got, want)
		}
	}
}

func TestC14SameHostThreeNamespaces(t *testing.T) {
	sc := scopeFor(t, "mynamespace", "",
		svc("foobar.svc.cluster.local", "ns1", ports(8031, 8032, 8033, 8034, 8035), named("foo"), kube),
		svc("foobar.svc.cluster.local", "ns2", ports(8000), named("foo"), kube),
		svc("foobar.svc.cluster.local", "ns3", ports(7443), named("baz"), kube))
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, []string{"foobar.svc.cluster.local@ns3[7443]"}) {
		t.Errorf("services = %v", got)
	}
	if len(sc.Ambiguous) != 1 || sc.Ambiguous[0].Winner.Namespace != "ns3" || len(sc.Ambiguous[0].Losers) != 2 {
		t.Errorf("ambiguity not recorded: %+v", sc.Ambiguous)
	}
}

func TestC15SameHostSameNamespaceMergeable(t *testing.T) {
	sc := scopeFor(t, "mynamespace", "",
		svc("foobar.svc.cluster.local", "ns1", ports(8031, 8032, 8033, 8034, 8035), named("foo")),
		svc("foobar.svc.cluster.local", "ns2", ports(8000), named("foo")),
		svc("foobar.svc.cluster.local", "ns1", ports(7443), named("baz")))
	want := []string{"foobar.svc.cluster.local@ns1[7443,8031,8032,8033,8034,8035]"}
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, want) {
		t.Errorf("services = %v, want %v", got, want)
	}
	if sc.Services[0].Name != "baz" {
		t.Errorf("merged service keeps the first one's name, got %s", sc.Services[0].Name)
	}
}

func TestC16KubernetesBeatsServiceEntry(t *testing.T) {
	sc := scopeFor(t, "mynamespace", "",
		svc("foobar.svc.cluster.local", "ns1", ports(8031), named("foo")),
		svc("foobar.svc.cluster.local", "ns2", ports(8000), named("foo")),
		svc("foobar.svc.cluster.local", "ns3", ports(7443), named("baz"), kube))
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, []string{"foobar.svc.cluster.local@ns3[7443]"}) {
		t.Errorf("services = %v", got)
	}
}

func TestC17EgressPortTrims(t *testing.T) {
	spec := "{egress: [{port: {number: 8000, protocol: HTTP, name: http}, hosts: ['foo/*']}]}"
	sc := scopeFor(t, "foo", spec, svc("bar", "foo", ports(8000)), svc("barprime", "foo", ports()))
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, []string{"bar@foo[8000]"}) {
		t.Errorf("services = %v", got)
	}
	sc = scopeFor(t, "foo", spec, svc("bar", "foo", ports(8000, 7000)))
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, []string{"bar@foo[8000]"}) {
		t.Errorf("services = %v", got)
	}
}

func TestC18TwoEgressPortsRemerge(t *testing.T) {
	spec := "{egress: [{port: {number: 8000, protocol: HTTP, name: a}, hosts: ['foo/*']}, {port: {number: 7000, protocol: HTTP, name: b}, hosts: ['foo/*']}]}"
	sc := scopeFor(t, "foo", spec, svc("bar", "foo", ports(8000, 7000)), svc("barprime", "foo", ports(8000)), svc("foo", "foo", ports(8000, 7000, 9000)))
	want := []string{"bar@foo[8000,7000]", "barprime@foo[8000]", "foo@foo[8000,7000]"}
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, want) {
		t.Errorf("services = %v, want %v", got, want)
	}
}

func TestC19HTTPProxyEgressPortKeepsAllPorts(t *testing.T) {
	spec := "{egress: [{port: {number: 7443, protocol: http_proxy, name: p}, hosts: ['*/*']}]}"
	sc := scopeFor(t, "foo", spec, svc("bar", "foo", ports(8000, 7000)), svc("barprime", "foo", ports(8000)), svc("foo", "foo", ports(8000, 7000, 9000)))
	want := []string{"bar@foo[8000,7000]", "barprime@foo[8000]", "foo@foo[8000,7000,9000]"}
	if got := describeServices(sc.Services); !reflect.DeepEqual(got, want) {
		t.Errorf("services = %v, want %v", got, want)
	}
}

func TestC20WildcardEgressHosts(t *testing.T) {
	services := []*Service{svc("en.wikipedia.org", "ns1", ports(80)), svc("*.wikipedia.org", "ns1", ports(80))}
	sc := scopeFor(t, "ns1", "{egress: [{hosts: ['*/en.wikipedia.org']}]}", services...)
	if got := hostsOf(sc.Services); !reflect.DeepEqual(got, []string{"en.wikipedia.org"}) {
		t.Errorf("exact import = %v", got)
	}
	sc = scopeFor(t, "ns1", "{egress: [{hosts: ['*/*.wikipedia.org']}]}", services...)
	if got := hostsOf(sc.Services); len(got) != 2 {
		t.Errorf("wildcard import = %v", got)
	}
}

func TestC27SameHostDefaultSidecar(t *testing.T) {
	tests := []struct {
		name string
		regs [3]bool // Kubernetes registry for s1, s2, s3
		want []string
	}{
		{"all ServiceEntries merge", [3]bool{}, []string{"proxy@default[7000,7443,7442]"}},
		{"one Kubernetes service wins", [3]bool{false, false, true}, []string{"proxy@default[7442]"}},
		{"two Kubernetes services merge", [3]bool{false, true, true}, []string{"proxy@default[7443,7442]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ss []*Service
			for i, p := range []uint32{7000, 7443, 7442} {
				s := svc("proxy", "default", ports(p), named("s"+string(rune('1'+i))))
				if tt.regs[i] {
					s.Registry = Kubernetes
				}
				ss = append(ss, s)
			}
			sc := scopeFor(t, "default", "{}", ss...)
			if got := describeServices(sc.Services); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("services = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestC28PerPortEgressListeners(t *testing.T) {
	spec := "{egress: [" +
		"{port: {number: 8031, protocol: HTTP, name: a}, hosts: ['*/foobar.svc.cluster.local']}," +
		"{port: {number: 8032, protocol: HTTP, name: b}, hosts: ['*/foobar.svc.cluster.local']}," +
		"{port: {number: 8033, protocol: HTTP, name: c}, hosts: ['*/foobar.svc.cluster.local']}," +
		"{port: {number: 8034, protocol: HTTP, name: d}, hosts: ['*/foobar.svc.cluster.local']}," +
		"{port: {number: 8035, protocol: HTTP, name: e}, hosts: ['*/foobar.svc.cluster.local']}]}"
	const h = "foobar.svc.cluster.local"
	tests := []struct {
		name     string
		services []*Service
		want     []string
	}{
		{"first namespace keeps its ports", []*Service{svc(h, "ns1", ports(8031, 8032, 8033)), svc(h, "ns2", ports(8034, 8035)), svc(h, "ns3", ports(7443))},
			[]string{h + "@ns1[8031,8032,8033]"}},
		{"kubernetes namespace wins", []*Service{svc(h, "ns1", ports(8031, 8032, 8033, 8034, 8035)), svc(h, "ns2", ports(8031, 8032, 8033, 8034, 8035), kube)},
			[]string{h + "@ns2[8031,8032,8033,8034,8035]"}},
		{"same namespace merges", []*Service{svc(h, "ns1", ports(8031, 8032, 8033)), svc(h, "ns1", ports(8034, 8035), named("z"))},
			[]string{h + "@ns1[8031,8032,8033,8034,8035]"}},
		{"different resolution does not merge", []*Service{svc(h, "ns1", ports(8031, 8032, 8033)), svc(h, "ns1", ports(8034, 8035), named("z"), dnsResolution)},
			[]string{h + "@ns1[8031,8032,8033]"}},
		{"different selector does not merge", []*Service{svc(h, "ns1", ports(8031, 8032, 8033)), svc(h, "ns1", ports(8034, 8035), named("z"), selector("app", "x"))},
			[]string{h + "@ns1[8031,8032,8033]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scopeFor(t, "mynamespace", spec, tt.services...)
			if got := describeServices(sc.Services); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("services = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestC29EgressExclusions(t *testing.T) {
	services := []*Service{
		svc("host", "a", ports(8000)), svc("host", "a", ports(9000), named("host2")), svc("alt", "a", ports(80)),
		svc("host", "b", ports(8000)), svc("host", "b", ports(9000), named("host2")), svc("alt", "b", ports(80)),
	}
	tests := []struct {
		proxyNs string
		hosts   string
		want    []string // host@ns of the listener's services
	}{
		{"a", "'*/*'", []string{"host@a", "host@a", "alt@a"}},
		{"a", "'a/*'", []string{"host@a", "host@a", "alt@a"}},
		{"a", "'b/*'", []string{"host@b", "host@b", "alt@b"}},
		{"a", "'*/alt'", []string{"alt@a"}},
		{"a", "'b/alt'", []string{"alt@b"}},
		{"a", "'*/host', 'a/alt'", []string{"host@a", "host@a", "alt@a"}},
		{"a", "'*/*', '~b/*'", []string{"host@a", "host@a", "alt@a"}},
		{"a", "'*/*', '~/host'", []string{"alt@a"}},
	}
	for _, tt := range tests {
		t.Run(tt.hosts, func(t *testing.T) {
			sc := scopeFor(t, tt.proxyNs, "{egress: [{hosts: ["+tt.hosts+"]}]}", services...)
			got := mapSlice(sc.Listeners[0].Services, func(s *Service) string { return string(s.Host) + "@" + s.Namespace })
			if !sameMultiset(got, tt.want) {
				t.Errorf("services = %v, want %v", got, tt.want)
			}
		})
	}
	bOnly := []*Service{svc("host", "b", ports(8000)), svc("alt", "b", ports(80))}
	sc := scopeFor(t, "b", "{egress: [{hosts: ['*/*', '~a/*']}]}", bOnly...)
	if len(sc.Listeners[0].Services) != 2 {
		t.Errorf("proxy in b excluding a: %v", describeServices(sc.Listeners[0].Services))
	}
	wild := svc("*.test.wildcard.com", "b", ports(80))
	for hosts, want := range map[string]int{"'b/wildcard.com'": 0, "'b/*.wildcard.com'": 1, "'b/*', '~b/*.wildcard.com'": 0} {
		sc := scopeFor(t, "a", "{egress: [{hosts: ["+hosts+"]}]}", wild)
		if len(sc.Listeners[0].Services) != want {
			t.Errorf("%s: %v, want %d services", hosts, describeServices(sc.Listeners[0].Services), want)
		}
	}
}

func sameMultiset(a, b []string) bool {
	count := map[string]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestScopeName: a scope is named by its Sidecar, or by its namespace when
// none applies, as MC8001 and the build estimate say it.
func TestScopeName(t *testing.T) {
	sidecar := &model.Sidecar{ObjectMeta: model.ObjectMeta{Namespace: "istio-system", Name: "default"}}
	for _, tt := range []struct {
		scope *Scope
		want  string
	}{
		{&Scope{Namespace: "shop", Choice: SidecarChoice{Sidecar: sidecar}}, "Sidecar istio-system/default"},
		{&Scope{Namespace: "shop"}, "namespace shop (no Sidecar)"},
	} {
		if got := tt.scope.Name(); got != tt.want {
			t.Errorf("Name() = %q, want %q", got, tt.want)
		}
	}
}

// TestScheduleScopes: every scope is built once, one without a Sidecar
// first and those with one next.
func TestScheduleScopes(t *testing.T) {
	sc := &model.Sidecar{}
	plain, with := SidecarChoice{}, SidecarChoice{Sidecar: sc}
	for _, tc := range []struct {
		choices []SidecarChoice
		want    []int
	}{
		{nil, nil},
		{[]SidecarChoice{with, with}, []int{0, 1}},
		{[]SidecarChoice{plain, plain}, []int{0, 1}},
		{[]SidecarChoice{with, plain, with, plain, plain}, []int{1, 0, 2, 3, 4}},
	} {
		if got := scheduleScopes(tc.choices); !slices.Equal(got, tc.want) {
			t.Errorf("scheduleScopes(%v) = %v, want %v", tc.choices, got, tc.want)
		}
	}
}
