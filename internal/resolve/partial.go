package resolve

import (
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// StandInName is the name of a namespace's stand-in proxy: "ns/*" reads as
// "any proxy of ns".
const StandInName = "*"

// standInProxies returns one stand-in proxy for each namespace whose
// proxies the input does not show, so that analyzers judge what those
// proxies would see (docs/diagnostics.md, "Findings without workloads").
// Most configuration repositories keep Istio objects apart from the
// workloads, or leave injection to a namespace label set in the cluster;
// without stand-ins every per-proxy check would be silent there.
//
// A namespace gets one when no sidecar proxy of the input runs in it, it
// holds an object of the input or is labelled for injection, the injector
// would not skip it (system namespaces, istio-injection=disabled,
// namespaces the mesh config's discovery selectors leave out), and it is
// not the root namespace, whose objects configure the whole mesh and
// whose workloads are rarely injected. A stand-in has no labels: it sees
// the namespace default Sidecar (or the root's), as a workload that no
// selector picks would.
func standInProxies(objs []model.Object, proxies []*Proxy, nsLabels func(string) map[string]string, rootNs string, watched func(string) bool) []*Proxy {
	hasSidecar := map[string]bool{}
	for _, p := range proxies {
		if p.Type == SidecarProxy {
			hasSidecar[p.Namespace] = true
		}
	}
	var nss []string
	seen := map[string]bool{}
	for _, o := range objs {
		m := o.Meta()
		ns := m.Namespace
		if ns == "" {
			if _, isNs := o.(*model.Namespace); !isNs {
				continue
			}
			ns = m.Name
			if l := nsLabels(ns); l["istio-injection"] != "enabled" && l["istio.io/rev"] == "" {
				continue // an empty namespace nobody marked for the mesh
			}
		}
		if seen[ns] {
			continue
		}
		seen[ns] = true
		if hasSidecar[ns] || ns == rootNs || SystemNamespace(ns) || !watched(ns) || nsLabels(ns)["istio-injection"] == "disabled" {
			continue
		}
		nss = append(nss, ns)
	}
	slices.Sort(nss)
	out := make([]*Proxy, len(nss))
	for i, ns := range nss {
		out[i] = &Proxy{Namespace: ns, Name: StandInName, Kind: "Namespace", Type: SidecarProxy, ServiceAccount: "default", StandIn: true,
			Injection: "stand-in: no proxy of this namespace is in the input"}
	}
	return out
}

// inputNamespaces records what the input says about namespaces, for
// Describes.
type inputNamespaces struct {
	withServices map[string]bool // namespaces holding a Service or ServiceEntry
	declares     bool            // the input holds Namespace objects
}

func newInputNamespaces(objs []model.Object) inputNamespaces {
	in := inputNamespaces{withServices: map[string]bool{}}
	for _, o := range objs {
		switch x := o.(type) {
		case *model.Service, *model.ServiceEntry:
			in.withServices[x.Meta().Namespace] = true
		case *model.Namespace:
			in.declares = true
		}
	}
	return in
}

// DeclaresNamespaces reports whether the input holds Namespace objects, so
// that a namespace it does not have can be taken not to exist.
func (m *Mesh) DeclaresNamespaces() bool { return m.input.declares }

// NamespaceExists reports whether the input has namespace ns: a Namespace
// object, one a subnamespace anchor creates, one objects live in, or the
// root namespace, where istiod runs.
func (m *Mesh) NamespaceExists(ns string) bool {
	if ns == m.Config.GetRootNamespace() {
		return true
	}
	n := m.Hierarchy.Namespaces[ns]
	return n != nil && n.Exists
}

// Describes reports whether the input is expected to hold the service
// of h, so that its absence is a finding rather than a repository that
// keeps its Services elsewhere (docs/diagnostics.md, "Findings without
// workloads"). A Kubernetes service name, NAME.NS.svc.<domain suffix>,
// is described when the input holds a Service or ServiceEntry of NS, or
// declares Namespaces and NS does not exist. Any other host can only come
// from a ServiceEntry, which the configuration itself must provide: it is
// always described.
func (m *Mesh) Describes(h host.Name) bool {
	ns, ok := m.KubernetesNamespace(h)
	if !ok {
		return true
	}
	return m.input.withServices[ns] || m.input.declares && !m.NamespaceExists(ns)
}

// KubernetesNamespace returns NS of a host NAME.NS.svc.<domain suffix>.
func (m *Mesh) KubernetesNamespace(h host.Name) (string, bool) {
	rest, ok := strings.CutSuffix(string(h), ".svc."+m.Config.DomainSuffix)
	if !ok || h.IsWildcard() {
		return "", false
	}
	name, ns, ok := strings.Cut(rest, ".")
	if !ok || name == "" || ns == "" || strings.Contains(ns, ".") {
		return "", false
	}
	return ns, true
}

// LookupDestinationRules is the namespace-level DestinationRule lookup
// for proxies of proxyNs calling h, for a host no service of the input
// defines (a scope's DestinationRule answers for the others): the
// service's namespace is the one its Kubernetes name says, if any.
func (m *Mesh) LookupDestinationRules(proxyNs string, h host.Name) DRLookup {
	svcNs, _ := m.KubernetesNamespace(h)
	return m.drs.lookup(proxyNs, h, svcNs)
}
