package resolve

import (
	"maps"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// OlderFirst orders objects as istiod merges Gateways and picks the
// oldest of anything: creation time, then name, then namespace.
func OlderFirst(a, b *model.ObjectMeta) int {
	return olderFirst(a.Created, a.Name, a.Namespace, b.Created, b.Name, b.Namespace)
}

// MergedServerHosts are the hosts of server i of a Gateway as istiod compares
// them when it merges Gateways (docs/semantics/virtual-services.md §6.7):
// "./h" is "<gwNs>/h", "*/h" is "h", and "*/*" alone stands for all.
func MergedServerHosts(gw *model.Gateway, i int) []string {
	return MergeHosts(ownNamespace(gw.Spec.GetServers()[i].GetHosts(), gw.Namespace))
}

// MergeHosts are server hosts, "./" already spelt as the namespace, as
// istiod compares them when merging Gateways: "*/host" is "host", and
// "*/*" alone stands for all.
func MergeHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if name, ok := strings.CutPrefix(h, "*/"); ok {
			if name == "*" {
				return []string{"*"}
			}
			h = name
		}
		out = append(out, h)
	}
	return out
}

// EgressHost is one `hosts` entry of a Sidecar egress listener and the
// services it names (docs/semantics/sidecar-scope.md §4.2, §4.3).
type EgressHost struct {
	Sidecar *model.Sidecar
	// Listener and Index place the entry: spec.egress[Listener].hosts[Index].
	Listener, Index int
	// Namespace is the namespace the entry means ("./" spelt out), "*"
	// for any.
	Namespace string
	Host      host.Name
	// Judged: the registry holds services of Namespace (of any namespace
	// for "*"), so an entry naming none of them is a mistake rather than
	// a namespace the input does not describe.
	Judged bool
	// Imported counts the services the entry imports: named by it,
	// visible to the Sidecar's namespace and carrying the listener's port.
	Imported int
	// Hidden are services the entry names that exportTo hides from the
	// Sidecar's namespace; OffPort those that lack the listener's port.
	Hidden, OffPort []*Service
}

// EgressHosts lists, for every Sidecar, in namespace order, each egress
// host that names services, with what it names. Entries that exclude
// ("~"), that istiod ignores (no single "/"), that name no host, and
// "*/*" are left out. Cost: entries × services of the namespace meant (of the registry,
// for a "*/" wildcard).
func (m *Mesh) EgressHosts() []EgressHost {
	byNs := map[string][]*Service{}
	for _, s := range m.reg.all {
		byNs[s.Namespace] = append(byNs[s.Namespace], s)
	}
	var out []EgressHost
	for _, ns := range slices.Sorted(maps.Keys(m.Sidecars)) {
		for _, sc := range m.Sidecars[ns] {
			for li, eg := range sc.Spec.GetEgress() {
				for i, raw := range eg.GetHosts() {
					nsPart, dns, ok := strings.Cut(raw, "/")
					if !ok || dns == "" || strings.Contains(dns, "/") || strings.HasPrefix(nsPart, "~") || (nsPart == "*" && dns == "*") {
						continue
					}
					if nsPart == "." {
						nsPart = sc.Namespace
					}
					e := EgressHost{Sidecar: sc, Listener: li, Index: i, Namespace: nsPart, Host: host.Name(dns)}
					var cands []*Service
					switch {
					case nsPart != "*":
						cands = byNs[nsPart]
						e.Judged = len(cands) > 0
					case e.Host.IsWildcard():
						cands = m.reg.all
						e.Judged = len(cands) > 0
					default:
						cands = m.ServicesNamed(e.Host)
						e.Judged = len(m.reg.all) > 0
					}
					for _, s := range cands {
						if s.Host != e.Host && !((s.Host.IsWildcard() || e.Host.IsWildcard()) && s.Host.SubsetOf(e.Host)) {
							continue
						}
						switch {
						case !s.VisibleIn(sc.Namespace):
							e.Hidden = append(e.Hidden, s)
						case trimToPort(s, eg.GetPort()) == nil:
							e.OffPort = append(e.OffPort, s)
						default:
							e.Imported++
						}
					}
					out = append(out, e)
				}
			}
		}
	}
	return out
}
