package load

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	meshv1 "istio.io/api/mesh/v1alpha1"
)

func meshConfigMap(mesh string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: istio\n  namespace: istio-system\ndata:\n  mesh: |\n" + indent(mesh, "    ")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}

func TestMeshConfigDefaults(t *testing.T) {
	mc, ds := MeshConfig(nil, MeshOptions{})
	if len(ds) > 0 {
		t.Fatalf("diagnostics: %s", dump(ds))
	}
	if mc.RootNamespace != "istio-system" || mc.TrustDomain != "cluster.local" || mc.DomainSuffix != "cluster.local" {
		t.Errorf("root %q trust %q domain %q", mc.RootNamespace, mc.TrustDomain, mc.DomainSuffix)
	}
	for name, got := range map[string][]string{
		"service": mc.DefaultServiceExportTo, "virtual service": mc.DefaultVirtualServiceExportTo, "destination rule": mc.DefaultDestinationRuleExportTo,
	} {
		if !reflect.DeepEqual(got, []string{"*"}) {
			t.Errorf("default %s exportTo = %v", name, got)
		}
	}
	if mc.OutboundTrafficPolicy.GetMode() != meshv1.MeshConfig_OutboundTrafficPolicy_ALLOW_ANY ||
		!mc.EnableAutoMtls.GetValue() || mc.ConnectTimeout.AsDuration() != 10*time.Second ||
		mc.ProxyListenPort != 15001 || mc.ProxyInboundListenPort != 15006 ||
		mc.InboundTrafficPolicy.GetMode() != meshv1.MeshConfig_InboundTrafficPolicy_PASSTHROUGH ||
		mc.DnsRefreshRate.AsDuration() != time.Minute || !mc.LocalityLbSetting.GetEnabled().GetValue() {
		t.Errorf("defaults differ from istiod's: %v", mc.MeshConfig)
	}
	if mc.From.File != "" {
		t.Errorf("defaults should have no source, got %v", mc.From)
	}
}

func TestMeshConfigFromConfigMap(t *testing.T) {
	tests := []struct {
		name  string
		mesh  string
		check func(t *testing.T, mc *meshv1.MeshConfig)
		want  []diagKey
	}{
		{"overrides replace whole fields", "rootNamespace: mesh-root\ndefaultServiceExportTo: [\".\"]\nconnectTimeout: 3s\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {
				if mc.RootNamespace != "mesh-root" || !reflect.DeepEqual(mc.DefaultServiceExportTo, []string{"."}) || mc.ConnectTimeout.AsDuration() != 3*time.Second {
					t.Errorf("got root %q exports %v timeout %v", mc.RootNamespace, mc.DefaultServiceExportTo, mc.ConnectTimeout.AsDuration())
				}
				if !reflect.DeepEqual(mc.DefaultVirtualServiceExportTo, []string{"*"}) {
					t.Errorf("untouched field changed: %v", mc.DefaultVirtualServiceExportTo)
				}
			}, nil},
		{"an empty outboundTrafficPolicy means REGISTRY_ONLY", "outboundTrafficPolicy: {}\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {
				if mc.OutboundTrafficPolicy.GetMode() != meshv1.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY {
					t.Errorf("mode = %v", mc.OutboundTrafficPolicy.GetMode())
				}
			}, nil},
		{"proto names are accepted as istiod accepts them", "root_namespace: other\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {
				if mc.RootNamespace != "other" {
					t.Errorf("root = %q", mc.RootNamespace)
				}
			}, nil},
		{"defaultConfig merges into the default proxy config", "defaultConfig:\n  concurrency: 2\n  proxyMetadata: {A: b}\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {
				pc := mc.DefaultConfig
				if pc.GetConcurrency().GetValue() != 2 || pc.ProxyAdminPort != 15000 || pc.ProxyMetadata["A"] != "b" {
					t.Errorf("proxy config = %v", pc)
				}
			}, nil},
		{"trustDomainAliases are kept sorted, each once", "trustDomainAliases: [old.net, cluster.local, old.net]\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {
				if want := []string{"cluster.local", "old.net"}; !reflect.DeepEqual(mc.TrustDomainAliases, want) {
					t.Errorf("aliases = %v, want %v", mc.TrustDomainAliases, want)
				}
			}, nil},
		{"unknown fields are warned about and the rest applies", "rootNamespace: r2\nrootNamespce: typo\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {
				if mc.RootNamespace != "r2" {
					t.Errorf("root = %q", mc.RootNamespace)
				}
			}, []diagKey{{"MC1003", 9, `unknown field "rootNamespce" (did you mean "rootNamespace"?); istiod ignores it`}}},
		{"a wrong type makes istiod fall back to defaults", "rootNamespace: r3\nconnectTimeout: 10\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {
				if mc.RootNamespace != "istio-system" {
					t.Errorf("root = %q, want the default", mc.RootNamespace)
				}
			}, []diagKey{{"MC1003", 9, "connectTimeout: expected a duration string"}}},
		{"broken YAML", "rootNamespace: [\n",
			func(t *testing.T, mc *meshv1.MeshConfig) {}, []diagKey{{"MC1001", 8, "mesh config"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, ds := Bytes("cm.yaml", []byte(meshConfigMap(tt.mesh)))
			if len(ds) > 0 {
				t.Fatalf("load: %s", dump(ds))
			}
			mc, ds := MeshConfig(objs, MeshOptions{})
			checkDiags(t, ds, tt.want)
			if mc.From.File != "cm.yaml" {
				t.Errorf("source = %v", mc.From)
			}
			tt.check(t, mc.MeshConfig)
		})
	}
}

func TestMeshConfigOtherNamespaceIgnored(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: default}\ndata: {mesh: 'rootNamespace: nope'}\n"
	objs, _ := Bytes("cm.yaml", []byte(cm))
	mc, _ := MeshConfig(objs, MeshOptions{})
	if mc.RootNamespace != "istio-system" {
		t.Errorf("a ConfigMap outside istio-system was used: %q", mc.RootNamespace)
	}
	mc, _ = MeshConfig(objs, MeshOptions{IstioNamespace: "default"})
	if mc.RootNamespace != "nope" {
		t.Errorf("IstioNamespace not honoured: %q", mc.RootNamespace)
	}
}

func TestMeshConfigFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "mesh.yaml")
	if err := os.WriteFile(plain, []byte("rootNamespace: from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cm := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(cm, []byte(meshConfigMap("rootNamespace: from-cm-file\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs, _ := Bytes("in.yaml", []byte(meshConfigMap("rootNamespace: from-input\n")))
	for file, want := range map[string]string{plain: "from-file", cm: "from-cm-file"} {
		mc, ds := MeshConfig(inputs, MeshOptions{File: file})
		if len(ds) > 0 || mc.RootNamespace != want || mc.From.File != file {
			t.Errorf("%s: root %q from %v, diagnostics %s", file, mc.RootNamespace, mc.From, dump(ds))
		}
	}
	_, ds := MeshConfig(nil, MeshOptions{File: filepath.Join(dir, "missing.yaml")})
	checkDiags(t, ds, []diagKey{{"MC1006", 0, "mesh config: cannot read"}})
}
