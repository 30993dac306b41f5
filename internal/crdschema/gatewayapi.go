package crdschema

import (
	"embed"
	"fmt"
	"reflect"
	"strings"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// GatewayAPIVersion is the sigs.k8s.io/gateway-api release whose CRDs are
// in gatewayapi/: the module version meshc decodes the objects with.
const GatewayAPIVersion = "v1.6.0"

// gatewayAPIFiles are the experimental-channel CRDs of the Gateway API
// kinds meshc decodes, one file per resource (gatewayapi/<plural>.pb),
// made from the module's config/crd/experimental by `go test -update` in
// this package with their descriptions left out, in the API server's
// protocol buffer encoding: it decodes in a tenth of the time JSON takes,
// which a run pays on its first Gateway API object. The experimental channel
// serves every version Istio reads (TCPRoute v1alpha2, TLSRoute v1alpha3,
// ...) and has the experimental fields the Go types decode; standard is a
// subset of it. The CRDs are Copyright The Kubernetes Authors, under the
// Apache License 2.0.
//
//go:embed gatewayapi/*.pb
var gatewayAPIFiles embed.FS

// compiler compiles one served version of a CRD on first use.
type compiler = func() (*Schema, error)

// gatewayAPISchemas holds, per resource, its served versions' compilers,
// read on first use of the resource: compiling the CEL rules of HTTPRoute
// takes a tenth of a second or more, which a run without such an object must
// not pay.
var gatewayAPISchemas = sync.OnceValue(func() map[string]func() (map[string]compiler, error) {
	out := map[string]func() (map[string]compiler, error){}
	entries, _ := gatewayAPIFiles.ReadDir("gatewayapi")
	for _, e := range entries {
		file := "gatewayapi/" + e.Name()
		out[strings.TrimSuffix(e.Name(), ".pb")] = sync.OnceValues(func() (map[string]compiler, error) {
			crd, err := readCRD(file)
			if err != nil {
				return nil, err
			}
			versions := map[string]compiler{}
			var mu sync.Mutex
			compiled := map[string]*Schema{}
			for _, v := range crd.Spec.Versions {
				if !v.Served {
					continue
				}
				versions[v.Name] = sync.OnceValues(func() (*Schema, error) {
					mu.Lock()
					defer mu.Unlock()
					// Versions whose schemas are equal (most are, once
					// the descriptions are gone) share one compilation.
					// They are compared when a second version is asked
					// for, which few inputs do, not on the first.
					for _, w := range crd.Spec.Versions {
						if s := compiled[w.Name]; s != nil && reflect.DeepEqual(w.Schema, v.Schema) {
							return s, nil
						}
					}
					s, err := Compile(crd, v.Name)
					if err == nil {
						compiled[v.Name] = s
					}
					return s, err
				})
			}
			return versions, nil
		})
	}
	return out
})

func readCRD(file string) (*apiextv1.CustomResourceDefinition, error) {
	data, err := gatewayAPIFiles.ReadFile(file)
	if err != nil {
		return nil, err
	}
	crd := new(apiextv1.CustomResourceDefinition)
	if err := crd.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return crd, nil
}

// GatewayAPI returns the schema of a Gateway API resource (by its plural,
// "httproutes") at a served version; ok is false when the CRDs have no
// such resource or version.
func GatewayAPI(plural, version string) (s *Schema, ok bool, err error) {
	read, ok := gatewayAPISchemas()[plural]
	if !ok {
		return nil, false, nil
	}
	versions, err := read()
	if err != nil {
		return nil, true, err
	}
	compile, ok := versions[version]
	if !ok {
		return nil, false, nil
	}
	s, err = compile()
	return s, true, err
}
