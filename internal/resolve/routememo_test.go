package resolve

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRouteMemoIsSound: every sidecar's route configurations built with
// the mesh's route memo equal those built without it, on random meshes
// whose scopes see routes differently: VirtualServices with sourceLabels,
// sourceNamespace, gateway and port matches, exported to some namespaces
// only, wildcard and plain hosts, mesh routes generated from the Gateway
// API; Sidecars importing other namespaces, listening on one port,
// blocking or proxying unmatched traffic; services exported to some
// namespaces, aliased by ExternalName services, headless, dual-stack;
// proxies of either IP family or both. Proxies are built in a random
// order, so that any of them may be the one whose pieces the others
// take.
func TestRouteMemoIsSound(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	shared, total := 0, 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 0x726f757465))
		meshYAML, docs := randomRouteMesh(r)
		m := mesh(t, meshYAML, docs...)
		s, n := checkRouteMemo(t, fmt.Sprintf("seed %d", seed), m, r)
		shared, total = shared+s, total+n
	}
	// The memo must serve something, or the test proves nothing.
	if shared == 0 {
		t.Errorf("no virtual host shared among %d", total)
	}
	t.Logf("%d of %d virtual hosts shared", shared, total)
}

// TestRouteMemoKeys: for each input of a route configuration, two
// sidecars that differ in it alone get what they would get without the
// memo, whichever is built first. A key that missed the input would serve
// one's pieces to the other.
func TestRouteMemoKeys(t *testing.T) {
	const base = `apiVersion: v1
kind: Namespace
metadata: {name: a, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Namespace
metadata: {name: b, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Namespace
metadata: {name: c, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: a}
spec: {clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1, "fd00::1"], ports: [{name: http, port: 80}, {name: http-alt, port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: b}
spec: {clusterIP: 10.0.0.2, ports: [{name: http, port: 80}]}`
	pod := func(ns, name, labels, ips string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, labels: {%s}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIPs: [%s]}", name, ns, labels, ips)
	}
	vs := func(ns, spec string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r, namespace: %s}\nspec: %s", ns, spec)
	}
	for _, tc := range []struct {
		input string
		docs  []string
	}{
		{"source labels", []string{
			vs("a", `{hosts: [web], http: [{match: [{sourceLabels: {v: "1"}}], route: [{destination: {host: api.b.svc.cluster.local}}]}, {route: [{destination: {host: web}}]}]}`),
			pod("a", "one", "v: '1'", "{ip: 10.1.0.1}"), pod("a", "two", "v: '2'", "{ip: 10.1.0.2}")}},
		{"source namespace", []string{
			vs("a", `{hosts: [web], http: [{match: [{sourceNamespace: b}], route: [{destination: {host: api.b.svc.cluster.local}}]}, {route: [{destination: {host: web}}]}]}`),
			pod("a", "one", "k: z", "{ip: 10.1.0.1}"), pod("b", "two", "k: z", "{ip: 10.1.0.2}")}},
		{"IP family", []string{
			pod("a", "one", "k: z", "{ip: 10.1.0.1}"), pod("a", "two", "k: z", `{ip: "fd00::2"}`)}},
		{"proxy namespace (short names)", []string{
			pod("a", "one", "k: z", "{ip: 10.1.0.1}"), pod("b", "two", "k: z", "{ip: 10.1.0.2}")}},
		{"destination service", []string{
			// A destination naming an ExternalName service goes to its
			// target where the scope sees it, b only.
			vs("a", `{hosts: [web], http: [{route: [{destination: {host: ext.b.svc.cluster.local}}]}]}`),
			"apiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: b, annotations: {networking.istio.io/exportTo: .}}\nspec: {type: ExternalName, externalName: api.b.svc.cluster.local, ports: [{name: http, port: 80}]}",
			pod("c", "one", "k: z", "{ip: 10.1.0.1}"), pod("b", "two", "k: z", "{ip: 10.1.0.2}")}},
		{"Sidecar egress hosts", []string{
			"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: s, namespace: b}\nspec: {egress: [{hosts: [./*]}]}",
			pod("c", "one", "k: z", "{ip: 10.1.0.1}"), pod("b", "two", "k: z", "{ip: 10.1.0.2}")}},
		{"unmatched traffic", []string{
			"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: s, namespace: b}\nspec: {outboundTrafficPolicy: {mode: REGISTRY_ONLY}}",
			pod("a", "one", "k: z", "{ip: 10.1.0.1}"), pod("b", "two", "k: z", "{ip: 10.1.0.2}")}},
		{"egress proxy", []string{
			"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: s, namespace: b}\nspec: {outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: web.a.svc.cluster.local, port: {number: 80}}}}",
			pod("a", "one", "k: z", "{ip: 10.1.0.1}"), pod("b", "two", "k: z", "{ip: 10.1.0.2}")}},
		{"alias names", []string{
			"apiVersion: v1\nkind: Service\nmetadata: {name: alias, namespace: b}\nspec: {type: ExternalName, externalName: web.a.svc.cluster.local}",
			// web's names in b include the alias's short ones.
			pod("b", "one", "k: z", "{ip: 10.1.0.1}"), pod("c", "two", "k: z", "{ip: 10.1.0.2}")}},
	} {
		docs := append([]string{base}, tc.docs...)
		for first := range 2 {
			m := mesh(t, "", docs...)
			fresh := *m
			fresh.routes = nil
			var views []*ProxyView
			for _, v := range m.Views {
				if v.Proxy.Type == SidecarProxy {
					views = append(views, v)
				}
			}
			if len(views) != 2 {
				t.Fatalf("%s: %d sidecars, want 2", tc.input, len(views))
			}
			// The two must differ, or the case tests nothing.
			if first == 0 && reflect.DeepEqual(fresh.OutboundRoutes(views[0]), fresh.OutboundRoutes(views[1])) {
				t.Errorf("%s: both sidecars get the same routes", tc.input)
			}
			for _, v := range []*ProxyView{views[first], views[1-first]} {
				got := append(m.OutboundRoutes(v), m.EgressRoutes(v)...)
				if d := routesDiff(got, append(fresh.OutboundRoutes(v), fresh.EgressRoutes(v)...)); d != "" {
					t.Errorf("%s: %s built after the other: %s", tc.input, v.Proxy.ID(), d)
				}
			}
		}
	}
}

// checkRouteMemo builds every sidecar's routes of m with the memo, in an
// order r picks, and without, and reports differences. It returns how
// many virtual hosts another sidecar's routes hold too, and how many
// there are.
func checkRouteMemo(t *testing.T, name string, m *Mesh, r *rand.Rand) (shared, total int) {
	t.Helper()
	fresh := *m
	fresh.routes = nil
	seen := map[*VirtualHost]bool{}
	for _, i := range r.Perm(len(m.Views)) {
		v := m.Views[i]
		if v.Proxy.Type != SidecarProxy {
			continue
		}
		got := append(m.OutboundRoutes(v), m.EgressRoutes(v)...)
		want := append(fresh.OutboundRoutes(v), fresh.EgressRoutes(v)...)
		if d := routesDiff(got, want); d != "" {
			t.Errorf("%s: proxy %s: %s", name, v.Proxy.ID(), d)
		}
		for _, rc := range got {
			for _, vh := range rc.VirtualHosts {
				if seen[vh] {
					shared++
				}
				seen[vh] = true
				total++
			}
		}
	}
	return shared, total
}

// routesDiff says how two lists of route configurations differ, "" when
// they do not.
func routesDiff(got, want []*RouteConfig) string {
	if reflect.DeepEqual(got, want) {
		return ""
	}
	g, w := describeRoutes(got), describeRoutes(want)
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: got %q, want %q", i, gl, wl)
		}
	}
	return "differ in a field the description leaves out"
}

func describeRoutes(rcs []*RouteConfig) []string {
	var out []string
	for _, rc := range rcs {
		out = append(out, fmt.Sprintf("config %s port %d", rc.Name, rc.Port))
		for _, vh := range rc.VirtualHosts {
			vs := ""
			if vh.VirtualService != nil {
				vs = vh.VirtualService.Namespace() + "/" + vh.VirtualService.Object.Name
			}
			out = append(out, fmt.Sprintf("  vhost %s %v vs=%s catchAll=%s", vh.Name, vh.Domains, vs, vh.CatchAll))
			for _, r := range vh.Routes {
				var cs []string
				for _, c := range r.Clusters {
					cs = append(cs, fmt.Sprintf("%s/%d", c.Name(), c.Weight))
				}
				var ms []string
				for _, id := range r.Mirrors {
					ms = append(ms, id.String())
				}
				slices.Sort(ms)
				out = append(out, fmt.Sprintf("    route %s match=%v -> %v mirrors %v", r.Name, r.Match != nil, cs, ms))
			}
		}
	}
	return out
}

// randomRouteMesh writes a mesh config and the objects of a mesh whose
// sidecars see routes differently (TestRouteMemoIsSound).
func randomRouteMesh(r *rand.Rand) (string, []string) {
	pick := func(options ...string) string { return options[r.IntN(len(options))] }
	chance := func(p float64) bool { return r.Float64() < p }
	var namespaces []string
	for i := range 2 + r.IntN(3) {
		namespaces = append(namespaces, fmt.Sprintf("n%d", i+1))
	}
	otherNs := func() string { return namespaces[r.IntN(len(namespaces))] }
	exportTo := func(ns string) string {
		switch r.IntN(5) {
		case 0:
			return `exportTo: ["."]`
		case 1:
			return fmt.Sprintf(`exportTo: [".", "%s"]`, otherNs())
		}
		return `exportTo: ["*"]`
	}
	var docs []string
	add := func(format string, args ...any) { docs = append(docs, fmt.Sprintf(format, args...)) }
	type svc struct{ ns, name string }
	var services []svc
	ip := 0
	for _, ns := range namespaces {
		add("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {istio-injection: enabled}}", ns)
		for i := range 1 + r.IntN(3) {
			name := fmt.Sprintf("s%d", i+1)
			ip++
			var portList []string
			for _, p := range []string{"{name: http, port: 80}", "{name: http-web, port: 8080}", "{name: http-api, port: 9080}", "{name: tcp, port: 5000}"} {
				if chance(0.5) {
					portList = append(portList, p)
				}
			}
			if len(portList) == 0 {
				portList = []string{"{name: http, port: 80}"}
			}
			addresses := fmt.Sprintf("clusterIP: 10.0.%d.%d", ip/200, ip%200+1)
			switch r.IntN(5) {
			case 0:
				addresses = "clusterIP: None"
			case 1:
				addresses = fmt.Sprintf(`clusterIP: 10.0.%d.%d, clusterIPs: [10.0.%d.%d, "fd00::%d"]`, ip/200, ip%200+1, ip/200, ip%200+1, ip)
			}
			annotations := ""
			if chance(0.3) {
				annotations = fmt.Sprintf(", annotations: {networking.istio.io/exportTo: %q}", pick(".", otherNs(), "."+","+otherNs()))
			}
			add("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s%s}\nspec: {%s, selector: {app: %s}, ports: [%s]}",
				name, ns, annotations, addresses, name, strings.Join(portList, ", "))
			services = append(services, svc{ns, name})
		}
		for i := range 1 + r.IntN(3) {
			ip++
			ips := fmt.Sprintf("{ip: 10.1.%d.%d}", ip/200, ip%200+1)
			switch r.IntN(4) {
			case 0:
				ips = fmt.Sprintf(`{ip: "fd01::%d"}`, ip)
			case 1:
				ips = fmt.Sprintf(`{ip: 10.1.%d.%d}, {ip: "fd01::%d"}`, ip/200, ip%200+1, ip)
			}
			add("apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: %s, labels: {app: s%d, version: %s, tier: %s}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIPs: [%s]}",
				i, ns, 1+r.IntN(3), pick("v1", "v2"), pick("front", "back"), ips)
		}
	}
	service := func() svc { return services[r.IntN(len(services))] }
	fqdn := func(s svc) string { return s.name + "." + s.ns + ".svc.cluster.local" }
	// ExternalName aliases, and names that are another service's short
	// name.
	destinations := []string{"api.example.com", "x.example.org"}
	if chance(0.5) {
		s, ns := service(), otherNs()
		add("apiVersion: v1\nkind: Service\nmetadata: {name: alias, namespace: %s%s}\nspec: {type: ExternalName, externalName: %s, ports: [{name: http, port: 80}]}",
			ns, pick("", ", annotations: {networking.istio.io/exportTo: .}"), fqdn(s))
		destinations = append(destinations, "alias."+ns+".svc.cluster.local")
	}
	if chance(0.4) {
		s := service()
		add("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: short, namespace: %s}\nspec: {hosts: [%s.%s], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}", otherNs(), s.name, s.ns)
	}
	add("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: api, namespace: %s}\nspec: {hosts: [api.example.com], %s, ports: [{number: 80, name: http, protocol: HTTP}, {number: 9080, name: http-alt, protocol: HTTP}], resolution: DNS}", otherNs(), exportTo(""))
	if chance(0.5) {
		add("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: wild, namespace: %s}\nspec: {hosts: [\"*.example.org\"], %s, ports: [{number: 80, name: http, protocol: HTTP}], resolution: NONE}", otherNs(), exportTo(""))
	}
	match := func(vsNs string) string {
		switch r.IntN(9) {
		case 0:
			return fmt.Sprintf("match: [{sourceLabels: {version: %s}}], ", pick("v1", "v2"))
		case 1:
			return fmt.Sprintf("match: [{sourceNamespace: %s}], ", otherNs())
		case 2:
			return fmt.Sprintf("match: [{sourceLabels: {tier: front}, sourceNamespace: %s}, {uri: {prefix: /b}}], ", otherNs())
		case 3:
			return fmt.Sprintf("match: [{port: %s}], ", pick("80", "8080", "9080"))
		case 4:
			return "match: [{gateways: [mesh], sourceLabels: {tier: back}}, {uri: {prefix: /}}], "
		case 5:
			return "match: [{uri: {prefix: /a}}, {gateways: [istio-system/gw]}], "
		}
		return ""
	}
	destination := func(vsNs string) string {
		s := service()
		h := pick(append(destinations, fqdn(s))...)
		if s.ns == vsNs && chance(0.5) {
			h = s.name
		}
		d := "host: " + h
		if chance(0.3) {
			d += ", port: {number: " + pick("80", "8080", "9080") + "}"
		}
		if chance(0.3) {
			d += ", subset: " + pick("v1", "v2")
		}
		return "{" + d + "}"
	}
	for i := range 2 + r.IntN(5) {
		ns := otherNs()
		var hosts []string
		for range 1 + r.IntN(2) {
			s := service()
			// A service's short name as a plain host takes it from the
			// service's vhost where the VirtualService is seen.
			h := pick(fqdn(s), "*."+s.ns+".svc.cluster.local", "plain.example.com", s.name+"."+s.ns, "api.example.com", "*.example.org", "*")
			if s.ns == ns && chance(0.5) {
				h = s.name
			}
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		gateways := pick("", "gateways: [mesh], ", "gateways: [mesh, istio-system/gw], ")
		var routes []string
		for range 1 + r.IntN(3) {
			route := "{" + match(ns) + "route: [{destination: " + destination(ns) + "}"
			if chance(0.3) {
				route = "{" + match(ns) + "route: [{destination: " + destination(ns) + ", weight: 70}, {destination: " + destination(ns) + ", weight: 30}"
			}
			route += "]"
			if chance(0.2) {
				route += ", mirror: " + destination(ns)
			}
			routes = append(routes, route+"}")
		}
		add("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs%d, namespace: %s}\nspec: {hosts: [%q], %s%s, http: [%s]}",
			i, ns, strings.Join(hosts, `", "`), gateways, exportTo(ns), strings.Join(routes, ", "))
	}
	// A mesh route as the Gateway API conversion writes it.
	if chance(0.5) {
		s := service()
		add("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: mesh-route, namespace: %s, annotations: {internal.istio.io/route-semantics: gateway}}\nspec: {hosts: [%s], gateways: [mesh], http: [{name: r, route: [{destination: {host: %s, port: {number: 80}}}]}]}",
			otherNs(), fqdn(s), fqdn(service()))
	}
	for _, ns := range namespaces {
		switch r.IntN(6) {
		case 0:
			add("apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: %s}\nspec: {egress: [{hosts: [\"./*\", \"%s/*\", \"*/api.example.com\"]}]}", ns, otherNs())
		case 1:
			add("apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: %s}\nspec: {egress: [{port: {number: 9080, protocol: HTTP, name: http}, hosts: [\"%s/*\"]}, {hosts: [\"*/*\"]}]}", ns, otherNs())
		case 2:
			add("apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: %s}\nspec: {outboundTrafficPolicy: {mode: %s}}", ns, pick("REGISTRY_ONLY", "ALLOW_ANY"))
		case 3:
			add("apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: front, namespace: %s}\nspec: {workloadSelector: {labels: {tier: front}}, egress: [{hosts: [\"./*\"]}], outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: api.example.com, port: {number: 80}}}}", ns)
		}
	}
	meshYAML := ""
	if chance(0.3) {
		meshYAML = "outboundTrafficPolicy: {mode: REGISTRY_ONLY}"
	}
	return meshYAML, docs
}
