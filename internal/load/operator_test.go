package load

import (
	"os"
	"path/filepath"
	"testing"
)

// Shapes of IstioOperator teams keep in git: nameless, namespaceless,
// install-only settings beside the mesh config.
const (
	operatorNoMesh = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  profile: minimal
  components:
    egressGateways:
    - name: istio-egressgateway
      enabled: false
`
	operatorWithMesh = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata:
  namespace: istio-system
  name: control-plane
spec:
  revision: blue
  meshConfig:
    defaultConfig:
      proxyMetadata: {ISTIO_META_DNS_CAPTURE: "true"}
    outboundTrafficPolicy: {mode: REGISTRY_ONLY}
  values:
    global:
      meshID: mesh-a
      istioNamespace: mesh-system
    meshConfig:
      outboundTrafficPolicy: {mode: ALLOW_ANY}
      accessLogFile: /dev/stdout
`
)

func TestIstioOperatorLoads(t *testing.T) {
	tests := []struct {
		name, yaml string
		objects    int
		want       []diagKey
	}{
		{"nameless", operatorNoMesh, 1, nil},
		{"named", operatorWithMesh, 1, nil},
		// Two nameless ones are two overlays, not one object defined twice.
		{"two nameless", operatorNoMesh + "---\n" + operatorNoMesh, 2, nil},
		{"misspelt field", operatorNoMesh + "  mehsConfig: {}\n", 0,
			[]diagKey{{"MC1003", 9, `unknown field "mehsConfig" (did you mean "meshConfig"?)`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, ds := Bytes("iop.yaml", []byte(tt.yaml))
			checkDiags(t, ds, tt.want)
			if len(objs) != tt.objects {
				t.Errorf("%d objects, want %d", len(objs), tt.objects)
			}
		})
	}
}

func TestMeshConfigFromIstioOperator(t *testing.T) {
	objs, ds := Bytes("iop.yaml", []byte(operatorNoMesh+"---\n"+operatorWithMesh))
	checkDiags(t, ds, nil)
	mc, ds := MeshConfig(objs, MeshOptions{})
	checkDiags(t, ds, nil)
	if mc.From.File != "iop.yaml" {
		t.Errorf("source = %v", mc.From)
	}
	pc := mc.DefaultConfig
	switch {
	case mc.OutboundTrafficPolicy.GetMode().String() != "REGISTRY_ONLY":
		t.Errorf("spec.meshConfig does not win over values.meshConfig: %v", mc.OutboundTrafficPolicy)
	case mc.AccessLogFile != "/dev/stdout":
		t.Errorf("values.meshConfig not read: %q", mc.AccessLogFile)
	case mc.RootNamespace != "mesh-system":
		t.Errorf("root namespace %q, want global.istioNamespace", mc.RootNamespace)
	case pc.MeshId != "mesh-a" || pc.DiscoveryAddress != "istiod-blue.mesh-system.svc:15012":
		t.Errorf("meshId %q, discovery address %q", pc.MeshId, pc.DiscoveryAddress)
	case pc.ProxyMetadata["ISTIO_META_DNS_CAPTURE"] != "true" || pc.ProxyAdminPort != 15000:
		t.Errorf("defaultConfig not merged: %v", pc)
	}
}

func TestMeshConfigOperatorFindingsAtTheirLine(t *testing.T) {
	text := operatorWithMesh + "      connectTimeout: 5\n"
	objs, _ := Bytes("iop.yaml", []byte(text))
	mc, ds := MeshConfig(objs, MeshOptions{})
	checkDiags(t, ds, []diagKey{{"MC1003", 19, "connectTimeout: expected a duration string"}})
	if ds[0].Object.Kind != "IstioOperator" || ds[0].Object.Name != "control-plane" {
		t.Errorf("finding names %v", ds[0].Object)
	}
	if mc.AccessLogFile != "" {
		t.Errorf("a rejected mesh config applied: %q", mc.AccessLogFile)
	}
}

func TestMeshConfigMapAndOperatorDisagree(t *testing.T) {
	tests := []struct {
		name, mesh string
		want       []diagKey
	}{
		{"same", "accessLogFile: /dev/stdout\noutboundTrafficPolicy: {mode: REGISTRY_ONLY}\nrootNamespace: mesh-system\n" +
			"defaultConfig: {meshId: mesh-a, discoveryAddress: istiod-blue.mesh-system.svc:15012, proxyMetadata: {ISTIO_META_DNS_CAPTURE: \"true\"}}\n", nil},
		{"different", "accessLogFile: /dev/stdout\n", []diagKey{{"MC1013", 8,
			"the mesh config of ConfigMap istio-system/istio differs from that of IstioOperator istio-system/control-plane in defaultConfig.discoveryAddress, defaultConfig.meshId, defaultConfig.proxyMetadata, outboundTrafficPolicy, rootNamespace;"}}},
		// What only the chart writes (tracing, default providers) is not
		// compared: meshc does not render it.
		{"only the chart's own fields", "defaultProviders: {metrics: [prometheus]}\n" +
			"accessLogFile: /dev/stdout\noutboundTrafficPolicy: {mode: REGISTRY_ONLY}\nrootNamespace: mesh-system\n" +
			"defaultConfig: {meshId: mesh-a, discoveryAddress: istiod-blue.mesh-system.svc:15012, proxyMetadata: {ISTIO_META_DNS_CAPTURE: \"true\"}, tracing: {zipkin: {address: zipkin.istio-system:9411}}}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, ds := Bytes("in.yaml", []byte(operatorWithMesh+"---\n"+meshConfigMap(tt.mesh)))
			checkDiags(t, ds, nil)
			mc, ds := MeshConfig(objs, MeshOptions{})
			checkDiags(t, ds, tt.want)
			if mc.RootNamespace != "istio-system" && tt.want != nil {
				t.Errorf("the ConfigMap does not win: root %q", mc.RootNamespace)
			}
		})
	}
}

func TestMeshConfigFileOperatorOrChartValues(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"iop.yaml":    operatorWithMesh,
		"values.yaml": "revision: blue\nglobal: {istioNamespace: mesh-system}\nmeshConfig:\n  accessLogFile: /dev/stdout\n  rootNamespce: x\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mc, ds := MeshConfig(nil, MeshOptions{File: filepath.Join(dir, "iop.yaml")})
	checkDiags(t, ds, nil)
	if mc.OutboundTrafficPolicy.GetMode().String() != "REGISTRY_ONLY" {
		t.Errorf("IstioOperator file not read: %v", mc.OutboundTrafficPolicy)
	}
	mc, ds = MeshConfig(nil, MeshOptions{File: filepath.Join(dir, "values.yaml")})
	checkDiags(t, ds, []diagKey{{"MC1003", 5, `unknown field "rootNamespce"`}})
	if mc.AccessLogFile != "/dev/stdout" || mc.RootNamespace != "mesh-system" || mc.DefaultConfig.DiscoveryAddress != "istiod-blue.mesh-system.svc:15012" {
		t.Errorf("chart values not read: %q %q %q", mc.AccessLogFile, mc.RootNamespace, mc.DefaultConfig.DiscoveryAddress)
	}
}
