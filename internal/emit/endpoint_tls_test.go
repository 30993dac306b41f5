package emit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// endpointsNamed is the load assignment of a cluster, nil when none.
func endpointsNamed(cfg *Config, cluster string) *endpointv3.ClusterLoadAssignment {
	for _, cla := range cfg.Endpoints {
		if cla.GetClusterName() == cluster {
			return cla
		}
	}
	return nil
}

// tlsMarks counts a load assignment's endpoints and those marked for the
// tlsMode-istio transport socket match.
func tlsMarks(cla *endpointv3.ClusterLoadAssignment) (n, marked int) {
	for _, l := range cla.GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			n++
			if e.GetMetadata().GetFilterMetadata()["envoy.transport_socket_match"].GetFields()["tlsMode"].GetStringValue() == "istio" {
				marked++
			}
		}
	}
	return n, marked
}

// mtlsOffFixture: injected endpoints that clients reach without mutual TLS
// (a namespace PeerAuthentication DISABLE, a workload port-level DISABLE,
// DestinationRule TLS DISABLE and SIMPLE) beside ones they reach with it
// (a subset's ISTIO_MUTUAL, a STRICT workload port), and an
// AUTO_PASSTHROUGH gateway.
var mtlsOffFixture = []string{injectedNs, clientPod,
	`apiVersion: v1
kind: Namespace
metadata: {name: b, labels: {istio-injection: enabled}}`,
	`apiVersion: v1
kind: Service
metadata: {name: web, namespace: b}
spec: {clusterIP: 10.0.0.5, selector: {app: web}, ports: [{name: http, port: 80, targetPort: 8080}]}`,
	`apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: b, labels: {app: web, security.istio.io/tlsMode: istio}}
spec: {containers: [{name: app, image: x, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.1.0.1}`,
	`apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: b}
spec: {mtls: {mode: DISABLE}}`,
	`apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec: {clusterIP: 10.0.0.6, selector: {app: api}, ports: [{name: http, port: 80, targetPort: 8080}, {name: tcp, port: 90, targetPort: 9090}]}`,
	`apiVersion: v1
kind: Pod
metadata: {name: api-1, namespace: default, labels: {app: api, version: v1, security.istio.io/tlsMode: istio}}
spec: {containers: [{name: app, image: x, ports: [{containerPort: 8080}, {containerPort: 9090}]}]}
status: {podIP: 10.1.0.2}`,
	`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec:
  host: api
  trafficPolicy:
    tls: {mode: DISABLE}
    portLevelSettings:
    - port: {number: 90}
      tls: {mode: SIMPLE}
  subsets:
  - name: v1
    labels: {version: v1}
    trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}
  - name: v1b
    labels: {version: v1}`,
	`apiVersion: v1
kind: Namespace
metadata: {name: c, labels: {istio-injection: enabled}}`,
	`apiVersion: v1
kind: Service
metadata: {name: db, namespace: c}
spec: {clusterIP: 10.0.0.7, selector: {app: db}, ports: [{name: http, port: 80, targetPort: 8080}, {name: tcp, port: 90, targetPort: 9090}]}`,
	`apiVersion: v1
kind: Pod
metadata: {name: db-1, namespace: c, labels: {app: db, security.istio.io/tlsMode: istio}}
spec: {containers: [{name: app, image: x, ports: [{containerPort: 8080}, {containerPort: 9090}]}]}
status: {podIP: 10.1.0.3}`,
	`apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: db, namespace: c}
spec:
  selector: {matchLabels: {app: db}}
  mtls: {mode: STRICT}
  portLevelMtls: {9090: {mode: DISABLE}}`,
	gwNamespace, gwPod, gwGateway(`  servers:
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.local"]`),
}

// TestEndpointTLSModeWithoutMTLS (issue 15 item 3): istiod marks an
// endpoint tlsMode istio only when the client will use mutual TLS to it —
// the DestinationRule's mode for the subset and port when it names one,
// else the endpoint's PeerAuthentication — and an AUTO_PASSTHROUGH
// gateway's SNI-DNAT clusters keep only marked endpoints.
func TestEndpointTLSModeWithoutMTLS(t *testing.T) {
	sidecar := compile(t, Options{Format: XDS}, "default/client", mtlsOffFixture...)
	router := compile(t, Options{Format: XDS}, "gw/gw-1", mtlsOffFixture...)
	for _, tc := range []struct {
		cfg       *Config
		cluster   string
		n, marked int
	}{
		{sidecar, "outbound|80||web.b.svc.cluster.local", 1, 0},       // namespace DISABLE
		{sidecar, "outbound|80||api.default.svc.cluster.local", 1, 0}, // DR DISABLE
		{sidecar, "outbound|90||api.default.svc.cluster.local", 1, 0}, // port-level SIMPLE
		{sidecar, "outbound|80|v1|api.default.svc.cluster.local", 1, 1},
		{sidecar, "outbound|90|v1|api.default.svc.cluster.local", 1, 1},  // the subset's mode wins
		{sidecar, "outbound|80|v1b|api.default.svc.cluster.local", 1, 0}, // the rule's DISABLE
		{sidecar, "outbound|80||db.c.svc.cluster.local", 1, 1},
		{sidecar, "outbound|90||db.c.svc.cluster.local", 1, 0}, // workload port-level DISABLE
		{router, "outbound|80||web.b.svc.cluster.local", 1, 0},
		{router, "outbound_.80_._.web.b.svc.cluster.local", 0, 0},
		{router, "outbound_.80_._.api.default.svc.cluster.local", 0, 0},
		{router, "outbound_.80_.v1_.api.default.svc.cluster.local", 1, 1},
		{router, "outbound_.80_._.db.c.svc.cluster.local", 1, 1},
		{router, "outbound_.90_._.db.c.svc.cluster.local", 0, 0},
	} {
		cla := endpointsNamed(tc.cfg, tc.cluster)
		if cla == nil {
			t.Errorf("%s: no endpoints", tc.cluster)
			continue
		}
		if n, marked := tlsMarks(cla); n != tc.n || marked != tc.marked {
			t.Errorf("%s: %d endpoints, %d marked tlsMode istio; want %d, %d", tc.cluster, n, marked, tc.n, tc.marked)
		}
		// A locality emptied by the SNI-DNAT filter stays, without weight.
		if l := cla.GetEndpoints(); tc.n == 0 && (len(l) != 1 || l[0].GetLoadBalancingWeight() != nil) {
			t.Errorf("%s: localities %v, want one, empty and without weight", tc.cluster, l)
		}
	}
}

// TestDualProtocolPort: a Service declaring one port number for two
// protocols (UDP and TCP 53, kube-dns style), checked against istiod's
// generator. The number is served by its first port that is not UDP, as
// istiod looks ports up: the endpoints of outbound|P|| list each pod once,
// at that port's target, whichever comes first; a route configuration on
// the number has the service's vhost when that port may carry HTTP; and
// on the pod each target port takes the protocol of its own port.
func TestDualProtocolPort(t *testing.T) {
	docs := []string{injectedNs, clientPod, `apiVersion: v1
kind: Pod
metadata: {name: dns, namespace: default, labels: {app: dns}}
spec: {containers: [{name: app, image: x, ports: [{name: dns, containerPort: 5353, protocol: UDP}, {name: dns-tcp, containerPort: 5353}, {name: alt, containerPort: 7000}]}]}
status: {podIP: 10.1.0.3}`, `apiVersion: v1
kind: Service
metadata: {name: dns, namespace: default}
spec:
  clusterIP: 10.0.0.53
  selector: {app: dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: named-udp, port: 54, targetPort: dns, protocol: UDP}
  - {name: named-tcp, port: 54, targetPort: dns-tcp, protocol: TCP}
  - {name: diff-udp, port: 55, targetPort: 5353, protocol: UDP}
  - {name: diff-tcp, port: 55, targetPort: 7000, protocol: TCP}
  - {name: tcp-first, port: 56, targetPort: 7000, protocol: TCP}
  - {name: udp-second, port: 56, targetPort: 5353, protocol: UDP}`}
	tests := []struct {
		port, target uint32
		vhost        bool // the port's route configuration has the service
	}{
		{53, 53, false},
		{54, 5353, true},
		{55, 7000, true},
		{56, 7000, false},
	}
	for _, proxy := range []string{"default/client", "default/dns"} {
		cfg := compile(t, Options{Format: XDS}, proxy, docs...)
		for _, tt := range tests {
			cluster := fmt.Sprintf("outbound|%d||dns.default.svc.cluster.local", tt.port)
			var got []string
			for _, l := range endpointsNamed(cfg, cluster).GetEndpoints() {
				for _, e := range l.GetLbEndpoints() {
					sa := e.GetEndpoint().GetAddress().GetSocketAddress()
					got = append(got, fmt.Sprintf("%s:%d/%d", sa.GetAddress(), sa.GetPortValue(), e.GetLoadBalancingWeight().GetValue()))
				}
				if w := l.GetLoadBalancingWeight().GetValue(); w != 1 {
					t.Errorf("%s %s: locality weight %d, want 1", proxy, cluster, w)
				}
			}
			if want := []string{fmt.Sprintf("10.1.0.3:%d/1", tt.target)}; !slices.Equal(got, want) {
				t.Errorf("%s %s: endpoints %v, want %v", proxy, cluster, got, want)
			}
			route := fmt.Sprintf("dns.default.svc.cluster.local:%d", tt.port)
			_, has := vhostDomains(routeNamed(cfg, route))[route]
			if has != tt.vhost {
				t.Errorf("%s route %s: vhost for the service %v, want %v", proxy, route, has, tt.vhost)
			}
		}
	}
	// On the pod, 5353 is first targeted by UDP 53 (TCP chains), 7000 by
	// diff-tcp, a sniffed port (HTTP and TCP chains).
	chains := inboundChainPorts(compile(t, Options{Format: XDS}, "default/dns", docs...))
	if got := chains[5353]; !slices.Equal(got, []string{tcpProxyName}) {
		t.Errorf("chains of port 5353 end in %v, want only %s", got, tcpProxyName)
	}
	if got := chains[7000]; !slices.Contains(got, hcmName) || !slices.Contains(got, tcpProxyName) {
		t.Errorf("chains of port 7000 end in %v, want HTTP and TCP ones", got)
	}
}

// TestDualProtocolPortSidecarEgress: the same root cause through a Sidecar
// egress port, checked against istiod's generator. The egress port 53
// keeps the service's first port of that number, UDP; the catch-all
// listener's copy then adds only numbers not yet there, so UDP 54 and 55
// stay and TCP 56 joins: clusters for 56 alone. The listener on 53 still
// names outbound|53||, which istiod writes without a cluster, and that is
// no problem of meshc's. The cluster for 56 lists the pod once.
func TestDualProtocolPortSidecarEgress(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod, `apiVersion: v1
kind: Pod
metadata: {name: dns, namespace: default, labels: {app: dns}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 10.1.0.3}`, `apiVersion: v1
kind: Service
metadata: {name: dns, namespace: default}
spec:
  clusterIP: 10.0.0.53
  selector: {app: dns}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: a-udp, port: 54, protocol: UDP}
  - {name: a-tcp, port: 54, protocol: TCP}
  - {name: b-tcp, port: 56, protocol: TCP}
  - {name: b-udp, port: 56, protocol: UDP}`, `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: default}
spec:
  egress:
  - {port: {number: 53, protocol: TCP, name: dns}, hosts: ["*/*"]}
  - {hosts: ["*/*"]}`)
	var got []string
	for _, c := range cfg.Clusters {
		if strings.HasPrefix(c.GetName(), "outbound|") {
			got = append(got, c.GetName())
		}
	}
	if want := []string{"outbound|56||dns.default.svc.cluster.local"}; !slices.Equal(got, want) {
		t.Errorf("outbound clusters %v, want %v", got, want)
	}
	// The scope's copy keeps TCP 56 alone; its endpoints are still that
	// port's only, the pod once.
	if n, _ := tlsMarks(endpointsNamed(cfg, "outbound|56||dns.default.svc.cluster.local")); n != 1 {
		t.Errorf("outbound|56|| has %d endpoints, want 1", n)
	}
	if l := listenerNamed(cfg, "10.0.0.53_53"); l == nil {
		t.Errorf("no listener 10.0.0.53_53; have %v", names(cfg.Listeners))
	}
}
