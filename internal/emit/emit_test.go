package emit

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	caresv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/network/dns_resolver/cares/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// compile loads YAML documents, resolves them and builds one proxy.
func compile(t *testing.T, opts Options, proxy string, docs ...string) *Config {
	t.Helper()
	m := resolveDocs(t, docs...)
	ns, name, _ := strings.Cut(proxy, "/")
	v, ok := m.View(ns, name)
	if !ok {
		t.Fatalf("no proxy %s", proxy)
	}
	cfg := New(m, opts).Build(v)
	if len(cfg.Problems) > 0 {
		t.Fatalf("problems: %v", cfg.Problems)
	}
	return cfg
}

func resolveDocs(t *testing.T, docs ...string) *resolve.Mesh {
	t.Helper()
	return resolvetest.Mesh(t, docs...)
}

const (
	injectedNs = `apiVersion: v1
kind: Namespace
metadata: {name: default, labels: {istio-injection: enabled}}`
	clientPod = `apiVersion: v1
kind: Pod
metadata: {name: client, namespace: default, labels: {app: client}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 1.1.1.1}`
)

func clusterNamed(cfg *Config, name string) *clusterv3.Cluster {
	for _, c := range cfg.Clusters {
		if c.GetName() == name {
			return c
		}
	}
	return nil
}

func listenerNamed(cfg *Config, name string) *listenerv3.Listener {
	for _, l := range cfg.Listeners {
		if l.GetName() == name {
			return l
		}
	}
	return nil
}

func routeNamed(cfg *Config, name string) *routev3.RouteConfiguration {
	for _, r := range cfg.Routes {
		if r.GetName() == name {
			return r
		}
	}
	return nil
}

func names[T interface{ GetName() string }](xs []T) []string {
	var out []string
	for _, x := range xs {
		out = append(out, x.GetName())
	}
	return out
}

// TestC44SubsetClusters: docs/semantics/cases.md C44.
func TestC44SubsetClusters(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: foo, namespace: default}
spec: {clusterIP: 10.0.0.5, selector: {app: foo}, ports: [{name: http, port: 8080}]}`,
		`apiVersion: v1
kind: Pod
metadata: {name: foo-1, namespace: default, labels: {app: foo, version: v1}}
spec: {containers: [{name: app, image: x, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.1.0.1}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: foo, namespace: default}
spec:
  host: foo
  subsets:
  - {name: foobar, labels: {version: v1}}
  - name: through
    labels: {version: v1}
    trafficPolicy: {loadBalancer: {simple: PASSTHROUGH}}`,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: default}
spec:
  hosts: [foo.example.com]
  ports: [{number: 8080, name: http, protocol: HTTP}]
  resolution: DNS
  endpoints: [{address: foo.example.com, labels: {version: v1}}]`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ext, namespace: default}
spec:
  host: foo.example.com
  subsets:
  - {name: v1}
  - {name: v9, labels: {version: v9}}`,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: rr, namespace: default}
spec:
  hosts: [rr.example.com]
  ports: [{number: 8080, name: http, protocol: HTTP}]
  resolution: DNS_ROUND_ROBIN
  endpoints: [{address: rr.example.com}]`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: rr, namespace: default}
spec: {host: rr.example.com, subsets: [{name: v1}]}`,
	}
	cfg := compile(t, Options{Format: XDS}, "default/client", docs...)
	tests := []struct {
		cluster string
		typ     clusterv3.Cluster_DiscoveryType
	}{
		{"outbound|8080|foobar|foo.default.svc.cluster.local", clusterv3.Cluster_EDS},
		{"outbound|8080|through|foo.default.svc.cluster.local", clusterv3.Cluster_ORIGINAL_DST},
		{"outbound|8080|v1|foo.example.com", clusterv3.Cluster_STRICT_DNS},
		{"outbound|8080|v1|rr.example.com", clusterv3.Cluster_LOGICAL_DNS},
	}
	for _, tt := range tests {
		c := clusterNamed(cfg, tt.cluster)
		if c == nil {
			t.Errorf("no cluster %s; have %v", tt.cluster, names(cfg.Clusters))
			continue
		}
		if c.GetType() != tt.typ {
			t.Errorf("%s: type %v, want %v", tt.cluster, c.GetType(), tt.typ)
		}
	}
	if c := clusterNamed(cfg, "outbound|8080|foobar|foo.default.svc.cluster.local"); c.GetEdsClusterConfig().GetServiceName() != c.GetName() {
		t.Errorf("EDS service_name = %q, want the cluster name", c.GetEdsClusterConfig().GetServiceName())
	}
	if c := clusterNamed(cfg, "outbound|8080|v9|foo.example.com"); c != nil {
		t.Error("a DNS subset whose labels match no endpoint must not be emitted")
	}
	if got := (resolve.ClusterID{Port: 8080, Subset: "foobar", Host: "foo.default.svc.cluster.local"}).SNI(); got != "outbound_.8080_.foobar_.foo.default.svc.cluster.local" {
		t.Errorf("sni-dnat name = %q", got)
	}
}

// TestC45ClusterTypes: docs/semantics/cases.md C45, and the default cluster's shape.
func TestC45ClusterTypes(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: eds, namespace: default}
spec: {clusterIP: 10.0.0.5, ports: [{name: http, port: 80}, {name: udp, port: 53, protocol: UDP}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: headless, namespace: default}
spec: {clusterIP: None, ports: [{name: tcp, port: 9000}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: alias, namespace: default}
spec: {type: ExternalName, externalName: eds.default.svc.cluster.local}`,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: nodns, namespace: default}
spec:
  hosts: [empty.example.com]
  ports: [{number: 443, name: tls, protocol: TLS}]
  workloadSelector: {labels: {app: nothing}}
  resolution: DNS`,
	}
	cfg := compile(t, Options{Format: XDS}, "default/client", docs...)
	eds := clusterNamed(cfg, "outbound|80||eds.default.svc.cluster.local")
	if eds == nil {
		t.Fatalf("no EDS cluster; have %v", names(cfg.Clusters))
	}
	if eds.GetType() != clusterv3.Cluster_EDS || eds.GetConnectTimeout().AsDuration().String() != "10s" ||
		eds.GetLbPolicy() != clusterv3.Cluster_LEAST_REQUEST || eds.GetAltStatName() != eds.GetName()+";" ||
		eds.GetCommonLbConfig().GetHealthyPanicThreshold().GetValue() != 0 {
		t.Errorf("default cluster shape: %v", eds)
	}
	th := eds.GetCircuitBreakers().GetThresholds()[0]
	for _, v := range []uint32{th.GetMaxConnections().GetValue(), th.GetMaxPendingRequests().GetValue(), th.GetMaxRequests().GetValue(), th.GetMaxRetries().GetValue()} {
		if v != 4294967295 {
			t.Errorf("circuit breaker threshold %d, want 4294967295", v)
		}
	}
	if c := clusterNamed(cfg, "outbound|9000||headless.default.svc.cluster.local"); c.GetType() != clusterv3.Cluster_ORIGINAL_DST || c.GetLbPolicy() != clusterv3.Cluster_CLUSTER_PROVIDED {
		t.Errorf("headless cluster: %v", c)
	}
	for _, absent := range []string{"outbound|53||eds.default.svc.cluster.local", "outbound|443||empty.example.com"} {
		if clusterNamed(cfg, absent) != nil {
			t.Errorf("cluster %s must not be emitted", absent)
		}
	}
	for _, c := range cfg.Clusters {
		if strings.Contains(c.GetName(), "alias.default") {
			t.Errorf("ExternalName service got cluster %s", c.GetName())
		}
	}
	for _, special := range []string{BlackHoleCluster, PassthroughCluster, InboundPassthroughCluster} {
		if clusterNamed(cfg, special) == nil {
			t.Errorf("no %s", special)
		}
	}
}

// TestC46ListenerConflicts: docs/semantics/cases.md C46.
func TestC46ListenerConflicts(t *testing.T) {
	svc := func(name, created, port, proto string) string {
		return `apiVersion: v1
kind: Service
metadata: {name: ` + name + `, namespace: default, creationTimestamp: "` + created + `"}
spec: {clusterIP: 1.2.3.4, ports: [{name: ` + proto + `, port: ` + port + `}]}`
	}
	t.Run("three TCP services on one VIP keep the oldest", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
			svc("b", "2020-01-02T00:00:00Z", "9000", "tcp"), svc("a", "2020-01-01T00:00:00Z", "9000", "tcp"), svc("c", "2020-01-03T00:00:00Z", "9000", "tcp"))
		l := listenerNamed(cfg, "1.2.3.4_9000")
		if l == nil || len(l.GetFilterChains()) != 1 {
			t.Fatalf("want one listener with one chain, got %v", l)
		}
		if got := tcpCluster(t, l.GetFilterChains()[0]); got != "outbound|9000||a.default.svc.cluster.local" {
			t.Errorf("chain goes to %s, want the oldest service a", got)
		}
	})
	t.Run("reserved ports", func(t *testing.T) {
		noVIP := func(name, port, proto string) string {
			return `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ` + name + `, namespace: default}
spec: {hosts: [` + name + `.example.com], ports: [{number: ` + port + `, name: p, protocol: ` + proto + `}], resolution: DNS, endpoints: [{address: ` + name + `.example.com}]}`
		}
		cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
			noVIP("status", "15021", "HTTP"), noVIP("outb", "15001", "HTTP"), noVIP("prom", "15090", "TCP"), noVIP("inb", "15006", "TCP"))
		for _, absent := range []string{"0.0.0.0_15021", "0.0.0.0_15001"} {
			if listenerNamed(cfg, absent) != nil {
				t.Errorf("HTTP service on a reserved port got listener %s", absent)
			}
		}
		for _, present := range []string{"0.0.0.0_15090", "0.0.0.0_15006"} {
			if listenerNamed(cfg, present) == nil {
				t.Errorf("TCP service lost listener %s; have %v", present, names(cfg.Listeners))
			}
		}
	})
	t.Run("HTTP after MySQL on one port is dropped", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
			`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: default, creationTimestamp: "2020-01-01T00:00:00Z"}
spec: {hosts: [db.example.com], ports: [{number: 3306, name: mysql, protocol: MySQL}], resolution: DNS}`,
			`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: web, namespace: default, creationTimestamp: "2020-01-02T00:00:00Z"}
spec: {hosts: [web.example.com], ports: [{number: 3306, name: http, protocol: HTTP}], resolution: DNS}`)
		for _, l := range cfg.Listeners {
			for _, fc := range l.GetFilterChains() {
				if fc.GetFilters()[0].GetName() == hcmName && strings.HasSuffix(l.GetName(), "_3306") {
					t.Errorf("listener %s has an HTTP chain beside MySQL", l.GetName())
				}
			}
		}
	})
}

func tcpCluster(t *testing.T, fc *listenerv3.FilterChain) string {
	t.Helper()
	var tp struct{ cluster string }
	a := fc.GetFilters()[0].GetTypedConfig()
	m, err := a.UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := m.(interface{ GetCluster() string }); ok {
		tp.cluster = g.GetCluster()
	}
	return tp.cluster
}

// TestC47HeadlessTCP: docs/semantics/cases.md C47, without and with the
// headless-chain flag.
func TestC47HeadlessTCP(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: mystatefulset, namespace: default}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: tcp, port: 8080}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: httpservice, namespace: default}
spec: {clusterIP: 10.96.1.1, ports: [{name: http, port: 8080}]}`,
	}
	for i, ip := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		docs = append(docs, `apiVersion: v1
kind: Pod
metadata: {name: db-`+string(rune('0'+i))+`, namespace: default, labels: {app: db}}
spec: {containers: [{name: db, image: x, ports: [{containerPort: 8080}]}]}
status: {podIP: `+ip+`}`)
	}
	cfg := compile(t, Options{Format: XDS}, "default/client", docs...)
	for _, want := range []string{"10.0.0.1_8080", "10.0.0.2_8080", "10.0.0.3_8080", "0.0.0.0_8080"} {
		if listenerNamed(cfg, want) == nil {
			t.Errorf("no listener %s; have %v", want, names(cfg.Listeners))
		}
	}

	// With the headless-chain flag: one listener on 8080, a /32 chain per
	// pod, HTTP still reached by the listener's default chain.
	cfg = compile(t, Options{Format: XDS, HeadlessCIDRChains: true}, "default/client", docs...)
	var on8080 []string
	for _, l := range cfg.Listeners {
		if l.GetAddress().GetSocketAddress().GetPortValue() == 8080 {
			on8080 = append(on8080, l.GetName())
		}
	}
	if !slices.Equal(on8080, []string{"0.0.0.0_8080"}) {
		t.Fatalf("listeners on 8080 = %v, want only 0.0.0.0_8080", on8080)
	}
	l := listenerNamed(cfg, "0.0.0.0_8080")
	var pods []string
	for _, fc := range l.GetFilterChains() {
		for _, r := range fc.GetFilterChainMatch().GetPrefixRanges() {
			if r.GetPrefixLen().GetValue() != 32 {
				t.Errorf("chain %s matches /%d, want /32", fc.GetName(), r.GetPrefixLen().GetValue())
			}
			pods = append(pods, r.GetAddressPrefix())
			if got := tcpCluster(t, fc); got != "outbound|8080||mystatefulset.default.svc.cluster.local" {
				t.Errorf("pod %s goes to %q", r.GetAddressPrefix(), got)
			}
		}
	}
	if !slices.Equal(pods, []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}) {
		t.Errorf("pod chains = %v, want one per pod", pods)
	}
	if l.GetDefaultFilterChain() == nil {
		t.Error("no default chain on the wildcard listener")
	}
}

// TestC48ExternalNameAlias: docs/semantics/cases.md C48, the part visible in
// clusters and routes: no cluster for the alias.
func TestC48ExternalNameAlias(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: alias, namespace: default}
spec: {type: ExternalName, externalName: concrete.default.svc.cluster.local}`,
		`apiVersion: v1
kind: Service
metadata: {name: concrete, namespace: default}
spec: {clusterIP: 1.2.3.4, ports: [{name: http, port: 80}, {name: auto, port: 81}, {name: tcp, port: 82}, {name: tls, port: 83}, {name: https, port: 84}]}`)
	for _, p := range []string{"80", "81", "82", "83", "84"} {
		if clusterNamed(cfg, "outbound|"+p+"||concrete.default.svc.cluster.local") == nil {
			t.Errorf("no cluster for concrete port %s", p)
		}
	}
	for _, c := range cfg.Clusters {
		if strings.Contains(c.GetName(), "alias.") {
			t.Errorf("alias got a cluster: %s", c.GetName())
		}
	}
}

// TestC43SidecarRoutes: docs/semantics/cases.md C43 (b) and (f), through the
// emitted route configurations.
func TestC43SidecarRoutes(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 8.8.8.8, ports: [{name: http, port: 8080}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: sniffed, namespace: default}
spec: {clusterIP: 9.9.9.9, ports: [{name: auto, port: 70}]}`)
	rc := routeNamed(cfg, "8080")
	if rc == nil {
		t.Fatalf("no route 8080; have %v", names(cfg.Routes))
	}
	if got := names(rc.GetVirtualHosts()); !slices.Equal(got, []string{"web.default.svc.cluster.local:8080", "allow_any"}) {
		t.Errorf("route 8080 vhosts = %v", got)
	}
	sniffed := routeNamed(cfg, "sniffed.default.svc.cluster.local:70")
	if sniffed == nil {
		t.Fatalf("no sniffed route; have %v", names(cfg.Routes))
	}
	if vh := sniffed.GetVirtualHosts(); len(vh) != 1 || !slices.Equal(vh[0].GetDomains(), []string{"*"}) {
		t.Errorf("sniffed route vhosts = %v, want one vhost with domains [*]", vh)
	}
}

// c43Mesh is docs/semantics/cases.md C43's registry, with ServiceEntries standing in
// for the model-level services (headless ones resolve NONE), and a
// Sidecar in not-default; mode is the mesh's outboundTrafficPolicy.
func c43Mesh(mode, sidecarMode string, extra ...string) []string {
	se := func(name, ns, export, addr, resolution, ports string) string {
		doc := "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: " + name + ", namespace: " + ns + "}\n" +
			"spec: {hosts: [" + name + "], exportTo: [\"" + export + "\"], resolution: " + resolution + ", ports: [" + ports + "]"
		if addr != "" {
			doc += ", addresses: [" + addr + "]"
		}
		return doc + "}"
	}
	policy := ""
	if sidecarMode != "" {
		policy = "\n  outboundTrafficPolicy: {mode: " + sidecarMode + "}"
	}
	docs := []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: not-default, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: client, namespace: not-default}\nspec: {containers: [{name: app, image: x}]}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    outboundTrafficPolicy: {mode: " + mode + "}",
		se("bookinfo.com", "default", "*", "", "NONE", "{number: 9999, name: a, protocol: HTTP}, {number: 70, name: b, protocol: HTTP}"),
		se("private.com", "default", ".", "", "STATIC", "{number: 80, name: a, protocol: HTTP}"),
		se("test.com", "not-default", "*", "8.8.8.8", "STATIC", "{number: 8080, name: a, protocol: HTTP}"),
		se("test-private.com", "not-default", ".", "9.9.9.9", "STATIC", "{number: 80, name: a, protocol: HTTP}, {number: 70, name: b, protocol: HTTP}"),
		se("test-private-2.com", "not-default", ".", "9.9.9.10", "STATIC", "{number: 60, name: a, protocol: HTTP}"),
		se("test-headless.com", "not-default", "*", "", "NONE", "{number: 8888, name: a, protocol: HTTP}"),
		`apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: not-default}
spec:
  egress:
  - {port: {number: 9000, protocol: HTTP, name: uds}, bind: 1.1.1.1, hosts: ["*/bookinfo.com"]}
  - {port: {number: 8080, protocol: HTTP, name: h}, hosts: [default/bookinfo.com, not-default/test.com]}
  - {hosts: ["*/*"]}` + policy,
	}
	return append(docs, extra...)
}

func vhostDomains(rc *routev3.RouteConfiguration) map[string][]string {
	out := map[string][]string{}
	for _, vh := range rc.GetVirtualHosts() {
		d := slices.Clone(vh.GetDomains())
		slices.Sort(d)
		out[vh.GetName()] = d
	}
	return out
}

// TestC43SidecarEgressRoutes: docs/semantics/cases.md C43 (a), (b), (d), (e), (g)
// and (h). The unix-socket and HTTP_PROXY egress listeners of (c) and (i)
// are not built yet.
func TestC43SidecarEgressRoutes(t *testing.T) {
	vs := func(name, host, created, dest string) string {
		return "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: " + name + ", namespace: not-default, creationTimestamp: \"" + created + "\"}\n" +
			"spec: {hosts: [" + host + "], http: [{name: " + name + ", route: [{destination: {host: " + dest + "}}]}]}"
	}
	cfg := compile(t, Options{Format: XDS}, "not-default/client", c43Mesh("REGISTRY_ONLY", "",
		vs("first", "test-private-2.com", "2020-01-01T00:00:00Z", "example.org"),
		vs("second", "test-private-2.com", "2020-01-02T00:00:00Z", "test.org"),
		vs("third", "test-private-3.com", "2020-01-03T00:00:00Z", "example.org"))...)
	if l := listenerNamed(cfg, "1.1.1.1_9000"); l != nil {
		t.Error("(a) listener 1.1.1.1_9000 built, though no imported service has port 9000")
	}
	want := map[string]map[string][]string{
		"8080": {"test.com:8080": {"8.8.8.8", "test.com", "test.com."}, "block_all": {"*"}},
		// On port 80 every VirtualService host without a service of that
		// port becomes a plain vhost, test-private-2.com's too (istiod's
		// registry for a route holds only the services with its port).
		"80": {"test-private.com:80": {"9.9.9.9", "test-private.com", "test-private.com."},
			"test-private-2.com:80": {"test-private-2.com"}, "test-private-3.com:80": {"test-private-3.com"}, "block_all": {"*"}},
		"70": {"test-private.com:70": {"9.9.9.9", "test-private.com", "test-private.com."},
			"bookinfo.com:70": {"bookinfo.com", "bookinfo.com."}, "block_all": {"*"}},
		"60": {"test-private-2.com:60": {"9.9.9.10", "test-private-2.com", "test-private-2.com."}, "block_all": {"*"}},
	}
	for name, vhosts := range want {
		rc := routeNamed(cfg, name)
		if rc == nil {
			t.Errorf("no route %s; have %v", name, names(cfg.Routes))
			continue
		}
		if got := vhostDomains(rc); !maps.EqualFunc(got, vhosts, slices.Equal) {
			t.Errorf("route %s vhosts = %v, want %v", name, got, vhosts)
		}
	}
	// (g) one vhost, with the routes of the older VirtualService.
	for _, vh := range routeNamed(cfg, "60").GetVirtualHosts() {
		if vh.GetName() == "test-private-2.com:60" && vh.GetRoutes()[0].GetName() != "first" {
			t.Errorf("(g) test-private-2.com:60 routes from %s, want the older VirtualService", vh.GetRoutes()[0].GetName())
		}
	}
	// (e) the Sidecar's policy overrides the mesh's.
	for _, tc := range []struct{ mesh, sidecar, want string }{
		{"ALLOW_ANY", "REGISTRY_ONLY", "block_all"},
		{"REGISTRY_ONLY", "ALLOW_ANY", "allow_any"},
	} {
		cfg := compile(t, Options{Format: XDS}, "not-default/client", c43Mesh(tc.mesh, tc.sidecar)...)
		vhs := routeNamed(cfg, "8080").GetVirtualHosts()
		if got := vhs[len(vhs)-1].GetName(); got != tc.want {
			t.Errorf("(e) mesh %s, Sidecar %s: catch-all %s, want %s", tc.mesh, tc.sidecar, got, tc.want)
		}
	}
}

// TestTCPVirtualServiceRoutes: a TCP port follows the first TCP route of
// its VirtualService that applies to the proxy: one destination, or a
// weighted split named after the VirtualService.
func TestTCPVirtualServiceRoutes(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 10.0.0.9, ports: [{name: tcp, port: 5432}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: db, namespace: default}
spec: {host: db, subsets: [{name: a, labels: {v: a}}, {name: b, labels: {v: b}}]}`,
	}
	vs := func(match string) string {
		return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: default}
spec:
  hosts: [db]
  tcp:
  - ` + match + `route:
    - {destination: {host: db, subset: a}, weight: 80}
    - {destination: {host: db, subset: b}, weight: 20}`
	}
	tests := []struct {
		name, match string
		want        []string
	}{
		{"split", "", []string{"outbound|5432|a|db.default.svc.cluster.local", "outbound|5432|b|db.default.svc.cluster.local"}},
		{"match for other workloads", "match: [{sourceLabels: {app: other}}]\n    ", []string{"outbound|5432||db.default.svc.cluster.local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := compile(t, Options{Format: XDS}, "default/client", append(docs, vs(tt.match))...)
			l := listenerNamed(cfg, "10.0.0.9_5432")
			if l == nil {
				t.Fatalf("no listener; have %v", names(cfg.Listeners))
			}
			m, err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalNew()
			if err != nil {
				t.Fatal(err)
			}
			tp := m.(*tcpv3.TcpProxy)
			got := []string{tp.GetCluster()}
			if wc := tp.GetWeightedClusters(); wc != nil {
				got = nil
				for _, c := range wc.GetClusters() {
					got = append(got, c.GetName())
				}
				if tp.GetStatPrefix() != "db.default" {
					t.Errorf("stat prefix %q, want db.default", tp.GetStatPrefix())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tcp_proxy goes to %v, want %v", got, tt.want)
			}
		})
	}
}

// TestGatewayTLSPassthrough: a PASSTHROUGH server forwards by SNI along
// the TLS routes of its VirtualServices, without terminating TLS.
func TestGatewayTLSPassthrough(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw",
		gatewayPod("ingressgateway"),
		`apiVersion: v1
kind: Service
metadata: {name: backend, namespace: default}
spec: {clusterIP: 10.0.0.7, ports: [{name: https, port: 443}]}`,
		`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers:
  - {port: {number: 443, name: tls, protocol: TLS}, hosts: ["*/backend.example.com"], tls: {mode: PASSTHROUGH}}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: backend, namespace: default}
spec:
  hosts: [backend.example.com]
  gateways: [istio-system/gw]
  tls:
  - match: [{sniHosts: [backend.example.com]}]
    route: [{destination: {host: backend.default.svc.cluster.local}}]`)
	l := listenerNamed(cfg, "0.0.0.0_443")
	if l == nil || len(l.GetFilterChains()) != 1 {
		t.Fatalf("want one listener 0.0.0.0_443 with one chain, got %v", names(cfg.Listeners))
	}
	fc := l.GetFilterChains()[0]
	if !slices.Equal(fc.GetFilterChainMatch().GetServerNames(), []string{"backend.example.com"}) || fc.GetTransportSocket() != nil {
		t.Errorf("chain = %v, want an SNI match and no TLS termination", fc)
	}
	if got := tcpCluster(t, fc); got != "outbound|443||backend.default.svc.cluster.local" {
		t.Errorf("chain goes to %s", got)
	}
	if l.GetListenerFilters()[0].GetName() != tlsInspector {
		t.Errorf("listener filters %v, want the TLS inspector", l.GetListenerFilters())
	}
}

// TestSidecarIngress: a Sidecar's ingress listeners replace the ports
// services target; the inbound cluster reaches the defaultEndpoint.
func TestSidecarIngress(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: default}
spec:
  ingress:
  - {port: {number: 9080, protocol: HTTP, name: web}, defaultEndpoint: "127.0.0.1:8080"}
  - {port: {number: 9090, protocol: TCP, name: sock}, defaultEndpoint: "unix:///var/run/app.sock"}`)
	web := clusterNamed(cfg, "inbound|9080||")
	if web.GetType() != clusterv3.Cluster_STATIC {
		t.Fatalf("inbound|9080|| = %v, want a STATIC cluster", web)
	}
	sa := web.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if sa.GetAddress() != "127.0.0.1" || sa.GetPortValue() != 8080 {
		t.Errorf("inbound|9080|| goes to %v, want 127.0.0.1:8080", sa)
	}
	pipe := clusterNamed(cfg, "inbound|9090||").GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetPipe()
	if pipe.GetPath() != "/var/run/app.sock" {
		t.Errorf("inbound|9090|| pipe = %v", pipe)
	}
	ports := map[uint32]bool{}
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		if p := fc.GetFilterChainMatch().GetDestinationPort(); p != nil {
			ports[p.GetValue()] = true
		}
	}
	if !ports[9080] || !ports[9090] {
		t.Errorf("virtualInbound chains cover ports %v, want 9080 and 9090", ports)
	}
}

// TestC43PortlessEgress: docs/semantics/cases.md C43 (c) and (i): a unix-socket
// egress listener and an HTTP_PROXY one each get one listener whose route
// configuration covers every port of their services, with "host:port"
// domains (bare ones too on port 80); a VirtualService's routes serve all
// HTTP ports of its host, its plain hosts port 80 only.
func TestC43PortlessEgress(t *testing.T) {
	docs := c43Mesh("REGISTRY_ONLY", "")
	docs[len(docs)-1] = `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: not-default}
spec:
  egress:
  - {port: {number: 0, protocol: HTTP, name: uds}, bind: "unix://foo/bar/baz", hosts: ["*/bookinfo.com"]}
  - {port: {number: 7443, protocol: HTTP_PROXY, name: proxy}, hosts: ["not-default/*"]}
  - {hosts: ["*/*"]}`
	cfg := compile(t, Options{Format: XDS}, "not-default/client", docs...)
	// Named as istiod names them: the socket with port 0, bound for real.
	uds := listenerNamed(cfg, "unix://foo/bar/baz_0")
	if uds.GetAddress().GetPipe().GetPath() != "foo/bar/baz" || uds.GetBindToPort() != nil || uds.GetMaxConnectionsToAcceptPerSocketEvent().GetValue() != 1 {
		t.Fatalf("unix listener = %v; have %v", uds, names(cfg.Listeners))
	}
	wantUDS := map[string][]string{
		"bookinfo.com:9999": {"bookinfo.com.:9999", "bookinfo.com:9999"},
		"bookinfo.com:70":   {"bookinfo.com.:70", "bookinfo.com:70"},
		"block_all":         {"*"},
	}
	if got := vhostDomains(routeNamed(cfg, "unix://foo/bar/baz")); !maps.EqualFunc(got, wantUDS, slices.Equal) {
		t.Errorf("(c) unix route vhosts = %v, want %v", got, wantUDS)
	}
	// An HTTP_PROXY port is captured like any other.
	if l := listenerNamed(cfg, "0.0.0.0_7443"); l == nil || l.GetBindToPort() == nil || l.GetBindToPort().GetValue() {
		t.Fatalf("HTTP_PROXY listener = %v; have %v", l, names(cfg.Listeners))
	}
	proxyRoute := vhostDomains(routeNamed(cfg, "7443"))
	if got := proxyRoute["test-private.com:80"]; !slices.Contains(got, "test-private.com") || !slices.Contains(got, "test-private.com:80") {
		t.Errorf("(i) port-80 vhost domains %v, want bare and :80 forms", got)
	}
	if got := proxyRoute["test-private.com:70"]; slices.Contains(got, "test-private.com") || !slices.Contains(got, "test-private.com:70") {
		t.Errorf("(i) port-70 vhost domains %v, want only :70 forms", got)
	}

	// A VirtualService's routes, translated for port 0: a destination
	// without a port on a two-port service gets port 0, as with istiod.
	cfg = compile(t, Options{Format: XDS}, "not-default/client", append(docs, `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vs, namespace: not-default}
spec:
  hosts: [test-private.com, plain.example.com]
  http:
  - name: r
    route: [{destination: {host: test-private.com}}]`)...)
	routes := map[string]string{}
	for _, vh := range routeNamed(cfg, "7443").GetVirtualHosts() {
		if r := vh.GetRoutes()[0]; r.GetName() == "r" {
			routes[vh.GetName()] = r.GetRoute().GetCluster()
		}
	}
	wantRoutes := map[string]string{
		"test-private.com:80":  "outbound|0||test-private.com",
		"test-private.com:70":  "outbound|0||test-private.com",
		"plain.example.com:80": "outbound|0||test-private.com",
	}
	if !maps.Equal(routes, wantRoutes) {
		t.Errorf("VirtualService routes on the HTTP_PROXY port = %v, want %v", routes, wantRoutes)
	}
}

// TestStaticEndpointsAndTLSModes: in a bootstrap, EDS clusters become
// STATIC with the manifests' endpoints, or STRICT_DNS on the service name
// with --endpoints dns; Istio mutual TLS comes from SDS, files, or not at
// all.
func TestStaticEndpointsAndTLSModes(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, selector: {app: web}, ports: [{name: http, port: 80, targetPort: 8080}]}`,
		`apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec: {containers: [{name: app, image: x, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.1.0.1}`,
	}
	const name = "outbound|80||web.default.svc.cluster.local"
	address := func(c *clusterv3.Cluster) string {
		sa := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
		return fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue())
	}
	inline := clusterNamed(compile(t, Options{}, "default/client", docs...), name)
	if inline.GetType() != clusterv3.Cluster_STATIC || address(inline) != "10.1.0.1:8080" {
		t.Errorf("inline: %v %s, want STATIC 10.1.0.1:8080", inline.GetType(), address(inline))
	}
	dns := clusterNamed(compile(t, Options{Endpoints: EndpointsDNS}, "default/client", docs...), name)
	if dns.GetType() != clusterv3.Cluster_STRICT_DNS || address(dns) != "web.default.svc.cluster.local:80" {
		t.Errorf("dns: %v %s, want STRICT_DNS web.default.svc.cluster.local:80", dns.GetType(), address(dns))
	}
	tlsOf := func(c *clusterv3.Cluster) *tlsv3.UpstreamTlsContext {
		for _, m := range c.GetTransportSocketMatches() {
			if m.GetName() == "tlsMode-istio" {
				ctx := &tlsv3.UpstreamTlsContext{}
				if err := m.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
					t.Fatal(err)
				}
				return ctx
			}
		}
		return nil
	}
	if ctx := tlsOf(inline); ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()[0].GetName() != "default" {
		t.Errorf("istio mode: %v, want SDS secret default", ctx)
	}
	files := tlsOf(clusterNamed(compile(t, Options{TLS: TLSFiles, CertDir: "/certs"}, "default/client", docs...), name))
	if got := files.GetCommonTlsContext().GetTlsCertificates()[0].GetCertificateChain().GetFilename(); got != "/certs/cert-chain.pem" {
		t.Errorf("files mode: certificate %q, want /certs/cert-chain.pem", got)
	}
	if off := clusterNamed(compile(t, Options{TLS: TLSOff}, "default/client", docs...), name); off.GetTransportSocketMatches() != nil || off.GetTransportSocket() != nil {
		t.Errorf("off mode: %v, want no TLS", off)
	}
}

// gatewayPod is a router pod istio-system/gw labelled istio=<istio>.
func gatewayPod(istio string) string {
	return `apiVersion: v1
kind: Pod
metadata: {name: gw, namespace: istio-system, labels: {istio: ` + istio + `, sidecar.istio.io/inject: "true"}}
spec: {containers: [{name: istio-proxy, image: x}]}
status: {podIP: 10.0.0.2}`
}

// A router of its own namespace gw, for the tests of gateway clusters and
// endpoints: the namespace, the Pod, and a Gateway with the given servers.
const (
	gwNamespace = `apiVersion: v1
kind: Namespace
metadata: {name: gw}`
	gwPod = `apiVersion: v1
kind: Pod
metadata: {name: gw-1, namespace: gw, labels: {istio: gw, sidecar.istio.io/inject: "true"}}
spec: {containers: [{name: istio-proxy, image: x}]}
status: {podIP: 10.2.0.1}`
)

// gwGateway is Gateway gw/gw selecting gwPod, with servers (YAML under
// spec, starting "  servers:").
func gwGateway(servers string) string {
	return `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: gw}
spec:
  selector: {istio: gw}
` + servers
}

// gatewayWorld is a router with servers of every kind that is not plain
// HTTP, and the services and VirtualServices behind them.
var gatewayWorld = []string{
	gatewayPod("eastwest"),
	`apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 10.0.0.7, ports: [{name: tcp, port: 5432}]}`,
	`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.8, ports: [{name: http, port: 80}, {name: udp, port: 53, protocol: UDP}]}`,
	`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: default}
spec: {hosts: [api.example.com], location: MESH_EXTERNAL, resolution: DNS, ports: [{number: 443, name: tls, protocol: TLS}]}`,
	`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec:
  host: web.default.svc.cluster.local
  trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}
  subsets: [{name: v1, labels: {version: v1}}]`,
	`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: eastwest, namespace: istio-system}
spec:
  selector: {istio: eastwest}
  servers:
  - {port: {number: 15443, name: tls, protocol: TLS}, hosts: ["*.local"], tls: {mode: AUTO_PASSTHROUGH}}
  - {port: {number: 31400, name: tcp, protocol: TCP}, hosts: ["*"]}
  - {port: {number: 9443, name: tls-db, protocol: TLS}, hosts: ["*/db.example.com"], tls: {mode: MUTUAL, credentialName: db-cert, subjectAltNames: [client.example.com], minProtocolVersion: TLSV1_3}}
  - {port: {number: 8443, name: https, protocol: HTTPS}, hosts: ["*/web.example.com"], tls: {mode: SIMPLE, credentialName: web-cert}}
  - {port: {number: 15012, name: tls-istio, protocol: TLS}, hosts: ["*"], tls: {mode: ISTIO_MUTUAL}}`,
	`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: default}
spec:
  hosts: ["*"]
  gateways: [istio-system/eastwest]
  tcp:
  - match: [{port: 9999}]
    route: [{destination: {host: web.default.svc.cluster.local, port: {number: 80}}}]
  - match: [{port: 31400, gateways: [istio-system/eastwest]}]
    route: [{destination: {host: db.default.svc.cluster.local}}]
  - route: [{destination: {host: web.default.svc.cluster.local, port: {number: 80}}}]`,
}

// TestGatewayServers: an AUTO_PASSTHROUGH server forwards by SNI to
// SNI-DNAT clusters of the mesh's own services; a TCP server forwards
// along the first TCP route whose match takes it; a TLS server terminates
// and then does the same; an HTTPS server says it asks no client
// certificate, as istiod does.
func TestGatewayServers(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw", gatewayWorld...)

	t.Run("sni-dnat clusters", func(t *testing.T) {
		var dnat []string
		for _, c := range cfg.Clusters {
			if strings.HasPrefix(c.GetName(), "outbound_.") {
				dnat = append(dnat, c.GetName())
				if c.GetTransportSocket() != nil {
					t.Errorf("%s has TLS; an SNI-DNAT cluster passes the client's through", c.GetName())
				}
			}
		}
		// No external service, no UDP port; subsets of the DestinationRule.
		want := []string{"outbound_.5432_._.db.default.svc.cluster.local", "outbound_.80_._.web.default.svc.cluster.local", "outbound_.80_.v1_.web.default.svc.cluster.local"}
		if !slices.Equal(dnat, want) {
			t.Errorf("SNI-DNAT clusters = %q, want %q", dnat, want)
		}
		if c := clusterNamed(cfg, "outbound|80||web.default.svc.cluster.local"); c.GetTransportSocket() == nil {
			t.Error("the ordinary cluster lost its ISTIO_MUTUAL TLS")
		}
		if !slices.ContainsFunc(cfg.Endpoints, func(e *endpointv3.ClusterLoadAssignment) bool {
			return e.GetClusterName() == "outbound_.80_.v1_.web.default.svc.cluster.local"
		}) {
			t.Error("no endpoints for an SNI-DNAT EDS cluster")
		}
	})

	t.Run("auto passthrough chains", func(t *testing.T) {
		l := listenerNamed(cfg, "0.0.0.0_15443")
		if l == nil {
			t.Fatalf("no listener 0.0.0.0_15443 in %v", names(cfg.Listeners))
		}
		var sni []string
		for _, fc := range l.GetFilterChains() {
			m := fc.GetFilterChainMatch()
			sni = append(sni, m.GetServerNames()...)
			if !slices.Equal(m.GetApplicationProtocols(), istioAnyALPN) || fc.GetTransportSocket() != nil {
				t.Errorf("chain %v: want Istio mTLS ALPNs and no termination", m)
			}
			if got := tcpCluster(t, fc); got != m.GetServerNames()[0] {
				t.Errorf("SNI %s forwards to %s", m.GetServerNames()[0], got)
			}
		}
		want := []string{"outbound_.5432_._.db.default.svc.cluster.local", "outbound_.80_._.web.default.svc.cluster.local", "outbound_.80_.v1_.web.default.svc.cluster.local"}
		if !slices.Equal(sni, want) {
			t.Errorf("SNI names = %q, want %q", sni, want)
		}
		// The TLS inspector reads SNI and ALPN both; a gateway has no HTTP
		// inspector and no inspection timeout.
		if got := names(l.GetListenerFilters()); !slices.Equal(got, []string{tlsInspector}) || l.GetListenerFiltersTimeout() != nil {
			t.Errorf("listener filters %v, timeout %v; want only the TLS inspector, no timeout", got, l.GetListenerFiltersTimeout())
		}
	})

	t.Run("tcp server", func(t *testing.T) {
		l := listenerNamed(cfg, "0.0.0.0_31400")
		if l == nil || len(l.GetFilterChains()) != 1 {
			t.Fatalf("want 0.0.0.0_31400 with one chain, got %v", l)
		}
		fc := l.GetFilterChains()[0]
		if fc.GetFilterChainMatch() != nil || fc.GetTransportSocket() != nil {
			t.Errorf("chain %v: want no match and no TLS", fc)
		}
		// The first route's port does not match; the second's does.
		if got := tcpCluster(t, fc); got != "outbound|5432||db.default.svc.cluster.local" {
			t.Errorf("TCP server forwards to %s", got)
		}
	})

	t.Run("tls server terminating", func(t *testing.T) {
		l := listenerNamed(cfg, "0.0.0.0_9443")
		if l == nil || len(l.GetFilterChains()) != 1 {
			t.Fatalf("want 0.0.0.0_9443 with one chain, got %v", l)
		}
		fc := l.GetFilterChains()[0]
		if !slices.Equal(fc.GetFilterChainMatch().GetServerNames(), []string{"db.example.com"}) || fc.GetTransportSocket() == nil {
			t.Errorf("chain %v: want SNI db.example.com and TLS termination", fc)
		}
		if fc.GetFilters()[0].GetName() != tcpProxyName {
			t.Errorf("filter %s, want a TCP proxy (a TLS server carries TCP, not HTTP)", fc.GetFilters()[0].GetName())
		}
		// No route matches port 9443 but the last, which has no match.
		if got := tcpCluster(t, fc); got != "outbound|80||web.default.svc.cluster.local" {
			t.Errorf("TLS server forwards to %s", got)
		}
		ctx := downstreamTLS(t, fc)
		common := ctx.GetCommonTlsContext()
		v := common.GetCombinedValidationContext()
		if !ctx.GetRequireClientCertificate().GetValue() || v.GetValidationContextSdsSecretConfig().GetName() != "kubernetes://db-cert-cacert" ||
			v.GetDefaultValidationContext().GetMatchSubjectAltNames()[0].GetExact() != "client.example.com" { //nolint:staticcheck // the field istiod sets
			t.Errorf("MUTUAL context = %v, want client certificates checked against db-cert-cacert and the SAN", ctx)
		}
		if common.GetTlsParams().GetTlsMinimumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 {
			t.Errorf("TLS params = %v, want TLS 1.3 at least", common.GetTlsParams())
		}
	})

	t.Run("istio mutual server", func(t *testing.T) {
		l := listenerNamed(cfg, "0.0.0.0_15012")
		if l == nil || len(l.GetFilterChains()) != 1 {
			t.Fatalf("want 0.0.0.0_15012 with one chain, got %v", l)
		}
		ctx := downstreamTLS(t, l.GetFilterChains()[0])
		common := ctx.GetCommonTlsContext()
		if !slices.Equal(common.GetAlpnProtocols(), []string{"istio-peer-exchange", "h2", "http/1.1"}) ||
			common.GetTlsCertificateSdsSecretConfigs()[0].GetName() != "default" ||
			common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName() != "ROOTCA" ||
			!ctx.GetRequireClientCertificate().GetValue() {
			t.Errorf("ISTIO_MUTUAL context = %v, want the gateway's Istio identity, ROOTCA and client certificates", ctx)
		}
	})

	t.Run("https server", func(t *testing.T) {
		l := listenerNamed(cfg, "0.0.0.0_8443")
		if l == nil || len(l.GetFilterChains()) != 1 {
			t.Fatalf("want 0.0.0.0_8443 with one chain, got %v", l)
		}
		ctx := downstreamTLS(t, l.GetFilterChains()[0])
		if ctx.GetRequireClientCertificate() == nil || ctx.GetRequireClientCertificate().GetValue() {
			t.Errorf("require_client_certificate = %v, want an explicit false", ctx.GetRequireClientCertificate())
		}
		// The one VirtualService on the server has TCP routes only: no
		// virtual host, so the route configuration answers 404.
		if rc := routeNamed(cfg, "https.8443.https.eastwest.istio-system"); rc == nil || !slices.Equal(names(rc.GetVirtualHosts()), []string{"blackhole:8443"}) {
			t.Errorf("route configuration = %v, want only the blackhole virtual host", rc)
		} else if vh := rc.GetVirtualHosts()[0]; !slices.Equal(vh.GetDomains(), []string{"*"}) || len(vh.GetRoutes()) > 0 || vh.GetIncludeRequestAttemptCount() {
			t.Errorf("blackhole virtual host = %v, want every domain, no routes, no attempt count", vh)
		}
		sds := ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs()
		if len(sds) != 1 || sds[0].GetName() != "kubernetes://web-cert" || sds[0].GetSdsConfig().GetAds() == nil {
			t.Errorf("certificate SDS = %v, want kubernetes://web-cert over ADS", sds)
		}
	})
}

func downstreamTLS(t *testing.T, fc *listenerv3.FilterChain) *tlsv3.DownstreamTlsContext {
	t.Helper()
	var ctx tlsv3.DownstreamTlsContext
	if err := fc.GetTransportSocket().GetTypedConfig().UnmarshalTo(&ctx); err != nil {
		t.Fatal(err)
	}
	return &ctx
}

// TestGatewayServerProblems: servers istiod gives no chain are reported,
// and the rest of the gateway still builds.
func TestGatewayServerProblems(t *testing.T) {
	docs := append(slices.Clone(gatewayWorld[:3]),
		`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: eastwest, namespace: istio-system}
spec:
  selector: {istio: eastwest}
  servers:
  - {port: {number: 15443, name: tls, protocol: TLS}, hosts: ["*"], tls: {mode: ISTIO_MUTUAL}}
  - {port: {number: 31400, name: tcp, protocol: TCP}, hosts: ["*"]}
  - {port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}`)
	m := resolveDocs(t, docs...)
	v, _ := m.View("istio-system", "gw")
	cfg := New(m, Options{}).Build(v)
	want := []string{"server 0 (TLS): no VirtualService TCP route", "server 1 (TCP): no VirtualService TCP route"}
	if len(cfg.Problems) != len(want) {
		t.Fatalf("problems = %q, want %d", cfg.Problems, len(want))
	}
	for i, w := range want {
		if !strings.Contains(cfg.Problems[i], w) {
			t.Errorf("problem %d = %q, want it to contain %q", i, cfg.Problems[i], w)
		}
	}
	if got := names(cfg.Listeners); !slices.Equal(got, []string{"0.0.0.0_80"}) {
		t.Errorf("listeners = %v, want only the HTTP server's (no listener without chains)", got)
	}
}

// TestDNSClusterShape: a DNS cluster carries istiod's resolver settings,
// states no health for the names it resolves, and endpoint metadata leaves
// out the default revision "latest".
func TestDNSClusterShape(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: default}
spec: {hosts: [api.example.com], location: MESH_EXTERNAL, resolution: DNS, ports: [{number: 443, name: tls, protocol: TLS}]}`)
	c := clusterNamed(cfg, "outbound|443||api.example.com")
	if c == nil {
		t.Fatalf("no DNS cluster in %v", names(cfg.Clusters))
	}
	if c.GetDnsJitter().AsDuration() != 100*time.Millisecond {
		t.Errorf("dns_jitter = %v, want 100ms", c.GetDnsJitter())
	}
	var cares caresv3.CaresDnsResolverConfig
	if err := c.GetTypedDnsResolverConfig().GetTypedConfig().UnmarshalTo(&cares); err != nil || cares.GetUdpMaxQueries().GetValue() != 100 {
		t.Errorf("DNS resolver = %v (%v), want c-ares with 100 UDP queries", c.GetTypedDnsResolverConfig(), err)
	}
	e := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0]
	if e.GetHealthStatus() != corev3.HealthStatus_UNKNOWN {
		t.Errorf("health_status = %v, want none stated", e.GetHealthStatus())
	}
	if got := e.GetMetadata().GetFilterMetadata()["istio"].GetFields()["workload"].GetStringValue(); got != "ext;default;ext;;Kubernetes" {
		t.Errorf("workload metadata = %q, want the revision left empty", got)
	}
}

// TestSidecarTLSRoutes: a TLS port follows its VirtualServices' TLS
// routes, one SNI chain per applicable match, the first route winning a
// repeated match; destination subnets become prefix ranges and, as in
// istiod, stay on every later match.
func TestSidecarTLSRoutes(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: secure, namespace: default}
spec: {clusterIP: 10.0.0.9, ports: [{name: https-api, port: 8443}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: other, namespace: default}
spec: {clusterIP: 10.0.0.10, ports: [{name: tcp, port: 9000}]}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: secure, namespace: default}
spec:
  hosts: [secure.default.svc.cluster.local]
  tls:
  - match: [{sniHosts: [secure.default.svc.cluster.local], sourceLabels: {app: nobody}}]
    route: [{destination: {host: other.default.svc.cluster.local}}]
  - match: [{sniHosts: [secure.default.svc.cluster.local], destinationSubnets: [10.9.0.0/16, 10.2.3.4]}]
    route: [{destination: {host: other.default.svc.cluster.local}}]
  - match: [{sniHosts: [secure.default.svc.cluster.local]}, {sniHosts: [secure.default.svc.cluster.local], port: 8443}]
    route: [{destination: {host: secure.default.svc.cluster.local}, weight: 90}, {destination: {host: other.default.svc.cluster.local}, weight: 10}]
  - match: [{sniHosts: [secure.default.svc.cluster.local]}]
    route: [{destination: {host: other.default.svc.cluster.local}}]`)
	l := listenerNamed(cfg, "10.0.0.9_8443")
	if l == nil {
		t.Fatalf("no listener 10.0.0.9_8443 in %v", names(cfg.Listeners))
	}
	type got struct {
		sni, ranges string
		filter      string
	}
	var chains []got
	for _, fc := range l.GetFilterChains() {
		var ranges []string
		for _, r := range fc.GetFilterChainMatch().GetPrefixRanges() {
			ranges = append(ranges, fmt.Sprintf("%s/%d", r.GetAddressPrefix(), r.GetPrefixLen().GetValue()))
		}
		var tp tcpv3.TcpProxy
		if err := fc.GetFilters()[0].GetTypedConfig().UnmarshalTo(&tp); err != nil {
			t.Fatal(err)
		}
		chains = append(chains, got{strings.Join(fc.GetFilterChainMatch().GetServerNames(), ","), strings.Join(ranges, ","), tp.GetStatPrefix()})
	}
	want := []got{
		// Subnets are sorted as text, as istiod sorts them.
		{"secure.default.svc.cluster.local", "10.2.3.4/32,10.9.0.0/16", "outbound|9000||other.default.svc.cluster.local"},
		// The subnets stay; the repeated SNI-only match and the last route add nothing.
		{"secure.default.svc.cluster.local", "10.2.3.4/32,10.9.0.0/16", "secure.default"},
	}
	if !slices.Equal(chains, want) {
		t.Errorf("chains = %+v, want %+v", chains, want)
	}
}

// TestTCPSubnetRoutes: TCP routes whose applicable matches all name
// destination subnets get chains on those subnets, in order, until a route
// that matches any destination; that one becomes the listener's default
// chain, as istiod moves a match-all chain there when others exist.
func TestTCPSubnetRoutes(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 10.0.0.9, ports: [{name: tcp, port: 5432}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: other, namespace: default}
spec: {clusterIP: 10.0.0.10, ports: [{name: tcp, port: 9000}]}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: default}
spec:
  hosts: [db]
  tcp:
  - match: [{destinationSubnets: [10.5.0.0/16]}, {sourceLabels: {app: other}}, {destinationSubnets: [10.6.0.1]}]
    route: [{destination: {host: other}}]
  - match: [{sourceLabels: {app: other}}]
    route: [{destination: {host: other}}]
  - match: [{destinationSubnets: [10.7.0.0/16]}, {port: 5432}]
    route: [{destination: {host: db}}]
  - route: [{destination: {host: other}}]`)
	l := listenerNamed(cfg, "10.0.0.9_5432")
	if l == nil {
		t.Fatalf("no listener; have %v", names(cfg.Listeners))
	}
	if len(l.GetFilterChains()) != 1 {
		t.Fatalf("chains = %v, want the one subnet chain", l.GetFilterChains())
	}
	var ranges []string
	for _, r := range l.GetFilterChains()[0].GetFilterChainMatch().GetPrefixRanges() {
		ranges = append(ranges, fmt.Sprintf("%s/%d", r.GetAddressPrefix(), r.GetPrefixLen().GetValue()))
	}
	if !slices.Equal(ranges, []string{"10.5.0.0/16", "10.6.0.1/32"}) || tcpCluster(t, l.GetFilterChains()[0]) != "outbound|9000||other.default.svc.cluster.local" {
		t.Errorf("subnet chain = %v to %s", ranges, tcpCluster(t, l.GetFilterChains()[0]))
	}
	// The third route's port match takes every destination: it ends the list.
	def := l.GetDefaultFilterChain()
	if def == nil || def.GetFilterChainMatch() != nil || tcpCluster(t, def) != "outbound|5432||db.default.svc.cluster.local" {
		t.Errorf("default chain = %v, want the db route matching everything", def)
	}
}

// TestSidecarIngressChains: Sidecar ingress ports take their chain names
// from the proxy's IP and their trace names from the Sidecar, carry its
// config, and with captureMode NONE get a listener of their own that sniffs
// TLS on that port only.
func TestSidecarIngressChains(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: edge, namespace: default}
spec:
  ingress:
  - {port: {number: 9080, protocol: HTTP, name: web}, defaultEndpoint: "127.0.0.1:8080"}
  - {port: {number: 9090, protocol: TCP, name: admin}, defaultEndpoint: "127.0.0.1:9090", captureMode: NONE}`)
	vi := listenerNamed(cfg, "virtualInbound")
	var web []*listenerv3.FilterChain
	for _, fc := range vi.GetFilterChains() {
		switch fc.GetFilterChainMatch().GetDestinationPort().GetValue() {
		case 9080:
			web = append(web, fc)
		case 9090:
			t.Errorf("virtualInbound has a chain for the captureMode NONE port: %s", fc.GetName())
		}
	}
	if len(web) != 2 {
		t.Fatalf("port 9080 has %d chains in virtualInbound, want mTLS and plaintext", len(web))
	}
	for _, fc := range web {
		if fc.GetName() != "1.1.1.1_9080" || fc.GetMetadata().GetFilterMetadata()["istio"].GetFields()["config"].GetStringValue() != "/apis/networking.istio.io/v1/namespaces/default/sidecar/edge" {
			t.Errorf("chain %s metadata %v: want the proxy IP in its name and the Sidecar's config", fc.GetName(), fc.GetMetadata())
		}
	}
	var hcm hcmv3.HttpConnectionManager
	if err := web[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&hcm); err != nil {
		t.Fatal(err)
	}
	if op := hcm.GetRouteConfig().GetVirtualHosts()[0].GetRoutes()[0].GetDecorator().GetOperation(); op != "edge.default:9080/*" {
		t.Errorf("decorator = %q, want the Sidecar's name", op)
	}

	l := listenerNamed(cfg, "1.1.1.1_9090")
	if l == nil {
		t.Fatalf("no listener 1.1.1.1_9090 in %v", names(cfg.Listeners))
	}
	sa := l.GetAddress().GetSocketAddress()
	if sa.GetAddress() != "1.1.1.1" || sa.GetPortValue() != 9090 || l.GetTrafficDirection() != corev3.TrafficDirection_INBOUND {
		t.Errorf("listener at %v (%v), want inbound at 1.1.1.1:9090", sa, l.GetTrafficDirection())
	}
	// A TCP port under PERMISSIVE: Istio mTLS, TLS passing through, plaintext.
	var got []string
	for _, fc := range l.GetFilterChains() {
		m := fc.GetFilterChainMatch()
		got = append(got, fmt.Sprintf("%s%v mtls=%v", m.GetTransportProtocol(), m.GetApplicationProtocols(), fc.GetTransportSocket() != nil))
	}
	want := []string{"tls" + fmt.Sprint(istioAnyALPN) + " mtls=true", "tls[] mtls=false", "raw_buffer[] mtls=false"}
	if !slices.Equal(got, want) {
		t.Errorf("chains = %q, want %q", got, want)
	}
	// Not redirected: no original destination; TLS sniffed on 9090 only.
	if filters := l.GetListenerFilters(); len(filters) != 1 || filters[0].GetName() != tlsInspector ||
		filters[0].GetFilterDisabled().GetNotMatch().GetDestinationPortRange().GetStart() != 9090 {
		t.Errorf("listener filters = %v, want the TLS inspector, on for 9090 only", filters)
	}
}

// TestInboundChainsByMode: the chains of each port class under each
// mutual TLS mode, and where the inspectors run.
func TestInboundChainsByMode(t *testing.T) {
	svc := `apiVersion: v1
kind: Service
metadata: {name: client, namespace: default}
spec: {selector: {app: client}, ports: [{name: http, port: 80, targetPort: 8080}, {name: tcp, port: 81, targetPort: 8081}, {name: other, port: 82, targetPort: 8082}]}`
	pa := func(mode string) string {
		return `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: default}
spec: {mtls: {mode: ` + mode + `}}`
	}
	chains := func(l *listenerv3.Listener, port uint32) []string {
		var out []string
		for _, fc := range l.GetFilterChains() {
			if m := fc.GetFilterChainMatch(); m.GetDestinationPort().GetValue() == port {
				kind := "tcp"
				if fc.GetFilters()[0].GetName() != tcpProxyName {
					kind = "http"
				}
				out = append(out, fmt.Sprintf("%s%v %s", m.GetTransportProtocol(), m.GetApplicationProtocols(), kind))
			}
		}
		return out
	}
	tests := []struct {
		mode            string
		http, tcp, auto []string
	}{
		{"PERMISSIVE",
			[]string{"tls" + fmt.Sprint(istioAnyALPN) + " http", "raw_buffer[] http"},
			[]string{"tls" + fmt.Sprint(istioAnyALPN) + " tcp", "tls[] tcp", "raw_buffer[] tcp"},
			[]string{"tls" + fmt.Sprint(istioHTTPALPN) + " http", "raw_buffer" + fmt.Sprint(plaintextALPN) + " http", "tls" + fmt.Sprint(istioTCPALPN) + " tcp", "raw_buffer[] tcp", "tls[] tcp"}},
		{"STRICT",
			[]string{"tls[] http"},
			[]string{"tls[] tcp"},
			[]string{"tls" + fmt.Sprint(istioHTTPALPN) + " http", "tls[] tcp"}},
		{"DISABLE",
			[]string{"raw_buffer[] http"},
			[]string{"raw_buffer[] tcp"},
			[]string{"raw_buffer" + fmt.Sprint(plaintextALPN) + " http", "raw_buffer[] tcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, svc, pa(tt.mode))
			vi := listenerNamed(cfg, "virtualInbound")
			for port, want := range map[uint32][]string{8080: tt.http, 8081: tt.tcp, 8082: tt.auto} {
				if got := chains(vi, port); !slices.Equal(got, want) {
					t.Errorf("port %d chains = %q, want %q", port, got, want)
				}
			}
		})
	}
	// Under PERMISSIVE the HTTP inspector stays off where no chain matches
	// plaintext HTTP ALPN: the declared HTTP and TCP ports and 15006.
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, svc)
	http := listenerNamed(cfg, "virtualInbound").GetListenerFilters()[2]
	var off []int32
	for _, r := range http.GetFilterDisabled().GetOrMatch().GetRules() {
		off = append(off, r.GetDestinationPortRange().GetStart())
	}
	if http.GetName() != httpInspector || !slices.Equal(off, []int32{8080, 8081, 15006}) {
		t.Errorf("%s off on %v, want the HTTP inspector off on 8080, 8081, 15006", http.GetName(), off)
	}
}

// TestPortLevelPassthrough: a port a workload policy sets a mode for, and
// no service targets, gets passthrough chains of its own in that mode.
func TestPortLevelPassthrough(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: client, namespace: default}
spec: {selector: {matchLabels: {app: client}}, mtls: {mode: STRICT}, portLevelMtls: {9999: {mode: DISABLE}}}`)
	var got []string
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		if fc.GetFilterChainMatch().GetDestinationPort().GetValue() == 9999 {
			got = append(got, fc.GetName()+" "+fc.GetFilterChainMatch().GetTransportProtocol()+" "+fc.GetFilters()[0].GetName())
		}
	}
	want := []string{"virtualInbound-catchall-http raw_buffer " + hcmName, "virtualInbound raw_buffer " + tcpProxyName}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("port 9999 chains %q, want %q", got, want)
	}
}
