package resolve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/load/loadtest"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// mesh loads YAML documents and resolves them with the given mesh config
// overrides (a MeshConfig YAML, or "").
func mesh(t *testing.T, meshYAML string, docs ...string) *Mesh {
	t.Helper()
	objs := objects(t, docs...)
	var mc model.MeshConfig
	if meshYAML != "" {
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata:\n  mesh: |\n    " + strings.ReplaceAll(strings.TrimSpace(meshYAML), "\n", "\n    ") + "\n"
		cmObjs, _ := load.Bytes("mesh.yaml", []byte(cm))
		var mds []diag.Diagnostic
		mc, mds = load.MeshConfig(cmObjs, load.MeshOptions{})
		if len(mds) > 0 {
			t.Fatalf("mesh config: %v", mds)
		}
	} else {
		mc, _ = load.MeshConfig(nil, load.MeshOptions{})
	}
	return resolveObjects(t, objs, hierarchy.Options{}, Options{Mesh: mc})
}

// objects loads YAML documents (loadtest.Objects).
func objects(t *testing.T, docs ...string) []model.Object {
	t.Helper()
	return loadtest.Objects(t, docs...)
}

// svc builds a mesh service directly, for cases Kubernetes could not
// produce from YAML (docs/semantics/cases.md §8 "(model)").
type svcOpt func(*Service)

func svc(h, ns string, opts ...svcOpt) *Service {
	s := &Service{Host: host.Name(h), Namespace: ns, Name: h, Resolution: ClientSideLB, Registry: External,
		exportTo: newExportTo(nil, []string{"*"}, ns)}
	for _, o := range opts {
		o(s)
	}
	return s
}

func ports(nums ...uint32) svcOpt {
	return func(s *Service) {
		s.Ports = nil
		for _, n := range nums {
			s.Ports = append(s.Ports, Port{Name: fmt.Sprintf("p%d", n), Number: n, Protocol: protocol.HTTP})
		}
	}
}

func kube(s *Service)             { s.Registry = Kubernetes }
func named(n string) svcOpt       { return func(s *Service) { s.Name = n } }
func created(sec int64) svcOpt    { return func(s *Service) { s.Created = time.Unix(sec, 0) } }
func dnsResolution(s *Service)    { s.Resolution = DNSLB }
func selector(k, v string) svcOpt { return func(s *Service) { s.Selector = map[string]string{k: v} } }
func exports(e ...string) svcOpt {
	return func(s *Service) { s.exportTo = newExportTo(e, []string{"*"}, s.Namespace) }
}
func hostsOf(ss []*Service) []string {
	return mapSlice(ss, func(s *Service) string { return string(s.Host) })
}

// describeServices renders "host@ns[ports]" for comparisons.
func describeServices(ss []*Service) []string {
	return mapSlice(ss, func(s *Service) string {
		p := mapSlice(s.Ports, func(p Port) string { return fmt.Sprint(p.Number) })
		return fmt.Sprintf("%s@%s[%s]", s.Host, s.Namespace, strings.Join(p, ","))
	})
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, 0, len(in))
	for _, x := range in {
		out = append(out, f(x))
	}
	return out
}

// sidecarYAML builds a Sidecar manifest.
func sidecarYAML(ns, name, spec string) string {
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: %s, namespace: %s}\nspec: %s\n", name, ns, spec)
}

// scopeFor builds a scope for a Sidecar spec (YAML flow) over services, as
// istiod would for a proxy in proxyNs.
func scopeFor(t *testing.T, proxyNs, spec string, services ...*Service) *Scope {
	t.Helper()
	var choice SidecarChoice
	if spec != "" {
		// Without admission: these specs are shorthand (short egress
		// names, empty specs) for the scope rules under test.
		objs, ds := load.BytesWithoutAdmission("sc.yaml", []byte(sidecarYAML(proxyNs, "sc", spec)))
		if len(ds) > 0 || len(objs) != 1 {
			t.Fatalf("sidecar: %v", ds)
		}
		choice = SidecarChoice{Sidecar: objs[0].(*model.Sidecar), Reason: "namespace default"}
	}
	return buildScope(newRegistry(services), nil, "cluster.local", choice, proxyNs)
}

// resolveObjects runs the hierarchy stage and Resolve over objs, as a
// compile does.
func resolveObjects(tb testing.TB, objs []model.Object, hopts hierarchy.Options, opts Options) *Mesh {
	tb.Helper()
	h, err := hierarchy.Run(context.Background(), objs, hopts, hierarchy.PropagateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	m, err := Resolve(context.Background(), h, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
