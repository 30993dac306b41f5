package routecheck

import "testing"

// What istiod's simulation tests assert for a headless service: the
// client's DNS gives the pod's address, and every port, whatever its
// protocol and the client's, reaches the service's cluster. Through
// meshc test, names and all.
func TestHeadlessAsIstioSimulates(t *testing.T) {
	const manifests = `apiVersion: v1
kind: Namespace
metadata: {name: default, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: default}
spec: {containers: [{name: app, image: app}]}
---
apiVersion: v1
kind: Service
metadata: {name: headless, namespace: default}
spec:
  clusterIP: None
  selector: {app: headless}
  ports:
  - {name: http, port: 80}
  - {name: auto, port: 81}
  - {name: tcp, port: 82}
  - {name: tls, port: 83}
  - {name: https, port: 84}
---
apiVersion: v1
kind: Pod
metadata: {name: headless-0, namespace: default, labels: {app: headless}}
spec: {containers: [{name: app, image: app}]}
status: {podIP: 1.2.3.4}
`
	f, err := Parse("headless.yaml", []byte(`tests:
- {name: http on the HTTP port, from: default/client, target: "http://headless.default.svc.cluster.local:80/",
   expect: {cluster: "outbound|80||headless.default.svc.cluster.local"}}
- {name: http on the auto port, from: default/client, target: "http://headless.default.svc.cluster.local:81/",
   expect: {cluster: "outbound|81||headless.default.svc.cluster.local"}}
- {name: http over TLS on the auto port, from: default/client, target: "https://headless.default.svc.cluster.local:81/",
   expect: {cluster: "outbound|81||headless.default.svc.cluster.local"}}
- {name: tcp on the auto port, from: default/client, target: "headless:81",
   headers: {host: headless.default.svc.cluster.local}, expect: {cluster: "outbound|81||headless.default.svc.cluster.local"}}
- {name: tcp on the TCP port, from: default/client, target: "headless:82",
   expect: {cluster: "outbound|82||headless.default.svc.cluster.local"}}
- {name: TLS by the short name, from: default/client, target: "headless.default:83", tls: tls,
   expect: {cluster: "outbound|83||headless.default.svc.cluster.local"}}
- {name: https by the short name, from: default/client, target: "https://headless.default:84/",
   expect: {cluster: "outbound|84||headless.default.svc.cluster.local"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	runIn(t, manifests, f)
}
