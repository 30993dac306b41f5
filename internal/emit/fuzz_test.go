package emit

import (
	"os"
	"testing"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// FuzzEmit compiles every proxy of arbitrary manifests in one format and
// layout the fuzzer picks: whatever loads and resolves must never make
// emitting panic, and every problem must come back as a finding, not a
// crash. Its seeds run with go test in all four. One render an input keeps
// an execution cheap enough for coverage-guided fuzzing; run it with a short
// -fuzzminimizetime (see the Makefile), as Go's default minimizes each new
// input for a minute.
func FuzzEmit(f *testing.F) {
	for _, file := range []string{"../../examples/bookinfo/virtual-services.yaml", "../../examples/bookinfo/gateway.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		addAll(f, data)
	}
	addAll(f, []byte(`apiVersion: v1
kind: Namespace
metadata: {name: a, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a, labels: {app: p}}
spec: {containers: [{name: c, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.0.0.1}
---
apiVersion: v1
kind: Service
metadata: {name: p, namespace: a}
spec: {clusterIP: None, selector: {app: p}, ports: [{name: tcp, port: 80, targetPort: 8080}, {name: http, port: 81}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: s, namespace: a}
spec:
  ingress: [{port: {number: 8080, protocol: HTTP, name: w}, defaultEndpoint: "unix:///x"}]
  egress: [{port: {number: 0, protocol: HTTP, name: u}, bind: "unix://s", hosts: ["*/*"]}, {port: {number: 9, protocol: HTTP_PROXY, name: h}, hosts: ["./*"]}, {hosts: ["*/*"]}]
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: d, namespace: a}
spec: {host: p, trafficPolicy: {loadBalancer: {consistentHash: {httpCookie: {name: c}}}, tls: {mode: ISTIO_MUTUAL}}, subsets: [{name: s, labels: {app: p}}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: v, namespace: a}
spec: {hosts: [p], tcp: [{route: [{destination: {host: p, subset: s}, weight: 50}, {destination: {host: q}, weight: 50}]}], http: [{fault: {abort: {grpcStatus: UNAVAILABLE}}, mirror: {host: p}, route: [{destination: {host: p}}]}]}
`))
	// Aliases (a loop too), port-level mutual TLS, an egress proxy, PROXY
	// protocol, warmups and policies meshc does not build.
	addAll(f, []byte(`apiVersion: v1
kind: Namespace
metadata: {name: a, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a, labels: {app: p}}
spec: {containers: [{name: c, ports: [{containerPort: 8080}]}]}
status: {podIP: 10.0.0.1}
---
apiVersion: v1
kind: Service
metadata: {name: p, namespace: a}
spec: {clusterIP: 10.1.0.1, selector: {app: p}, ports: [{name: mongo, port: 27017}, {name: grpc-web, port: 81, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: x, namespace: a}
spec: {type: ExternalName, externalName: p.a.svc.cluster.local, ports: [{name: http, port: 81}]}
---
apiVersion: v1
kind: Service
metadata: {name: l1, namespace: a}
spec: {type: ExternalName, externalName: l2.a.svc.cluster.local}
---
apiVersion: v1
kind: Service
metadata: {name: l2, namespace: a}
spec: {type: ExternalName, externalName: l1.a.svc.cluster.local}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: p, namespace: a}
spec: {selector: {matchLabels: {app: p}}, portLevelMtls: {8080: {mode: DISABLE}, 9: {}}}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: a}
spec: {action: DENY, rules: [{}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: s, namespace: a}
spec:
  outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: x.a.svc.cluster.local, port: {number: 81}}}
  egress: [{port: {number: 81, protocol: HTTP, name: h}, hosts: ["./*"], captureMode: NONE}, {hosts: ["*/*"]}]
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: d, namespace: a}
spec: {host: p, trafficPolicy: {proxyProtocol: {version: V1}, retryBudget: {}, loadBalancer: {simple: ROUND_ROBIN, warmup: {duration: 1s}, localityLbSetting: {distribute: [{from: a, to: {b: 100}}]}}}}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: v, namespace: a}
spec: {hosts: [x], http: [{route: [{destination: {host: x}, weight: 100}, {destination: {host: p}}]}]}
`))
	f.Fuzz(func(t *testing.T, data []byte, xds, shared bool) {
		objs, _ := load.Bytes("fuzz.yaml", data)
		m := resolvetest.Resolve(objs)
		format := Bootstrap
		if xds {
			format = XDS
		}
		e := New(m, Options{Format: format, Shared: shared})
		for _, v := range m.Views {
			_, _, _ = e.Render(v)
		}
	})
}

// addAll seeds data in each format and layout.
func addAll(f *testing.F, data []byte) {
	for _, xds := range []bool{false, true} {
		for _, shared := range []bool{false, true} {
			f.Add(data, xds, shared)
		}
	}
}
