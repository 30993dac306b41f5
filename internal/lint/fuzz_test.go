package lint

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/explain"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// FuzzPipeline runs every pass after loading (hierarchy, resolution,
// analyzers, route building, explain) on arbitrary manifests: whatever
// loads must never make a later pass panic.
func FuzzPipeline(f *testing.F) {
	// Small seeds: the fuzzer's mutator slows to a crawl on inputs of
	// tens of kilobytes, such as a whole example directory.
	// testdata/seeds holds one small manifest per diagnostic code: the
	// case that makes it fire.
	seeds, err := filepath.Glob("testdata/seeds/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range append([]string{"../../examples/bookinfo/virtual-services.yaml", "../../examples/hierarchy/hierarchy.yaml", "../../examples/hierarchy/mesh-policy.yaml"}, seeds...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: r, namespace: a}
spec: {hosts: ["*.x", r], gateways: [mesh, g], http: [{match: [{uri: {prefix: /}, port: 80, sourceLabels: {a: b}}], delegate: {name: d}}, {route: [{destination: {host: r, subset: s, port: {number: 1}}, weight: 0}]}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: d, namespace: a}
spec: {http: [{match: [{uri: {regex: .*}}], route: [{destination: {host: x}}]}]}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: d, namespace: a}
spec: {host: "*", workloadSelector: {matchLabels: {}}, exportTo: ["."], subsets: [{name: s}, {name: s}]}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: s, namespace: a}
spec: {workloadSelector: {labels: {}}, egress: [{port: {number: 80, protocol: http_proxy}, hosts: ["~/*", "./*", "bad"]}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: a, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a}
spec: {containers: [{name: c}]}
---
apiVersion: hnc.x-k8s.io/v1alpha2
kind: HierarchyConfiguration
metadata: {name: hierarchy, namespace: a}
spec: {parent: a}
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := load.Bytes("fuzz.yaml", data)
		m := resolvetest.Resolve(objs)
		ds := analyze(t, m, Analyzers(), Options{})
		for _, v := range m.Views {
			m.OutboundRoutes(v)
			var b bytes.Buffer
			if err := explain.WriteText(&b, explain.ProxyReport(m, v, ds), explain.TextOptions{Verbose: true}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
