package emit

import (
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
	`apiVersion: v1
kind: Namespace
metadata: {name: gw}`,
	`apiVersion: v1
kind: Pod
metadata: {name: gw-1, namespace: gw, labels: {istio: gw, sidecar.istio.io/inject: "true"}}
spec: {containers: [{name: istio-proxy, image: x}]}
status: {podIP: 10.2.0.1}`,
	`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: gw}
spec:
  selector: {istio: gw}
  servers:
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.local"]`,
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
