package emit

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/proto"
)

func protocolOptions(t *testing.T, c *clusterv3.Cluster) *httpv3.HttpProtocolOptions {
	t.Helper()
	var o httpv3.HttpProtocolOptions
	if a := c.GetTypedExtensionProtocolOptions()[httpOptsKey]; a != nil {
		if err := a.UnmarshalTo(&o); err != nil {
			t.Fatal(err)
		}
	}
	return &o
}

// meshKeepalive is a mesh config with a TCP keepalive, which clusters
// without a rule of their own take.
const meshKeepalive = `apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |
    tcpKeepalive: {time: 600s, probes: 9}`

const poolServer = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, selector: {app: client}, ports: [{name: http, port: 80, targetPort: 8080}, {name: grpc, port: 90, targetPort: 9090}, {name: other, port: 70, targetPort: 7070}]}`

// TestConnectionPool: a connection pool becomes the cluster's connect
// timeout, circuit breakers with the retry budget, TCP keepalive (the
// mesh's, then the rule's field by field) and HTTP settings, h2 ones on
// h2 clusters only (docs/semantics/envoy-output.md §7.3).
func TestConnectionPool(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, poolServer,
		meshKeepalive,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec:
  host: web
  trafficPolicy:
    retryBudget: {percent: 15}
    connectionPool:
      tcp: {maxConnections: 10, connectTimeout: 3s, idleTimeout: 40s, maxConnectionDuration: 1h, tcpKeepalive: {interval: 10s, probes: 3}}
      http: {maxConcurrentStreams: 50, http2KeepAlive: {interval: 30s, timeout: 5s}}`)
	http := clusterNamed(cfg, "outbound|80||web.default.svc.cluster.local")
	if got := http.GetConnectTimeout().AsDuration(); got != 3*time.Second {
		t.Errorf("connect timeout %v, want 3s", got)
	}
	th := http.GetCircuitBreakers().GetThresholds()[0]
	if th.GetMaxConnections().GetValue() != 10 || th.GetRetryBudget().GetBudgetPercent().GetValue() != 15 || th.GetRetryBudget().GetMinRetryConcurrency().GetValue() != 3 {
		t.Errorf("thresholds %v, want 10 connections and a 15%% budget of at least 3", th)
	}
	ka := http.GetUpstreamConnectionOptions().GetTcpKeepalive()
	if ka.GetKeepaliveTime().GetValue() != 600 || ka.GetKeepaliveInterval().GetValue() != 10 || ka.GetKeepaliveProbes().GetValue() != 3 {
		t.Errorf("keepalive %v, want the mesh's time with the rule's interval and probes", ka)
	}
	common := protocolOptions(t, http).GetCommonHttpProtocolOptions()
	if common.GetIdleTimeout().AsDuration() != 40*time.Second || common.GetMaxConnectionDuration().AsDuration() != time.Hour {
		t.Errorf("HTTP options %v, want the TCP idle timeout and max connection duration", common)
	}
	if protocolOptions(t, http).GetExplicitHttpConfig().GetHttp2ProtocolOptions() != nil {
		t.Error("an HTTP/1 port got HTTP/2 options")
	}
	h2 := protocolOptions(t, clusterNamed(cfg, "outbound|90||web.default.svc.cluster.local")).GetExplicitHttpConfig().GetHttp2ProtocolOptions()
	if h2.GetMaxConcurrentStreams().GetValue() != 50 || h2.GetConnectionKeepalive().GetInterval().AsDuration() != 30*time.Second {
		t.Errorf("gRPC port HTTP/2 options %v, want 50 streams and 30s pings", h2)
	}
}

// TestInboundClusterPolicy: an inbound cluster takes the selector-less
// DestinationRule's pool for the service port (and names the rule), a
// Sidecar's inbound pool over it and a port's over both; gRPC ports speak
// h2 and sniffed ones the downstream's protocol, never upgraded; a
// defaultEndpoint is stated bare, as istiod states it.
func TestInboundClusterPolicy(t *testing.T) {
	dr := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec:
  host: web
  trafficPolicy:
    connectionPool: {tcp: {maxConnections: 10}, http: {h2UpgradePolicy: UPGRADE}}
    portLevelSettings: [{port: {number: 70}, connectionPool: {tcp: {maxConnections: 7}}}]`
	maxConns := func(c *clusterv3.Cluster) uint32 {
		return c.GetCircuitBreakers().GetThresholds()[0].GetMaxConnections().GetValue()
	}
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, poolServer, dr)
	web := clusterNamed(cfg, "inbound|8080||")
	if maxConns(web) != 10 || web.GetMetadata().GetFilterMetadata()["istio"].GetFields()["config"].GetStringValue() != "/apis/networking.istio.io/v1/namespaces/default/destination-rule/web" {
		t.Errorf("inbound|8080|| = %v, want the rule's pool and its name", web)
	}
	if protocolOptions(t, web).GetExplicitHttpConfig().GetHttp2ProtocolOptions() != nil {
		t.Error("an inbound HTTP/1 port was upgraded")
	}
	if maxConns(clusterNamed(cfg, "inbound|7070||")) != 7 {
		t.Error("inbound|7070|| ignores the port-level pool of service port 70")
	}
	if protocolOptions(t, clusterNamed(cfg, "inbound|9090||")).GetExplicitHttpConfig().GetHttp2ProtocolOptions() == nil {
		t.Error("inbound gRPC port not h2")
	}
	if protocolOptions(t, clusterNamed(cfg, "inbound|7070||")).GetUseDownstreamProtocolConfig() == nil {
		t.Error("inbound sniffed port does not follow the downstream protocol")
	}

	cfg = compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, poolServer, dr,
		`apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: s, namespace: default}
spec:
  inboundConnectionPool: {tcp: {maxConnections: 2}}
  ingress:
  - {port: {number: 8080, protocol: HTTP, name: web}, defaultEndpoint: "127.0.0.1:8080", connectionPool: {tcp: {maxConnections: 1}}}
  - {port: {number: 9090, protocol: GRPC, name: grpc}, defaultEndpoint: "127.0.0.1:9090"}`)
	web, grpc := clusterNamed(cfg, "inbound|8080||"), clusterNamed(cfg, "inbound|9090||")
	if maxConns(web) != 1 || maxConns(grpc) != 2 {
		t.Errorf("max connections %d and %d, want the port's 1 and the Sidecar's 2", maxConns(web), maxConns(grpc))
	}
	ep := web.GetLoadAssignment().GetEndpoints()[0]
	if ep.GetLocality() != nil || ep.GetLbEndpoints()[0].GetLoadBalancingWeight() != nil || ep.GetLbEndpoints()[0].GetHealthStatus() != 0 {
		t.Errorf("defaultEndpoint stated as %v, want the address alone", ep)
	}
}

// TestProtocolFilters: gRPC-Web ports get the gRPC-Web HTTP filter first
// and MongoDB ports the Mongo proxy before tcp_proxy, outbound and
// inbound, as istiod adds them.
func TestProtocolFilters(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: app, namespace: default}
spec: {clusterIP: 10.0.0.5, selector: {app: client}, ports: [{name: grpc-web, port: 81, targetPort: 8081}, {name: mongo, port: 27017}]}`)
	filterNames := func(fs []*listenerv3.Filter) []string { return names(fs) }
	hcm := func(fc *listenerv3.FilterChain) []string {
		var h hcmv3.HttpConnectionManager
		if err := fc.GetFilters()[0].GetTypedConfig().UnmarshalTo(&h); err != nil {
			t.Fatal(err)
		}
		return names(h.GetHttpFilters())
	}
	if got := hcm(listenerNamed(cfg, "0.0.0.0_81").GetFilterChains()[0]); len(got) == 0 || got[0] != "envoy.filters.http.grpc_web" {
		t.Errorf("gRPC-Web port HTTP filters %v, want grpc_web first", got)
	}
	mongo := listenerNamed(cfg, "10.0.0.5_27017")
	if mongo == nil {
		t.Fatalf("no mongo listener in %v", names(cfg.Listeners))
	}
	want := []string{"envoy.filters.network.mongo_proxy", tcpProxyName}
	if got := filterNames(mongo.GetFilterChains()[0].GetFilters()); !slices.Equal(got, want) {
		t.Errorf("outbound mongo filters %v, want %v", got, want)
	}
	inbound := 0
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		if fc.GetFilterChainMatch().GetDestinationPort().GetValue() != 27017 {
			continue
		}
		inbound++
		if got := filterNames(fc.GetFilters()); !slices.Equal(got, want) {
			t.Errorf("inbound mongo chain %s filters %v, want %v", fc.GetName(), got, want)
		}
	}
	if inbound == 0 {
		t.Error("no inbound chain for the mongo port")
	}
}

// TestEndpointHealth: pods are stated healthy; WorkloadEntries and a
// ServiceEntry's own endpoints are not stated at all, as istiod knows
// nothing of their health; inline endpoints are named by entry and index.
func TestEndpointHealth(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vms, namespace: default}
spec: {hosts: [vm.example], addresses: [240.0.0.1], resolution: STATIC, ports: [{number: 80, name: http, protocol: HTTP}], endpoints: [{address: 10.9.0.1}, {address: 10.9.0.2}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, selector: {app: client}, ports: [{name: http, port: 80}]}`)
	for _, cla := range cfg.Endpoints {
		for _, l := range cla.GetEndpoints() {
			for i, e := range l.GetLbEndpoints() {
				want := corev3.HealthStatus_HEALTHY
				if strings.Contains(cla.GetClusterName(), "vm.example") {
					want = corev3.HealthStatus_UNKNOWN
					name := strings.Split(e.GetMetadata().GetFilterMetadata()["istio"].GetFields()["workload"].GetStringValue(), ";")[0]
					if wantName := "vms-" + strconv.Itoa(i); name != wantName {
						t.Errorf("%s endpoint %d is workload %q, want %q", cla.GetClusterName(), i, name, wantName)
					}
				}
				if e.GetHealthStatus() != want {
					t.Errorf("%s endpoint %d health %v, want %v", cla.GetClusterName(), i, e.GetHealthStatus(), want)
				}
			}
		}
	}
}

// TestLoadBalancerShapes: warmups, hash rings and locality weighting are
// written as istiod writes them, and a PROXY protocol header wraps the
// cluster's transport.
func TestLoadBalancerShapes(t *testing.T) {
	cluster := func(t *testing.T, tp string) *clusterv3.Cluster {
		t.Helper()
		cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.0.0.5, ports: [{name: http, port: 80}]}`, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec: {host: web, trafficPolicy: `+tp+`}`)
		return clusterNamed(cfg, "outbound|80||web.default.svc.cluster.local")
	}
	t.Run("warmup", func(t *testing.T) {
		c := cluster(t, "{loadBalancer: {simple: ROUND_ROBIN, warmup: {duration: 30s, aggression: 2}}}")
		slow := c.GetRoundRobinLbConfig().GetSlowStartConfig()
		if c.GetLbPolicy() != clusterv3.Cluster_ROUND_ROBIN || slow.GetSlowStartWindow().AsDuration() != 30*time.Second ||
			slow.GetAggression().GetDefaultValue() != 2 || slow.GetMinWeightPercent().GetValue() != 10 {
			t.Errorf("cluster %v %v, want round robin warming over 30s from 10%%", c.GetLbPolicy(), slow)
		}
	})
	t.Run("ring hash without a size", func(t *testing.T) {
		c := cluster(t, "{loadBalancer: {consistentHash: {httpHeaderName: x, ringHash: {}}}}")
		if c.GetLbPolicy() != clusterv3.Cluster_RING_HASH || c.GetLbConfig() != nil {
			t.Errorf("cluster %v %v, want a ring hash with Envoy's own size", c.GetLbPolicy(), c.GetLbConfig())
		}
	})
	t.Run("deprecated ring size", func(t *testing.T) {
		c := cluster(t, "{loadBalancer: {consistentHash: {httpHeaderName: x}}}")
		if c.GetRingHashLbConfig().GetMinimumRingSize().GetValue() != 1024 {
			t.Errorf("ring %v, want 1024", c.GetRingHashLbConfig())
		}
	})
	t.Run("locality failover needs outlier detection", func(t *testing.T) {
		lb := "loadBalancer: {localityLbSetting: {enabled: true, failover: [{from: a, to: b}]}}"
		if c := cluster(t, "{"+lb+"}"); c.GetCommonLbConfig().GetLocalityWeightedLbConfig() != nil {
			t.Error("locality weighting without outlier detection")
		}
		if c := cluster(t, "{"+lb+", outlierDetection: {consecutive5xxErrors: 3}}"); c.GetCommonLbConfig().GetLocalityWeightedLbConfig() == nil {
			t.Error("no locality weighting with failover and outlier detection")
		}
	})
	t.Run("proxy protocol", func(t *testing.T) {
		c := cluster(t, "{proxyProtocol: {version: V2}}")
		ms := c.GetTransportSocketMatches()
		if len(ms) != 2 {
			t.Fatalf("transport socket matches %v, want auto mTLS's two", ms)
		}
		for _, m := range ms {
			if m.GetTransportSocket().GetName() != "envoy.transport_sockets.upstream_proxy_protocol" {
				t.Errorf("match %s transport %s, want it wrapped in the PROXY protocol", m.GetName(), m.GetTransportSocket().GetName())
			}
		}
		if c := cluster(t, "{proxyProtocol: {version: V1}, tls: {mode: DISABLE}}"); c.GetTransportSocket().GetName() != "envoy.transport_sockets.upstream_proxy_protocol" {
			t.Errorf("plaintext transport %v, want the PROXY protocol around raw buffer", c.GetTransportSocket())
		}
	})
}

// TestInboundHTTP2Options: inbound HTTP connection managers of HTTP/2,
// gRPC and gRPC-Web ports state HTTP/2 options, as istiod writes them;
// plain HTTP ports do not.
func TestInboundHTTP2Options(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: app, namespace: default}
spec: {clusterIP: 10.0.0.5, selector: {app: client}, ports: [{name: http, port: 80, targetPort: 8080}, {name: grpc, port: 90, targetPort: 9090}, {name: grpc-web, port: 81, targetPort: 8081}]}`)
	want := map[uint32]bool{8080: false, 9090: true, 8081: true}
	seen := map[uint32]int{}
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		port := fc.GetFilterChainMatch().GetDestinationPort().GetValue()
		h2, ok := want[port]
		if !ok {
			continue
		}
		var h hcmv3.HttpConnectionManager
		if err := fc.GetFilters()[0].GetTypedConfig().UnmarshalTo(&h); err != nil {
			t.Fatalf("chain %s on %d: %v", fc.GetName(), port, err)
		}
		seen[port]++
		if got := h.GetHttp2ProtocolOptions() != nil; got != h2 {
			t.Errorf("chain %s on %d: HTTP/2 options %v, want %v", fc.GetName(), port, got, h2)
		}
	}
	for port := range want {
		if seen[port] == 0 {
			t.Errorf("no inbound chain on %d", port)
		}
	}
}

// TestPoolHTTPOptionsWithoutCommonFields (issue 15 item 18): HTTP/2-only
// pool settings on an HTTP/1.1 (or TCP) cluster map to no option there,
// yet istiod still writes the protocol options: empty common options and
// HTTP/1.1 stated. Settings that are only circuit breakers write none.
func TestPoolHTTPOptionsWithoutCommonFields(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec: {clusterIP: 10.0.0.6, ports: [{name: http, port: 80}, {name: http-b, port: 81}, {name: tcp, port: 82}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec:
  host: api
  trafficPolicy:
    connectionPool: {http: {http1MaxPendingRequests: 10, maxRetries: 3}}
    portLevelSettings:
    - port: {number: 81}
      connectionPool: {http: {maxConcurrentStreams: 10}}
    - port: {number: 82}
      connectionPool: {http: {http2KeepAlive: {interval: 10s, timeout: 5s}}}`)
	if o := clusterNamed(cfg, "outbound|80||api.default.svc.cluster.local").GetTypedExtensionProtocolOptions(); o != nil {
		t.Errorf("circuit breakers only: protocol options %v, want none", o)
	}
	for _, port := range []string{"81", "82"} {
		c := clusterNamed(cfg, "outbound|"+port+"||api.default.svc.cluster.local")
		o := protocolOptions(t, c)
		if o.GetCommonHttpProtocolOptions() == nil || proto.Size(o.GetCommonHttpProtocolOptions()) != 0 || o.GetExplicitHttpConfig().GetHttpProtocolOptions() == nil {
			t.Errorf("%s: protocol options %v, want empty common options and HTTP/1.1", c.GetName(), o)
		}
	}
}

// TestTCPProxyPoolLimitsAndPassthroughKeepalive (issue 15 item 10): an
// outbound tcp_proxy takes the idle timeout and maximum connection
// duration of its destination's DestinationRule (top level only, on
// weighted routes the first destination's, on an AUTO_PASSTHROUGH
// gateway's SNI-DNAT chains too); inbound ones none. The passthrough
// clusters keep the mesh's TCP keepalive.
func TestTCPProxyPoolLimitsAndPassthroughKeepalive(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		meshKeepalive,
		`apiVersion: v1
kind: Service
metadata: {name: client, namespace: default}
spec: {clusterIP: 10.0.0.2, selector: {app: client}, ports: [{name: tcp, port: 7000}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: 10.0.0.6, ports: [{name: tcp, port: 5432}, {name: tcp-b, port: 81}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: db, namespace: default}
spec:
  host: db
  trafficPolicy:
    connectionPool: {tcp: {idleTimeout: 30s, maxConnectionDuration: 1h}}
    portLevelSettings: [{port: {number: 81}, connectionPool: {tcp: {idleTimeout: 5s}}}]
  subsets: [{name: v1, labels: {version: v1}}]`,
		`apiVersion: v1
kind: Service
metadata: {name: mq, namespace: default}
spec: {clusterIP: 10.0.0.7, ports: [{name: tcp, port: 5672}]}`,
		`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: mq, namespace: default}
spec:
  hosts: [mq]
  tcp:
  - route:
    - {destination: {host: db, port: {number: 5432}}, weight: 50}
    - {destination: {host: db, subset: v1, port: {number: 5432}}, weight: 50}`,
		gwNamespace, gwPod, gwGateway(`  servers: [{port: {number: 15443, name: tls, protocol: TLS}, tls: {mode: AUTO_PASSTHROUGH}, hosts: ["*.local"]}]`),
	}
	sidecar := compile(t, Options{Format: XDS}, "default/client", docs...)
	router := compile(t, Options{Format: XDS}, "gw/gw-1", docs...)
	// tcpProxies are the tcp_proxy configs of a listener, by stat prefix.
	tcpProxies := func(l *listenerv3.Listener) map[string]*tcpv3.TcpProxy {
		out := map[string]*tcpv3.TcpProxy{}
		for _, fc := range append(l.GetFilterChains(), l.GetDefaultFilterChain()) {
			for _, f := range fc.GetFilters() {
				var tp tcpv3.TcpProxy
				if f.GetName() == tcpProxyName && f.GetTypedConfig().UnmarshalTo(&tp) == nil {
					out[tp.GetStatPrefix()] = &tp
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		cfg               *Config
		listener, prefix  string
		idle, maxDuration time.Duration
	}{
		{sidecar, "10.0.0.6_5432", "outbound|5432||db.default.svc.cluster.local", 30 * time.Second, time.Hour},
		{sidecar, "10.0.0.6_81", "outbound|81||db.default.svc.cluster.local", 30 * time.Second, time.Hour}, // not the port-level 5s
		{sidecar, "10.0.0.7_5672", "mq.default", 30 * time.Second, time.Hour},
		{sidecar, "virtualInbound", "inbound|7000||", 0, 0},
		{router, "0.0.0.0_15443", "outbound_.5432_.v1_.db.default.svc.cluster.local", 30 * time.Second, time.Hour},
		{router, "0.0.0.0_15443", "outbound_.7000_._.client.default.svc.cluster.local", 0, 0},
	} {
		tp := tcpProxies(listenerNamed(tc.cfg, tc.listener))[tc.prefix]
		if tp == nil {
			t.Errorf("%s: no tcp_proxy %s", tc.listener, tc.prefix)
			continue
		}
		if tp.GetIdleTimeout().AsDuration() != tc.idle || tp.GetMaxDownstreamConnectionDuration().AsDuration() != tc.maxDuration {
			t.Errorf("%s %s: idle %v, max duration %v; want %v, %v", tc.listener, tc.prefix, tp.GetIdleTimeout(), tp.GetMaxDownstreamConnectionDuration(), tc.idle, tc.maxDuration)
		}
	}
	for _, name := range []string{PassthroughCluster, InboundPassthroughCluster} {
		ka := clusterNamed(sidecar, name).GetUpstreamConnectionOptions().GetTcpKeepalive()
		if ka.GetKeepaliveTime().GetValue() != 600 || ka.GetKeepaliveProbes().GetValue() != 9 {
			t.Errorf("%s: keepalive %v, want the mesh's", name, ka)
		}
	}
}
