// Package resolve computes, from loaded objects, what istiod computes for
// every proxy: the service registry with exportTo visibility, the Sidecar
// scope, DestinationRule choice and VirtualService binding. Every decision
// keeps its provenance, so explain and lint read results and never
// re-resolve.
package resolve

import (
	"net/netip"
	"slices"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// DefaultPlaceholderVIPs is where services without a clusterIP in the
// manifests get their made-up VIP: the benchmarking range (RFC 2544), which
// no cluster allocates.
var defaultPlaceholderVIPs = netip.MustParsePrefix("198.18.0.0/15")

// DefaultPlaceholderVIPs returns the range placeholder VIPs come from.
func DefaultPlaceholderVIPs() netip.Prefix { return defaultPlaceholderVIPs }

// Options configure resolution.
type Options struct {
	Mesh model.MeshConfig
	// PlaceholderVIPs is the range for made-up cluster IPs; the zero value
	// means DefaultPlaceholderVIPs.
	PlaceholderVIPs netip.Prefix
}

// Mesh is the resolved view. It is read-only once Resolve returns.
type Mesh struct {
	Config model.MeshConfig
	// Services is every mesh service, oldest first.
	Services []*Service
	// Proxies sorted by namespace/name.
	Proxies []*Proxy
	// Views, one per proxy, in Proxies order.
	Views []*ProxyView
	// Scopes are the distinct Sidecar scopes, shared among proxies.
	Scopes []*Scope
	// Sidecars by namespace, in the order istiod tries them.
	Sidecars sidecarIndex

	// VirtualServices, oldest first, delegates included.
	VirtualServices []*VirtualService

	reg *registry
	drs *drIndexes
	vss *vsIndex
}

// ProxyView is what one proxy sees.
type ProxyView struct {
	Proxy  *Proxy
	Scope  *Scope
	Choice SidecarChoice
}

// Resolve builds the mesh view from loaded objects.
func Resolve(objs []model.Object, opts Options) *Mesh {
	mc := opts.Mesh
	if mc.MeshConfig == nil {
		mc.MeshConfig = model.DefaultMeshConfig()
	}
	if mc.DomainSuffix == "" {
		mc.DomainSuffix = model.DefaultDomainSuffix
	}
	vips := opts.PlaceholderVIPs
	if !vips.IsValid() {
		vips = defaultPlaceholderVIPs
	}
	nsLabels := map[string]map[string]string{}
	var services []*Service
	var sidecars []*model.Sidecar
	var drs []*model.DestinationRule
	var gatewaySelectors []map[string]string
	var vss []*VirtualService
	for _, o := range objs {
		switch x := o.(type) {
		case *model.Namespace:
			nsLabels[x.Name] = x.Labels
		case *model.Service:
			services = append(services, serviceFromKube(x, mc.DomainSuffix, mc.DefaultServiceExportTo))
		case *model.ServiceEntry:
			services = append(services, servicesFromEntry(x, mc.DefaultServiceExportTo)...)
		case *model.Sidecar:
			sidecars = append(sidecars, x)
		case *model.DestinationRule:
			drs = append(drs, x)
		case *model.VirtualService:
			vss = append(vss, newVirtualService(x, mc.DomainSuffix, mc.DefaultVirtualServiceExportTo))
		case *model.Gateway:
			gatewaySelectors = append(gatewaySelectors, x.Spec.GetSelector())
		}
	}
	assignPlaceholderVIPs(services, vips)
	m := &Mesh{Config: mc, Sidecars: newSidecarIndex(sidecars)}
	m.reg = newRegistry(services)
	m.Services = m.reg.all
	m.drs = buildDRIndexes(drs, mc.RootNamespace, mc.DomainSuffix, mc.DefaultDestinationRuleExportTo)
	m.vss = newVSIndex(vss)
	m.VirtualServices = m.vss.all
	m.Proxies = buildProxies(objs, func(ns string) map[string]string { return nsLabels[ns] }, gatewaySelectors)

	type scopeKey struct {
		sidecar *model.Sidecar
		ns      string
		router  bool
	}
	scopes := map[scopeKey]*Scope{}
	for _, p := range m.Proxies {
		choice := m.Sidecars.choose(p, mc.RootNamespace)
		key := scopeKey{choice.Sidecar, p.Namespace, p.Type == RouterProxy}
		sc := scopes[key]
		if sc == nil {
			sc = buildScope(m.reg, m.vss, mc.DomainSuffix, choice, p.Namespace)
			scopes[key] = sc
			m.Scopes = append(m.Scopes, sc)
		}
		// Proxies sharing a scope can differ in which Sidecars they
		// skipped; each view keeps its own account.
		view := &ProxyView{Proxy: p, Scope: sc, Choice: choice}
		m.Views = append(m.Views, view)
	}
	return m
}

// View returns the view of the proxy namespace/name.
func (m *Mesh) View(ns, name string) (*ProxyView, bool) {
	i, ok := slices.BinarySearchFunc(m.Views, ns+"/"+name, func(v *ProxyView, id string) int {
		switch a := v.Proxy.ID(); {
		case a < id:
			return -1
		case a > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil, false
	}
	return m.Views[i], true
}

// DestinationRuleFor returns the namespace-level lookup for a service seen
// from proxies in proxyNs, and the rule a given proxy uses.
func (m *Mesh) DestinationRuleFor(p *Proxy, s *Service) (DRLookup, *Rule) {
	l := m.drs.lookup(p.Namespace, s.Host, s.Namespace)
	return l, l.pick(p)
}

// ServicesNamed returns every mesh service with a hostname, oldest first.
func (m *Mesh) ServicesNamed(h host.Name) []*Service {
	var out []*Service
	for _, s := range m.reg.byHostNs[h] {
		out = append(out, s)
	}
	slices.SortFunc(out, (*Service).compare)
	return out
}
