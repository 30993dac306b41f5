// Package resolve computes, from the objects HNC would leave (the hierarchy
// stage's result), what istiod computes for every proxy: the service
// registry with exportTo visibility, the Sidecar scope, DestinationRule
// choice and VirtualService binding. Every decision keeps its provenance,
// so explain and lint read results and never re-resolve.
package resolve

import (
	"context"
	"net/netip"
	"runtime"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/parallel"
)

// DefaultPlaceholderVIPs is where services without a clusterIP in the
// manifests get their made-up VIP: the benchmarking range (RFC 2544), which
// no cluster allocates.
func DefaultPlaceholderVIPs() netip.Prefix { return netip.MustParsePrefix("198.18.0.0/15") }

// Options configure resolution.
type Options struct {
	Mesh model.MeshConfig
	// PlaceholderVIPs is the range for made-up cluster IPs; the zero value
	// means DefaultPlaceholderVIPs.
	PlaceholderVIPs netip.Prefix
	// Injection is the injector as installed.
	Injection Injection
	// DualStack is istiod's ISTIO_DUAL_STACK: a dual-stack proxy then
	// uses both families' addresses (docs/semantics/envoy-output.md §7.10).
	DualStack bool
}

// Mesh is the resolved view. It is read-only once Resolve returns.
type Mesh struct {
	Config model.MeshConfig
	// Injection is the injector as the options describe it.
	Injection Injection
	// DualStack is Options.DualStack.
	DualStack bool
	// Services is every mesh service, oldest first.
	Services []*Service
	// Proxies sorted by namespace/name.
	Proxies []*Proxy
	// Views, one per proxy, in Proxies order.
	Views []*ProxyView
	// Scopes are the distinct Sidecar scopes, shared among proxies. They
	// include the scopes of stand-in proxies, which judge namespaces whose
	// proxies the input does not show (Proxy.StandIn).
	Scopes []*Scope
	// Sidecars by namespace, in the order istiod tries them.
	Sidecars sidecarIndex

	// Hierarchy is the namespace forest HNC would converge to.
	Hierarchy *hierarchy.Forest
	// Objects is the effective object set: the input with HNC's
	// propagation applied (copies added, stale copies removed).
	Objects []model.Object
	// Diagnostics are the problems found while resolving (the hierarchy's).
	Diagnostics []diag.Diagnostic
	// DestinationRules as loaded.
	DestinationRules []*model.DestinationRule
	// VirtualServices, oldest first, delegates included.
	VirtualServices []*VirtualService
	// DelegateProblems are delegate references istiod would skip.
	DelegateProblems []DelegateProblem
	// Policies are the objects istiod would build into proxies' configs
	// and meshc does not.
	Policies []*Policy

	reg   *registry
	input inputNamespaces
	peers *peerIndex
	drs   *drIndexes
	vss   *vsIndex
	// served are the service ports each workload serves.
	served map[*model.ObjectMeta][]ServedPort
	// routes holds pieces of sidecars' route configurations, built once
	// for the scopes that see them alike; nil builds them for each.
	routes *routeMemo
}

// ProxyView is what one proxy sees.
type ProxyView struct {
	Proxy  *Proxy
	Scope  *Scope
	Choice SidecarChoice
	// Gateways are the Gateway servers of a router proxy.
	Gateways []GatewayServer
}

// Resolve builds the mesh view from the hierarchy stage's objects. Its error
// is ctx's: when ctx ends it stops between scopes and returns no mesh.
func Resolve(ctx context.Context, h hierarchy.Result, opts Options) (*Mesh, error) {
	mc := opts.Mesh
	if mc.MeshConfig == nil {
		mc.MeshConfig = model.DefaultMeshConfig()
	}
	if mc.DomainSuffix == "" {
		mc.DomainSuffix = model.DefaultDomainSuffix
	}
	vips := opts.PlaceholderVIPs
	if !vips.IsValid() {
		vips = DefaultPlaceholderVIPs()
	}
	forest, objs := h.Forest, h.Objects
	var hdiags []diag.Diagnostic
	if root := forest.Namespaces[mc.RootNamespace]; root != nil && root.Managed && len(root.Children) > 0 {
		d := diag.RootNamespaceHasChildren.At(diag.ObjectRef{Kind: "Namespace", Name: root.Name},
			root.Name, strings.Join(root.Children, ", "))
		if root.Object != nil {
			d.Object = root.Object.Ref()
		}
		hdiags = append(hdiags, d)
	}
	watched, selErrs := discovery(mc.MeshConfig, forest)
	for _, err := range selErrs {
		hdiags = append(hdiags, diag.DiscoverySelectorInvalid.At(diag.ObjectRef{Kind: "ConfigMap", File: mc.From.File, Line: mc.From.Line}, err.Error()))
	}
	var services []*Service
	var sidecars []*model.Sidecar
	var drs []*model.DestinationRule
	var gatewaySelectors []map[string]string
	var gateways []*model.Gateway
	var vsObjs []*model.VirtualService
	for _, o := range objs {
		switch x := o.(type) {
		case *model.Service:
			if watched(x.Namespace) {
				services = append(services, serviceFromKube(x, mc.DomainSuffix, mc.DefaultServiceExportTo))
			}
		case *model.ServiceEntry:
			services = append(services, servicesFromEntry(x, mc.DefaultServiceExportTo)...)
		case *model.Sidecar:
			sidecars = append(sidecars, x)
		case *model.DestinationRule:
			drs = append(drs, x)
		case *model.VirtualService:
			vsObjs = append(vsObjs, x)
		case *model.Gateway:
			gatewaySelectors = append(gatewaySelectors, x.Spec.GetSelector())
			gateways = append(gateways, x)
		}
	}
	// Gateways istiod generated from Gateway API Gateways bind through
	// their Services: the workloads those select are gateways too.
	gatewaySelectors = append(gatewaySelectors, serviceBoundSelectors(gateways, services)...)
	m := &Mesh{Config: mc, Injection: opts.Injection, DualStack: opts.DualStack, Sidecars: newSidecarIndex(sidecars), Hierarchy: forest, Diagnostics: hdiags, Objects: objs,
		DestinationRules: drs, routes: newRouteMemo()}
	// Three rounds of work that does not depend on itself, each task
	// writing its own fields, so that the result does not depend on
	// scheduling. First the indexes of DestinationRules, the
	// VirtualServices (converted here rather than while sorting the
	// objects above, which runs alone on one core) and their index, the
	// proxies, the workloads, the registry, the DestinationRules by host,
	// and the indexes of policies and namespaces, about largest first.
	var ws map[string]*nsWorkloads
	var drsByHost *drsByHost
	concurrently(
		func() {
			m.drs = buildDRIndexes(drs, mc.RootNamespace, mc.DomainSuffix, mc.DefaultDestinationRuleExportTo)
		},
		func() {
			vss := make([]*VirtualService, len(vsObjs))
			for i, o := range vsObjs {
				vss[i] = newVirtualService(o, mc.DomainSuffix, mc.DefaultVirtualServiceExportTo)
			}
			m.vss = newVSIndex(vss, mc.DomainSuffix, mc.DefaultVirtualServiceExportTo)
		},
		func() {
			m.Proxies = slices.DeleteFunc(buildProxies(objs, forest.Labels, gatewaySelectors, opts.Injection, mc.CapturesDNS()), func(p *Proxy) bool { return !watched(p.Namespace) })
		},
		func() { ws = workloads(objs) },
		func() {
			assignPlaceholderVIPs(services, vips)
			if mc.CapturesDNS() {
				allocateEntryAddresses(services)
			}
			resolveAliases(services)
			m.reg = newRegistry(services)
		},
		func() { drsByHost = newDRsByHost(drs, mc.DomainSuffix) },
		func() {
			m.Policies, m.peers, m.input = policies(objs), newPeerIndex(objs, mc.GetRootNamespace()), newInputNamespaces(objs)
		},
	)
	withSidecar := make(map[*model.ObjectMeta]bool, len(m.Proxies))
	for _, p := range m.Proxies {
		withSidecar[p.Object] = true
	}
	setInjected(ws, func(o *model.ObjectMeta) bool { return withSidecar[o] })
	m.Services = m.reg.all

	type scopeKey struct {
		sidecar *model.Sidecar
		ns      string
		router  bool
		// capture picks the registry: a proxy that captures DNS where
		// the mesh does not, or the other way round, sees other VIPs.
		capture bool
	}
	// Then what reads the registry: the endpoints, in parts, the
	// DestinationRule decider, the destinations' host numbers, and each
	// proxy's Sidecar, with the distinct scopes to build.
	index := map[scopeKey]int{}
	var first []SidecarChoice
	var firstNs []string
	var firstCapture []bool
	var all []*Proxy
	var choices []SidecarChoice
	var keys []int
	var decider *drDecider
	concurrently(slices.Concat(
		endpointJobs(m.reg.all, ws, opts.DualStack, 2*runtime.GOMAXPROCS(0)),
		[]func(){
			func() { decider = newDRDecider(m.drs, drsByHost, mc.DefaultDestinationRuleExportTo, m.reg) },
			func() { m.vss.numberDestinations(m.reg) },
			func() {
				all = slices.Concat(m.Proxies, standInProxies(objs, m.Proxies, forest.Labels, mc.RootNamespace, watched))
				choices = make([]SidecarChoice, len(all))
				keys = make([]int, len(all))
				for i, p := range all {
					choices[i] = m.Sidecars.choose(p, mc.RootNamespace)
					capture := mc.CapturesDNS()
					if p.Type == SidecarProxy && !p.StandIn {
						capture = p.CapturesDNS
					}
					k := scopeKey{choices[i].Sidecar, p.Namespace, p.Type == RouterProxy, capture}
					n, ok := index[k]
					if !ok {
						n = len(first)
						index[k] = n
						first = append(first, choices[i])
						firstNs = append(firstNs, p.Namespace)
						firstCapture = append(firstCapture, capture)
					}
					keys[i] = n
				}
			},
		})...,
	)
	m.DelegateProblems = m.vss.delegateProblems
	m.VirtualServices = m.vss.all
	// A registry copy for proxies that capture DNS otherwise than the
	// mesh copies the services, endpoints included.
	regs := map[bool]*registry{mc.CapturesDNS(): m.reg}
	firstReg := make([]*registry, len(first))
	for i, capture := range firstCapture {
		if regs[capture] == nil {
			regs[capture] = m.reg.withCapture(capture)
		}
		firstReg[i] = regs[capture]
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	// Last, every distinct scope, once, and the ports workloads serve.
	// Scopes share work one of them does first (the services and
	// VirtualServices every namespace without a Sidecar imports, and
	// their decisions and binding), which the others wait for: one such
	// scope starts first, then the DestinationRule decisions they share
	// (made by whichever job comes to one first), the ports and the
	// scopes of Sidecars, which wait for nothing, before the other ones.
	m.Scopes = make([]*Scope, len(first))
	var jobs []func()
	for _, i := range scheduleScopes(first) {
		jobs = append(jobs, func() {
			sc := buildScope(firstReg[i], m.vss, mc.DomainSuffix, first[i], firstNs[i])
			sc.drs = decider.decisions(firstNs[i], sc.Services, sc.base)
			m.Scopes[i] = sc
		})
	}
	jobs = slices.Insert(jobs, min(1, len(jobs)), slices.Concat(decider.sharedJobs(2*runtime.GOMAXPROCS(0)), []func(){func() { m.served = workloadPorts(m.reg.all) }})...)
	parallel.For(ctx, len(jobs), func(j int) { jobs[j]() })
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	for i, p := range all {
		sc := m.Scopes[keys[i]]
		sc.Proxies = append(sc.Proxies, p)
		if p.StandIn {
			continue
		}
		// Proxies sharing a scope can differ in which Sidecars they
		// skipped; each view keeps its own account.
		v := &ProxyView{Proxy: p, Scope: sc, Choice: choices[i]}
		if p.Type == RouterProxy {
			v.Gateways = bindGateways(p, gateways, m.vss, m.reg.all)
		}
		m.Views = append(m.Views, v)
	}
	return m, nil
}

// scheduleScopes orders the scopes of choices for building: the first
// without a Sidecar, then those with one, then the others.
func scheduleScopes(choices []SidecarChoice) []int {
	var plain, sidecars []int
	for i, c := range choices {
		if c.Sidecar == nil {
			plain = append(plain, i)
		} else {
			sidecars = append(sidecars, i)
		}
	}
	if len(plain) == 0 {
		return sidecars
	}
	return slices.Concat(plain[:1], sidecars, plain[1:])
}

// concurrently runs fs, as many at a time as there are cores, starting
// them in order, and waits for them all.
func concurrently(fs ...func()) {
	parallel.For(context.Background(), len(fs), func(i int) { fs[i]() })
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

// Reachable reports whether some service covering h, exactly or as a
// wildcard ServiceEntry host, is visible from namespace ns.
func (m *Mesh) Reachable(h host.Name, ns string) bool {
	if id, ok := m.reg.hostIDs[h]; ok && slices.ContainsFunc(m.reg.byHostPreferred[id], func(s *Service) bool { return s.VisibleIn(ns) }) {
		return true
	}
	for _, s := range m.reg.wildcards {
		if h.SubsetOf(s.Host) && s.VisibleIn(ns) {
			return true
		}
	}
	return false
}

// Rules lists every consolidated DestinationRule, once each.
func (m *Mesh) Rules() []*Rule { return m.drs.allRules() }

// ServicesNamed returns every mesh service with a hostname, oldest first.
// The list is shared: callers read it and never write to it.
func (m *Mesh) ServicesNamed(h host.Name) []*Service {
	id, ok := m.reg.hostIDs[h]
	if !ok {
		return nil
	}
	return m.reg.byHostOldest[id]
}
