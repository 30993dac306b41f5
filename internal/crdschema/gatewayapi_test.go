package crdschema

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/testfiles"
)

// gatewayAPIModule is where the go command keeps the sigs.k8s.io/gateway-api
// module the build uses, and its version.
func gatewayAPIModule(t *testing.T) (dir, version string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Skipf("go list of the gateway-api module: %v", err)
	}
	dir, version, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	if dir == "" {
		t.Skip("the gateway-api module is not downloaded")
	}
	return dir, version
}

// TestGatewayAPIFilesMatchModule makes gatewayapi/ from the module's
// experimental CRDs (go test -update rewrites it) and checks that it holds
// exactly the Gateway API kinds meshc decodes, serving the versions the
// kind registry says, and that the protocol buffer encoding keeps every
// field of the CRD.
func TestGatewayAPIFilesMatchModule(t *testing.T) {
	dir, version := gatewayAPIModule(t)
	if version != GatewayAPIVersion {
		t.Errorf("go.mod has sigs.k8s.io/gateway-api %s, gatewayapi/ is of %s: update GatewayAPIVersion and run go test -update", version, GatewayAPIVersion)
	}
	var want []string
	for _, k := range model.Kinds() {
		if k.Family != model.GatewayAPI || !k.Decoded() {
			continue
		}
		want = append(want, k.Plural+".pb")
		data, err := os.ReadFile(filepath.Join(dir, "config", "crd", "experimental", k.Group+"_"+k.Plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		compact, err := withoutDescriptions(data)
		if err != nil {
			t.Fatalf("%s: %v", k.Plural, err)
		}
		var crd apiextv1.CustomResourceDefinition
		if err := json.Unmarshal(compact, &crd); err != nil {
			t.Fatal(err)
		}
		pb, err := crd.Marshal()
		if err != nil {
			t.Fatalf("%s: %v", k.Plural, err)
		}
		file := filepath.Join("gatewayapi", k.Plural+".pb")
		testfiles.Golden(t, file, pb)
		embedded, err := readCRD(filepath.ToSlash(file))
		if err != nil {
			t.Fatal(err)
		}
		crd.TypeMeta = metav1.TypeMeta{} // the encoding's envelope holds it
		if !equality.Semantic.DeepEqual(embedded, &crd) {
			t.Errorf("%s: the embedded CRD differs from the module's", k.Plural)
		}

		var served []string
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served = append(served, v.Name)
			}
		}
		if !sameSet(served, k.Versions) {
			t.Errorf("%s: the CRD serves %v, the kind registry says %v", k.Kind, served, k.Versions)
		}
	}
	entries, err := gatewayAPIFiles.ReadDir("gatewayapi")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range entries {
		have = append(have, e.Name())
	}
	if !sameSet(have, want) {
		t.Errorf("gatewayapi/ holds %v, want %v", have, want)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

// withoutDescriptions turns a CRD's YAML into JSON without the schemas'
// descriptions, which are nearly all of its size and none of its rules.
func withoutDescriptions(data []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		return nil, err
	}
	return json.Marshal(dropDescriptions(v))
}

// dropDescriptions removes every "description" whose value is text: a
// schema's description. A property named description is a schema, not
// text, and stays.
func dropDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if _, text := e.(string); text && k == "description" {
				delete(x, k)
				continue
			}
			x[k] = dropDescriptions(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropDescriptions(e)
		}
	}
	return v
}

// TestGatewayAPIVersionsShareSchemas: two served versions of a resource
// share one compiled schema when their schemas are equal, and only then.
func TestGatewayAPIVersionsShareSchemas(t *testing.T) {
	shared := 0
	for _, k := range model.Kinds() {
		if k.Family != model.GatewayAPI || !k.Decoded() {
			continue
		}
		crd, err := readCRD("gatewayapi/" + k.Plural + ".pb")
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range crd.Spec.Versions {
			for _, w := range crd.Spec.Versions[:i] {
				if !v.Served || !w.Served {
					continue
				}
				sv, _, err := GatewayAPI(k.Plural, v.Name)
				if err != nil {
					t.Fatal(err)
				}
				sw, _, err := GatewayAPI(k.Plural, w.Name)
				if err != nil {
					t.Fatal(err)
				}
				if equal := reflect.DeepEqual(v.Schema, w.Schema); equal != (sv == sw) {
					t.Errorf("%s %s and %s: schemas equal %v, compiled once %v", k.Plural, w.Name, v.Name, equal, sv == sw)
				} else if equal {
					shared++
				}
			}
		}
	}
	if shared == 0 {
		t.Error("no two versions share a schema")
	}
}
