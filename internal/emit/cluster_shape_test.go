package emit

import (
	"testing"
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
