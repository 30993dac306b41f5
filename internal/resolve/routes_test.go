package resolve

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// c40Mesh is docs/semantics/cases.md C40's world: three services with VIPs and HTTP ports
// 80 and 8080, a proxy in default and one in not-default, plus docs.
func c40Routes(t *testing.T, proxyNs string, docs ...string) map[string]*RouteConfig {
	t.Helper()
	base := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: not-default, labels: {istio-injection: enabled}}",
	}
	for _, s := range []struct{ name, ns, vip string }{{"known", "default", "2.0.0.0"}, {"alt-known", "default", "2.0.0.1"}, {"not-default", "not-default", "2.0.0.2"}} {
		base = append(base, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec: {clusterIP: %s, ports: [{port: 80, name: http}, {port: 8080, name: http-alt}]}", s.name, s.ns, s.vip))
	}
	base = append(base, "apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: "+proxyNs+"}\nspec: {containers: [{name: c}]}")
	m := mesh(t, "", append(base, docs...)...)
	v, ok := m.View(proxyNs, "client")
	if !ok {
		t.Fatal("no client proxy")
	}
	out := map[string]*RouteConfig{}
	for _, rc := range m.OutboundRoutes(v) {
		out[rc.Name] = rc
	}
	return out
}

// clusterFor returns the cluster of the first route of the vhost serving a
// domain, or "" when no vhost has it.
func clusterFor(rc *RouteConfig, domain string) string {
	if rc == nil {
		return ""
	}
	for _, vh := range rc.VirtualHosts {
		for _, d := range vh.Domains {
			if d == domain && vh.CatchAll == "" && len(vh.Routes) > 0 && len(vh.Routes[0].Clusters) > 0 {
				return vh.Routes[0].Clusters[0].Name()
			}
		}
	}
	return ""
}

func vhostNames(rc *RouteConfig) []string {
	var out []string
	for _, vh := range rc.VirtualHosts {
		out = append(out, vh.Name)
	}
	return out
}

const (
	known    = "known.default.svc.cluster.local"
	altKnown = "alt-known.default.svc.cluster.local"
)

func vsTo(ns, name, hosts, dest string, extra ...string) string {
	meta := "name: " + name + ", namespace: " + ns
	if len(extra) > 0 {
		meta += ", " + extra[0]
	}
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {%s}\nspec: {hosts: [%s], http: [{route: [{destination: {host: %s}}]}]}", meta, hosts, dest)
}

func TestC40SidecarRoutePrecedence(t *testing.T) {
	t.Run("a: a VirtualService redirects a known host", func(t *testing.T) {
		for _, vsNs := range []string{"default", "not-default", "arbitrary"} {
			for _, proxyNs := range []string{"default", "not-default"} {
				r := c40Routes(t, proxyNs, vsTo(vsNs, "vs", known, altKnown))
				if got := clusterFor(r["80"], known); got != "outbound|80||"+altKnown {
					t.Errorf("VS in %s, proxy in %s: route 80 %s", vsNs, proxyNs, got)
				}
				if got := clusterFor(r["8080"], known); got != "outbound|8080||"+altKnown {
					t.Errorf("VS in %s, proxy in %s: route 8080 %s", vsNs, proxyNs, got)
				}
			}
		}
	})
	t.Run("b: unknown host only on port 80", func(t *testing.T) {
		const foo = "foo.default.svc.cluster.local"
		r := c40Routes(t, "default", vsTo("default", "vs", foo, foo))
		if got := clusterFor(r["80"], foo); got != "outbound|80||"+foo {
			t.Errorf("route 80: %q", got)
		}
		if got := clusterFor(r["8080"], foo); got != "" {
			t.Errorf("route 8080 should have no vhost for %s, got %q", foo, got)
		}
	})
	t.Run("c: oldest public VirtualService wins", func(t *testing.T) {
		r := c40Routes(t, "not-default",
			vsTo("not-default", "c", known, "not-default.example.com", "creationTimestamp: '2024-01-03T00:00:00Z'"),
			vsTo("default", "b", known, "default.example.com", "creationTimestamp: '2024-01-02T00:00:00Z'"),
			vsTo("arbitrary", "a", known, "arbitrary.example.com", "creationTimestamp: '2024-01-01T00:00:00Z'"))
		if got := clusterFor(r["80"], known); got != "outbound|80||arbitrary.example.com" {
			t.Errorf("route 80: %q", got)
		}
		if got := clusterFor(r["8080"], known); got != "outbound|8080||arbitrary.example.com" {
			t.Errorf("route 8080: %q", got)
		}
	})
	t.Run("d: wildcard host matching no service", func(t *testing.T) {
		r := c40Routes(t, "default", vsTo("default", "vs", "'*.unknown.example.com'", "arbitrary.example.com"))
		if got := clusterFor(r["80"], known); got != "outbound|80||"+known {
			t.Errorf("known: %q", got)
		}
		if got := clusterFor(r["80"], "*.unknown.example.com"); got != "outbound|80||arbitrary.example.com" {
			t.Errorf("wildcard vhost: %q", got)
		}
	})
	t.Run("e: wildcard host owns the services it matches", func(t *testing.T) {
		r := c40Routes(t, "default", vsTo("default", "vs", "'*.cluster.local'", "arbitrary.example.com"),
			sidecarYAML("default", "default", "{egress: [{hosts: ['*/*.cluster.local']}]}"))
		for _, h := range []string{known, altKnown} {
			if got := clusterFor(r["80"], h); got != "outbound|80||arbitrary.example.com" {
				t.Errorf("%s: %q", h, got)
			}
		}
		if strings.Contains(strings.Join(vhostNames(r["80"]), ","), "*.cluster.local") {
			t.Errorf("no vhost should be named after the wildcard: %v", vhostNames(r["80"]))
		}
	})
	t.Run("f: exact host beats wildcard, either age order", func(t *testing.T) {
		for _, order := range [][2]string{{"2024-01-01", "2024-01-02"}, {"2024-01-02", "2024-01-01"}} {
			for _, sidecar := range []string{"", sidecarYAML("default", "default", "{egress: [{hosts: ['default/"+known+"', 'default/"+altKnown+"']}]}")} {
				docs := []string{
					vsTo("default", "wild", "'*.cluster.local'", "wild.example.com", "creationTimestamp: '"+order[0]+"T00:00:00Z'"),
					vsTo("default", "exact", known, "explicit.example.com", "creationTimestamp: '"+order[1]+"T00:00:00Z'"),
				}
				if sidecar != "" {
					docs = append(docs, sidecar)
				}
				r := c40Routes(t, "default", docs...)
				if got := clusterFor(r["80"], known); got != "outbound|80||explicit.example.com" {
					t.Errorf("order %v sidecar %v: known %q", order, sidecar != "", got)
				}
				if got := clusterFor(r["80"], altKnown); got != "outbound|80||wild.example.com" {
					t.Errorf("order %v sidecar %v: alt-known %q", order, sidecar != "", got)
				}
			}
		}
	})
	t.Run("g: wildcard VirtualService in a namespace the Sidecar does not import", func(t *testing.T) {
		r := c40Routes(t, "default",
			vsTo("not-default", "wild", "'*.cluster.local'", "wild.example.com"),
			vsTo("default", "exact", known, "explicit.example.com"),
			sidecarYAML("default", "default", "{egress: [{hosts: ['default/"+known+"', 'default/"+altKnown+"']}]}"))
		if got := clusterFor(r["80"], altKnown); got != "outbound|80||"+altKnown {
			t.Errorf("alt-known should keep its default route, got %q", got)
		}
	})
	t.Run("h: wildcard and exact hosts outside the cluster", func(t *testing.T) {
		r := c40Routes(t, "default", vsTo("default", "wild", "'*.tld'", "wild.example.com"), vsTo("default", "exact", "example.tld", "explicit.example.com"))
		if got := clusterFor(r["80"], known); got != "outbound|80||"+known {
			t.Errorf("known: %q", got)
		}
		if got := clusterFor(r["80"], "*.tld"); got != "outbound|80||wild.example.com" {
			t.Errorf("*.tld: %q", got)
		}
	})
	t.Run("i: exact host imported through a wildcard egress host", func(t *testing.T) {
		const arb = "arbitrary.svc.cluster.local"
		r := c40Routes(t, "default", vsTo("default", "vs", arb, arb), sidecarYAML("default", "default", "{egress: [{hosts: ['*/*.cluster.local']}]}"))
		if got := clusterFor(r["80"], arb); got != "outbound|80||"+arb {
			t.Errorf("%q", got)
		}
	})
	t.Run("j: wildcard VirtualService imported by an exact egress host", func(t *testing.T) {
		r := c40Routes(t, "default", vsTo("default", "vs", "'*.cluster.local'", "arbitrary.example.com"), sidecarYAML("default", "default", "{egress: [{hosts: ['*/"+known+"']}]}"))
		if got := clusterFor(r["80"], known); got != "outbound|80||arbitrary.example.com" {
			t.Errorf("known: %q", got)
		}
		if strings.Contains(strings.Join(vhostNames(r["80"]), ","), "*.cluster.local") {
			t.Errorf("no wildcard vhost expected: %v", vhostNames(r["80"]))
		}
	})
	t.Run("k: wildcard host kept as a plain host", func(t *testing.T) {
		r := c40Routes(t, "default", vsTo("default", "vs", "'*.example.org'", "arbitrary.example.com"),
			sidecarYAML("default", "default", "{egress: [{hosts: ['*/explicit.example.org', '*/"+altKnown+"']}]}"))
		if got := clusterFor(r["80"], known); got != "" {
			t.Errorf("known is not imported, got %q", got)
		}
		if got := clusterFor(r["80"], altKnown); got != "outbound|80||"+altKnown {
			t.Errorf("alt-known: %q", got)
		}
		if got := clusterFor(r["80"], "*.example.org"); got != "outbound|80||arbitrary.example.com" {
			t.Errorf("*.example.org: %q", got)
		}
	})
	t.Run("l: literal wildcard vhost when no matching service is imported", func(t *testing.T) {
		r := c40Routes(t, "not-default",
			sidecarYAML("not-default", "default", "{egress: [{hosts: ['not-default/*.default.svc.cluster.local', 'not-default/not-default.not-default.svc.cluster.local']}]}"),
			vsTo("not-default", "wild", "'*.default.svc.cluster.local'", "arbitrary.example.com"),
			vsTo("default", "exact", "explicit.default.svc.cluster.local", "explicit.example.com"))
		if got := clusterFor(r["80"], "*.default.svc.cluster.local"); got != "outbound|80||arbitrary.example.com" {
			t.Errorf("wildcard: %q", got)
		}
		if got := clusterFor(r["80"], "explicit.default.svc.cluster.local"); got != "" {
			t.Errorf("explicit should have no vhost: %q", got)
		}
		if got := clusterFor(r["80"], "not-default.not-default.svc.cluster.local"); got != "outbound|80||not-default.not-default.svc.cluster.local" {
			t.Errorf("not-default: %q", got)
		}
	})
	t.Run("m: older VirtualService in the same namespace wins", func(t *testing.T) {
		r := c40Routes(t, "default",
			vsTo("default", "new", known, "new.example.com", "creationTimestamp: '2024-01-02T00:00:00Z'"),
			vsTo("default", "old", known, "old.example.com", "creationTimestamp: '2024-01-01T00:00:00Z'"))
		if got := clusterFor(r["80"], known); got != "outbound|80||old.example.com" {
			t.Errorf("%q", got)
		}
	})
	t.Run("n: no services, no route 80", func(t *testing.T) {
		const foo = "foo.default.svc.cluster.local"
		r := c40Routes(t, "default", vsTo("default", "vs", foo, foo), sidecarYAML("default", "default", "{egress: [{hosts: ['*/"+foo+"']}]}"))
		if _, ok := r["80"]; ok {
			t.Errorf("route 80 should not exist: %v", vhostNames(r["80"]))
		}
	})
	t.Run("o: hosts the Sidecar does not import still get vhosts", func(t *testing.T) {
		r := c40Routes(t, "default", vsTo("default", "vs", known+", "+altKnown, "example.com"), sidecarYAML("default", "default", "{egress: [{hosts: ['*/"+known+"']}]}"))
		for _, h := range []string{known, altKnown} {
			if got := clusterFor(r["80"], h); got != "outbound|80||example.com" {
				t.Errorf("%s: %q", h, got)
			}
		}
	})
}

func TestC41DottedShortHostsAndDuplicateDomains(t *testing.T) {
	se := func(name, h string, ports ...int) string {
		if len(ports) == 0 {
			ports = []int{80}
		}
		var ps []string
		for _, p := range ports {
			ps = append(ps, fmt.Sprintf("{number: %d, name: http-%d, protocol: HTTP}", p, p))
		}
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: %s, namespace: default}\nspec: {hosts: [%s], ports: [%s], resolution: DNS, location: MESH_INTERNAL}", name, h, strings.Join(ps, ", "))
	}
	routes := func(t *testing.T, docs ...string) *RouteConfig {
		t.Helper()
		all := append([]string{
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {istio-injection: enabled}}",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: default}\nspec: {containers: [{name: c}]}",
		}, docs...)
		m := mesh(t, "", all...)
		v, _ := m.View("default", "client")
		for _, rc := range m.OutboundRoutes(v) {
			if rc.Name == "80" {
				return rc
			}
		}
		t.Fatal("no route 80")
		return nil
	}
	domains := func(rc *RouteConfig) map[string][]string {
		out := map[string][]string{}
		for _, vh := range rc.VirtualHosts {
			out[vh.Name] = vh.Domains
		}
		return out
	}
	t.Run("a", func(t *testing.T) {
		for _, order := range [][]string{{se("a", "test.local"), se("b", "test")}, {se("b", "test"), se("a", "test.local")}} {
			got := domains(routes(t, order...))
			want := map[string][]string{"test.local:80": {"test.local", "test.local."}, "test:80": {"test", "test."}, "allow_any": {"*"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("domains %v, want %v", got, want)
			}
		}
	})
	t.Run("b", func(t *testing.T) {
		got := domains(routes(t, se("a", "test.default.svc.cluster.local"), se("b", "test")))
		const fqdn = "test.default.svc.cluster.local"
		if want := []string{fqdn, fqdn + ".", "test.default.svc", "test.default"}; !reflect.DeepEqual(got[fqdn+":80"], want) {
			t.Errorf("fqdn domains %v, want %v", got[fqdn+":80"], want)
		}
		if want := []string{"test", "test."}; !reflect.DeepEqual(got["test:80"], want) {
			t.Errorf("test domains %v", got["test:80"])
		}
	})
	t.Run("c", func(t *testing.T) {
		const fqdn = "test-duplicate-domains.default.svc.cluster.local"
		vs := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: default}\nspec: {hosts: [" + fqdn + ", test-duplicate-domains.default], http: [{route: [{destination: {host: test-duplicate-domains.default}}]}]}"
		vs2 := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs2, namespace: default, creationTimestamp: '2030-01-01T00:00:00Z'}\nspec: {hosts: [Test-duplicate-domains.default.svc.cluster.local], http: [{route: [{destination: {host: other}}]}]}"
		for _, docs := range [][]string{{se("a", fqdn), vs}, {se("a", fqdn), vs, vs2}} {
			rc := routes(t, docs...)
			got := domains(rc)
			if want := []string{fqdn, fqdn + ".", "test-duplicate-domains", "test-duplicate-domains.default.svc"}; !reflect.DeepEqual(got[fqdn+":80"], want) {
				t.Errorf("fqdn domains %v, want %v", got[fqdn+":80"], want)
			}
			if want := []string{"test-duplicate-domains.default"}; !reflect.DeepEqual(got["test-duplicate-domains.default:80"], want) {
				t.Errorf("plain domains %v", got["test-duplicate-domains.default:80"])
			}
			for _, d := range []string{fqdn, "test-duplicate-domains.default"} {
				if c := clusterFor(rc, d); c != "outbound|80||test-duplicate-domains.default" {
					t.Errorf("%s → %s", d, c)
				}
			}
		}
	})
	t.Run("d", func(t *testing.T) {
		const fqdn = "test.default.svc.cluster.local"
		vs := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: default}\nspec: {hosts: [test.default], http: [{route: [{destination: {host: test.default}}]}]}"
		rc := routes(t, se("a", fqdn), vs)
		got := domains(rc)
		if want := []string{fqdn, fqdn + ".", "test", "test.default.svc"}; !reflect.DeepEqual(got[fqdn+":80"], want) {
			t.Errorf("fqdn domains %v, want %v", got[fqdn+":80"], want)
		}
		if c := clusterFor(rc, fqdn); c != "outbound|80||"+fqdn {
			t.Errorf("service route %s", c)
		}
		if c := clusterFor(rc, "test.default"); c != "outbound|80||test.default" {
			t.Errorf("test.default route %s", c)
		}
	})
	t.Run("e", func(t *testing.T) {
		got := vhostNames(routes(t, se("a", "test.local", 70, 80, 90)))
		if want := []string{"test.local:80", "allow_any"}; !reflect.DeepEqual(got, want) {
			t.Errorf("vhosts %v", got)
		}
	})
}

// TestChosenVirtualServices pins docs/semantics/virtual-services.md §6.3 rule 3's choice of the one
// VirtualService that owns a service: an exact host first (the first such
// VirtualService in precedence order), else the most specific wildcard,
// the first on ties.
func TestChosenVirtualServices(t *testing.T) {
	vs := func(name string, hosts ...host.Name) *VirtualService {
		return &VirtualService{Object: &model.VirtualService{ObjectMeta: model.ObjectMeta{Name: name}}, Hosts: hosts}
	}
	wideFirst := vs("wide-first", "*.com")
	wideSecond := vs("wide-second", "*.COM")
	narrow := vs("narrow", "*.example.com")
	exactFirst := vs("exact-first", "api.example.com")
	exactSecond := vs("exact-second", "API.example.com", "web.example.com")
	vss := []*VirtualService{wideFirst, wideSecond, narrow, exactFirst, exactSecond}
	services := []*Service{{Host: "api.example.com"}, {Host: "web.example.com"}, {Host: "db.example.com"}, {Host: "x.org"}, {Host: "a.b.com"}}
	got := chosenVirtualServices(vss, services)
	want := map[host.Name]string{
		"api.example.com": "exact-first",  // exact beats every wildcard before it; first of two exact
		"web.example.com": "exact-second", // the only exact host
		"db.example.com":  "narrow",       // the most specific wildcard
		"a.b.com":         "wide-first",   // equal wildcards (case aside): the first
	}
	if len(got) != len(want) {
		t.Errorf("chose for %d services, want %d (x.org has none)", len(got), len(want))
	}
	for h, name := range want {
		if got[h] == nil || got[h].Object.Name != name {
			t.Errorf("%s: chose %v, want %s", h, got[h], name)
		}
	}
}

// TestMethodMatchIsNotCatchAll: a match with prefix "/" that also names a
// method (or authority, scheme, headers, query parameters or
// withoutHeaders) is no catch-all, alone or beside other match entries:
// later routes stay, as istiod translates them. Only a prefix "/", a regex
// ".*" or a uri without a match type, with nothing else, ends the list.
func TestMethodMatchIsNotCatchAll(t *testing.T) {
	for _, tc := range []struct {
		name, match string
		want        []string
	}{
		{"method", `[{method: {exact: GET}}]`, []string{"first", "last"}},
		{"method and prefix", `[{uri: {prefix: /}, method: {exact: GET}}]`, []string{"first", "last"}},
		{"method among entries", `[{uri: {prefix: /a}}, {method: {exact: GET}}]`, []string{"first", "first", "last"}},
		{"authority", `[{authority: {exact: a.example}}]`, []string{"first", "last"}},
		{"scheme", `[{scheme: {exact: https}}]`, []string{"first", "last"}},
		{"without headers", `[{withoutHeaders: {x-a: {}}}]`, []string{"first", "last"}},
		{"query", `[{queryParams: {a: {exact: b}}}]`, []string{"first", "last"}},
		{"exact root", `[{uri: {exact: /}}]`, []string{"first", "last"}},
		{"prefix root", `[{uri: {prefix: /}}]`, []string{"first"}},
		{"regex all", `[{uri: {regex: ".*"}}]`, []string{"first"}},
		{"empty uri", `[{uri: {}}]`, []string{"first"}},
		{"empty match", `[{name: any}]`, []string{"first.any"}},
		{"catch-all after method", `[{method: {exact: GET}}, {uri: {prefix: /}}]`, []string{"first", "first"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcs := c40Routes(t, "default", `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: known, namespace: default}
spec:
  hosts: [known]
  http:
  - name: first
    match: `+tc.match+`
    route: [{destination: {host: known}}]
  - name: last
    route: [{destination: {host: known}}]`)
			var got []string
			for _, vh := range rcs["80"].VirtualHosts {
				if vh.Name == "known.default.svc.cluster.local:80" {
					for _, r := range vh.Routes {
						got = append(got, r.Name)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("routes = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRoutesCarryClusterIDs: a route's clusters and mirrors are
// ClusterIDs, spelled only by Name; the allow_any route goes to the
// Sidecar's egress proxy or else through.
func TestRoutesCarryClusterIDs(t *testing.T) {
	vs := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: default}\n" +
		"spec: {hosts: [known], http: [{mirror: {host: alt-known}, route: [{destination: {host: alt-known, subset: v2}, weight: 90}, {destination: {host: known, port: {number: 8080}}, weight: 10}]}]}"
	r := c40Routes(t, "default", vs)
	var got *HTTPRoute
	for _, vh := range r["80"].VirtualHosts {
		if slices.Contains(vh.Domains, known) {
			got = vh.Routes[0]
		}
	}
	if got == nil {
		t.Fatal("no route for known")
	}
	want := []WeightedCluster{{ID: ClusterID{Port: 80, Subset: "v2", Host: altKnown}, Weight: 90}, {ID: ClusterID{Port: 8080, Host: known}, Weight: 10}}
	if !slices.Equal(got.Clusters, want) || got.Clusters[0].Name() != "outbound|80|v2|"+altKnown {
		t.Errorf("clusters %v, want %v", got.Clusters, want)
	}
	for _, id := range got.Mirrors {
		if id != (ClusterID{Port: 80, Host: altKnown}) {
			t.Errorf("mirror %v", id)
		}
	}

	egress := "apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: default}\n" +
		"spec: {outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: egress.istio-system.svc.cluster.local, subset: out, port: {number: 443}}}}"
	for _, tc := range []struct {
		docs []string
		want WeightedCluster
		name string
	}{
		{nil, WeightedCluster{Passthrough: true, Weight: 100}, PassthroughCluster},
		{[]string{egress}, WeightedCluster{ID: ClusterID{Port: 443, Subset: "out", Host: "egress.istio-system.svc.cluster.local"}, Weight: 100}, "outbound|443|out|egress.istio-system.svc.cluster.local"},
	} {
		m := mesh(t, "", append([]string{"apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {istio-injection: enabled}}",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: default}\nspec: {containers: [{name: c}]}"}, tc.docs...)...)
		v, ok := m.View("default", "client")
		if !ok {
			t.Fatal("no client proxy")
		}
		if got := v.Scope.Unmatched(); got != tc.want || got.Name() != tc.name {
			t.Errorf("unmatched %v (%s), want %v (%s)", got, got.Name(), tc.want, tc.name)
		}
	}
}
