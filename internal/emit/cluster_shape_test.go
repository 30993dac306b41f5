package emit

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
)

// TestSNIDnatAndExternalSubsetShape (issue 15 item 19): an SNI-DNAT
// cluster, whose TLS is dropped, gets no auto SNI from the rule's SIMPLE
// TLS; only the default cluster of a MESH_EXTERNAL service is marked
// external, not its subset clusters.
func TestSNIDnatAndExternalSubsetShape(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: default}
spec:
  hosts: [ext.example.com]
  location: MESH_EXTERNAL
  resolution: STATIC
  ports: [{number: 80, name: http, protocol: HTTP}]
  endpoints: [{address: 2.2.2.2, labels: {v: a}}]`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ext, namespace: default}
spec: {host: ext.example.com, subsets: [{name: a, labels: {v: a}}]}`,
		`apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec: {clusterIP: 10.0.0.6, selector: {app: api}, ports: [{name: http, port: 80, targetPort: 8080}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec: {host: api, trafficPolicy: {tls: {mode: SIMPLE}}, subsets: [{name: v1, labels: {version: v1}}]}`,
		gwNamespace, gwPod, gwGateway(`  servers:
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.local"]`),
	}
	router := compile(t, Options{Format: XDS}, "gw/gw-1", docs...)
	for _, name := range []string{"outbound_.80_._.api.default.svc.cluster.local", "outbound_.80_.v1_.api.default.svc.cluster.local"} {
		c := clusterNamed(router, name)
		if c == nil {
			t.Fatalf("no cluster %s", name)
		}
		if o := c.GetTypedExtensionProtocolOptions(); o != nil {
			t.Errorf("%s: protocol options %v, want none (no TLS, so no auto SNI)", name, o)
		}
	}
	if u := protocolOptions(t, clusterNamed(router, "outbound|80||api.default.svc.cluster.local")).GetUpstreamHttpProtocolOptions(); !u.GetAutoSni() {
		t.Errorf("the TLS cluster lost its auto SNI: %v", u)
	}
	sidecar := compile(t, Options{Format: XDS}, "default/client", docs...)
	for name, want := range map[string]bool{"outbound|80||ext.example.com": true, "outbound|80|a|ext.example.com": false} {
		_, got := clusterNamed(sidecar, name).GetMetadata().GetFilterMetadata()["istio"].GetFields()["external"]
		if got != want {
			t.Errorf("%s: external %v, want %v", name, got, want)
		}
	}
}

// tlsShape names how a cluster's TLS came out: "direct" (one ISTIO_MUTUAL
// socket), "matches" (auto mTLS by endpoint), "" (none).
func tlsShape(c *clusterv3.Cluster) string {
	switch {
	case c.GetTransportSocket() != nil:
		return "direct"
	case len(c.GetTransportSocketMatches()) > 0:
		return "matches"
	}
	return ""
}

// TestMutualTLSInference (issue 15 item 8): istiod infers auto mutual TLS
// from the rule's top-level policy for a default cluster and from the
// subset's own policy for a subset cluster, port-level settings aside; a
// Passthrough service (on a gateway too) or a PASSTHROUGH load balancer
// needs every endpoint of the port to have a sidecar. A subset cluster
// starts as its default cluster's type, so a subset load balancer does not
// undo ORIGINAL_DST; a load balancer that makes a DNS cluster ORIGINAL_DST
// leaves its resolver settings.
func TestMutualTLSInference(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: pt, namespace: default}
spec: {clusterIP: 10.0.0.6, selector: {app: pt}, ports: [{name: http, port: 80}, {name: tcp, port: 81}]}`,
		`apiVersion: v1
kind: Pod
metadata: {name: pt-1, namespace: default, labels: {app: pt, version: v1, security.istio.io/tlsMode: istio}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 10.1.0.2}`,
		`apiVersion: v1
kind: Pod
metadata: {name: pt-2, namespace: default, labels: {app: pt, version: v2, sidecar.istio.io/inject: "false"}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 10.1.0.3}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: pt, namespace: default}
spec:
  host: pt
  trafficPolicy:
    loadBalancer: {simple: PASSTHROUGH}
    portLevelSettings: [{port: {number: 81}, loadBalancer: {simple: ROUND_ROBIN}}]
  subsets:
  - {name: v2, labels: {version: v2}}
  - {name: hash, labels: {version: v1}, trafficPolicy: {loadBalancer: {consistentHash: {useSourceIp: true}}}}`,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: none, namespace: default}
spec: {hosts: [none.internal], addresses: [240.0.0.1], location: MESH_INTERNAL, resolution: NONE, ports: [{number: 80, name: http, protocol: HTTP}]}`,
		`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: dns, namespace: default}
spec:
  hosts: [dns.internal]
  location: MESH_INTERNAL
  resolution: DNS
  ports: [{number: 81, name: tcp, protocol: TCP}]
  endpoints: [{address: a.dns.internal, labels: {version: v1}}]`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: dns, namespace: default}
spec:
  host: dns.internal
  trafficPolicy: {portLevelSettings: [{port: {number: 81}, loadBalancer: {simple: PASSTHROUGH}}]}
  subsets: [{name: v1, labels: {version: v1}}]`,
		gwNamespace, gwPod, gwGateway(`  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]`),
	}
	sidecar := compile(t, Options{Format: XDS}, "default/client", docs...)
	router := compile(t, Options{Format: XDS}, "gw/gw-1", docs...)
	for _, tc := range []struct {
		cfg          *Config
		cluster, tls string
		typ          clusterv3.Cluster_DiscoveryType
		lb           clusterv3.Cluster_LbPolicy
		dnsSettings  bool
	}{
		// A non-injected endpoint under the top-level PASSTHROUGH: none.
		{sidecar, "outbound|80||pt.default.svc.cluster.local", "", clusterv3.Cluster_ORIGINAL_DST, clusterv3.Cluster_CLUSTER_PROVIDED, false},
		// The port-level ROUND_ROBIN does not hide the top-level PASSTHROUGH from the inference.
		{sidecar, "outbound|81||pt.default.svc.cluster.local", "", clusterv3.Cluster_EDS, clusterv3.Cluster_ROUND_ROBIN, false},
		// A subset infers from its own policy: mutual TLS, even to v2.
		{sidecar, "outbound|80|v2|pt.default.svc.cluster.local", "direct", clusterv3.Cluster_ORIGINAL_DST, clusterv3.Cluster_CLUSTER_PROVIDED, false},
		// Its consistent hash does not undo the default cluster's ORIGINAL_DST.
		{sidecar, "outbound|80|hash|pt.default.svc.cluster.local", "direct", clusterv3.Cluster_ORIGINAL_DST, clusterv3.Cluster_CLUSTER_PROVIDED, false},
		{sidecar, "outbound|81|hash|pt.default.svc.cluster.local", "matches", clusterv3.Cluster_EDS, clusterv3.Cluster_RING_HASH, false},
		// A port-level PASSTHROUGH on a DNS ServiceEntry.
		{sidecar, "outbound|81||dns.internal", "direct", clusterv3.Cluster_ORIGINAL_DST, clusterv3.Cluster_CLUSTER_PROVIDED, true},
		{sidecar, "outbound|81|v1|dns.internal", "direct", clusterv3.Cluster_ORIGINAL_DST, clusterv3.Cluster_CLUSTER_PROVIDED, false},
		// A resolution-NONE ServiceEntry without endpoints, on a gateway.
		{router, "outbound|80||none.internal", "", clusterv3.Cluster_EDS, clusterv3.Cluster_LEAST_REQUEST, false},
	} {
		c := clusterNamed(tc.cfg, tc.cluster)
		if c == nil {
			t.Errorf("no cluster %s", tc.cluster)
			continue
		}
		if got := tlsShape(c); got != tc.tls || c.GetType() != tc.typ || c.GetLbPolicy() != tc.lb || c.GetRespectDnsTtl() != tc.dnsSettings {
			t.Errorf("%s: TLS %q, %v, %v, DNS settings %v; want %q, %v, %v, %v", tc.cluster, got, c.GetType(), c.GetLbPolicy(), c.GetRespectDnsTtl(), tc.tls, tc.typ, tc.lb, tc.dnsSettings)
		}
		if c.GetType() == clusterv3.Cluster_ORIGINAL_DST && (c.GetLoadAssignment() != nil || c.GetEdsClusterConfig() != nil || c.GetLbConfig() != nil) {
			t.Errorf("%s: ORIGINAL_DST with endpoints or LB config", tc.cluster)
		}
	}
}
