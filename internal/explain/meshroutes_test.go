package explain

import (
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestMeshRouteSources: a sidecar's route made from a mesh (GAMMA)
// HTTPRoute names the HTTPRoute and its rule, and points at the rule's
// line.
func TestMeshRouteSources(t *testing.T) {
	docs := []string{`apiVersion: v1
kind: Namespace
metadata: {name: app, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec: {clusterIP: 10.0.0.1, selector: {app: web}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-v2, namespace: app}
spec: {clusterIP: 10.0.0.2, selector: {app: web, v: "2"}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: app}
spec: {containers: [{name: c, image: i}]}`, `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: split, namespace: app}
spec:
  parentRefs: [{group: "", kind: Service, name: web}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v2}}]
    backendRefs: [{name: web-v2, port: 80}]
  - backendRefs: [{name: web, port: 80}]`}
	m := resolvetest.Mesh(t, docs...)
	v, ok := m.View("app", "client")
	if !ok {
		t.Fatal("no proxy app/client")
	}
	rep := ProxyReport(m, v, nil)
	rep.AddRoutes(m, v)
	lines := strings.Split(strings.Join(docs, "\n---\n"), "\n")
	var got []string
	for _, table := range rep.Routes {
		for _, g := range table.VirtualHosts {
			if table.Name != "80" || g.Name != "web.app.svc.cluster.local:80" {
				continue
			}
			for i, r := range g.Routes {
				got = append(got, r.Name+" <- "+r.From)
				at := []string{"- matches:", "- backendRefs: [{name: web,"}[min(i, 1)]
				if r.Source == nil || r.Source.Line < 1 || r.Source.Line > len(lines) || !strings.Contains(lines[r.Source.Line-1], at) {
					t.Errorf("route %s: source %+v, want the line holding %q", r.Name, r.Source, at)
				}
			}
		}
	}
	want := "app.split.0 <- HTTPRoute app/split spec.rules[0]|app.split.1 <- HTTPRoute app/split spec.rules[1]"
	if strings.Join(got, "|") != want {
		t.Errorf("routes of web:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
}
