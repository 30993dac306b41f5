package routecheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/request"
)

// What istiod's simulation tests assert for requests into a sidecar under
// each mesh-wide mutual TLS mode: a workload serving a TCP port (70), an
// HTTP port (80) and a port of unknown protocol (81), and a port it does
// not serve (82). An expectation is a cluster, or the step the request
// stops at: filterChain when no chain takes it, networkFilter when the
// handshake or the connection manager fails it.
func TestInboundAsIstioSimulates(t *testing.T) {
	const workload = `apiVersion: v1
kind: Namespace
metadata: {name: default, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: foo, namespace: default, labels: {app: foo}}
spec: {containers: [{name: app, image: app}]}
status: {podIP: 1.1.1.1}
---
apiVersion: v1
kind: Service
metadata: {name: foo, namespace: default}
spec:
  clusterIP: 10.0.0.70
  selector: {app: foo}
  ports:
  - {name: tcp, port: 70}
  - {name: http, port: 80}
  - {name: auto, port: 81}
`
	const (
		noChain   = "stop:filterChain"
		refused   = "stop:networkFilter"
		tcp70     = "inbound|70||"
		http80    = "inbound|80||"
		auto81    = "inbound|81||"
		passBy    = "InboundPassthroughCluster"
		disable   = 0
		permitted = 1
		strict    = 2
	)
	cases := []struct {
		name, target, protocol, tls string
		want                        [3]string // DISABLE, PERMISSIVE, STRICT
	}{
		{"tcp", "foo:70", "tcp", "plaintext", [3]string{tcp70, tcp70, noChain}},
		{"http to tcp", "http://foo:70/", "http", "plaintext", [3]string{tcp70, tcp70, noChain}},
		{"tls to tcp", "foo:70", "tcp", "tls", [3]string{tcp70, tcp70, refused}},
		{"https to tcp", "http://foo:70/", "http", "tls", [3]string{tcp70, tcp70, refused}},
		{"mtls tcp to tcp", "foo:70", "tcp", "mtls", [3]string{tcp70, tcp70, tcp70}},
		{"mtls http to tcp", "http://foo:70/", "http", "mtls", [3]string{tcp70, tcp70, tcp70}},
		{"http", "http://foo:80/", "http", "plaintext", [3]string{http80, http80, noChain}},
		{"tls to http", "foo:80", "tcp", "tls", [3]string{refused, noChain, refused}},
		{"https to http", "http://foo:80/", "http", "tls", [3]string{refused, noChain, refused}},
		{"mtls to http", "http://foo:80/", "http", "mtls", [3]string{refused, http80, http80}},
		{"tcp to http", "foo:80", "tcp", "plaintext", [3]string{refused, refused, noChain}},
		{"http to the auto port", "http://foo:81/", "http", "plaintext", [3]string{auto81, auto81, noChain}},
		{"http2 to the auto port", "http://foo:81/", "http2", "plaintext", [3]string{auto81, auto81, noChain}},
		{"tcp to the auto port", "foo:81", "tcp", "plaintext", [3]string{auto81, auto81, noChain}},
		{"tls to the auto port", "foo:81", "tcp", "tls", [3]string{auto81, auto81, refused}},
		{"https to the auto port", "http://foo:81/", "http", "tls", [3]string{auto81, auto81, refused}},
		{"mtls tcp to the auto port", "foo:81", "tcp", "mtls", [3]string{auto81, auto81, auto81}},
		{"mtls http to the auto port", "http://foo:81/", "http", "mtls", [3]string{auto81, auto81, auto81}},
		{"http to a port not served", "http://foo:82/", "http", "plaintext", [3]string{passBy, passBy, noChain}},
		{"tcp to a port not served", "foo:82", "tcp", "plaintext", [3]string{passBy, passBy, noChain}},
		{"tls to a port not served", "foo:82", "tcp", "tls", [3]string{passBy, passBy, refused}},
		{"https to a port not served", "http://foo:82/", "http", "tls", [3]string{passBy, passBy, refused}},
		{"mtls to a port not served", "http://foo:82/", "http", "mtls", [3]string{passBy, passBy, passBy}},
	}
	for mode, name := range []string{disable: "DISABLE", permitted: "PERMISSIVE", strict: "STRICT"} {
		t.Run(name, func(t *testing.T) {
			f := &File{Path: "inbound-" + name}
			for _, tc := range cases {
				c := Case{Name: tc.name, Call: request.Call{From: "default/foo", Target: tc.target, Protocol: tc.protocol, TLS: tc.tls, Inbound: true}}
				if stage, ok := strings.CutPrefix(tc.want[mode], "stop:"); ok {
					c.Expect.StoppedAt = &stage
				} else {
					cluster := tc.want[mode]
					c.Expect.Cluster = &cluster
				}
				f.Tests = append(f.Tests, c)
			}
			pa := fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: istio-system}\nspec: {mtls: {mode: %s}}\n", name)
			runIn(t, workload+"---\n"+pa, f)
		})
	}
}
