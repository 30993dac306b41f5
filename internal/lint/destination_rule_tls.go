package lint

import (
	"fmt"
	"slices"
	"strconv"

	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// MC4008: TLS origination to a server inside the mesh that trusts only
// the system CA bundle. To a server outside it (a MESH_EXTERNAL
// ServiceEntry, a host in no registry), the system CAs are the right
// check: istiod verifies against them by default since
// VERIFY_CERTIFICATE_AT_CLIENT (docs/semantics/destination-rules.md §5.6).
var noCACertificates = &Analyzer{Entry: diag.NoCACertificates, Run: func(p *Pass) {
	domain := p.Mesh.Config.DomainSuffix
	for _, dr := range p.Mesh.DestinationRules {
		if dr.InheritedFrom != nil {
			continue // an HNC copy says what its source says
		}
		if _, generated := dr.Annotations[model.AnnotationParents]; generated {
			// A BackendTLSPolicy without CA references chose the system's
			// CAs explicitly (wellKnownCACertificates: System).
			continue
		}
		// Most rules set no policy: their paths and host go unbuilt.
		subsets := dr.Spec.GetSubsets()
		if dr.Spec.GetTrafficPolicy() == nil && !slices.ContainsFunc(subsets, func(s *networking.Subset) bool { return s.GetTrafficPolicy() != nil }) ||
			!insideMesh(p.Mesh, host.FQDN(dr.Spec.GetHost(), dr.Namespace, domain)) {
			continue
		}
		check := func(tp *networking.TrafficPolicy, at model.Path, where string) {
			unverified(p, dr, tp.GetTls(), at.Key("tls"), where)
			for i, pl := range tp.GetPortLevelSettings() {
				unverified(p, dr, pl.GetTls(), at.Key("portLevelSettings").Index(i).Key("tls"),
					where+" on port "+strconv.FormatUint(uint64(pl.GetPort().GetNumber()), 10))
			}
		}
		if tp := dr.Spec.GetTrafficPolicy(); tp != nil {
			check(tp, model.ParsePath("spec.trafficPolicy"), "")
		}
		for i, s := range subsets {
			if tp := s.GetTrafficPolicy(); tp != nil {
				check(tp, model.ParsePath(fmt.Sprintf("spec.subsets[%d].trafficPolicy", i)), fmt.Sprintf(" for subset %q", s.GetName()))
			}
		}
	}
}}

// insideMesh reports whether h names a server of the cluster or the mesh:
// a Kubernetes service host, or a service that is not MESH_EXTERNAL.
func insideMesh(m *resolve.Mesh, h host.Name) bool {
	if _, _, kube := kubeNamespace(m, h); kube {
		return true
	}
	return slices.ContainsFunc(m.ServicesCovering(h), func(s *resolve.Service) bool { return !s.MeshExternal })
}

// unverified reports tls when it originates TLS with nothing but the
// system CAs to check the server (cluster_tls.go falls back to "system"
// when caCertificates is empty).
func unverified(p *Pass, dr *model.DestinationRule, tls *networking.ClientTLSSettings, at model.Path, where string) {
	mode := tls.GetMode()
	if mode != networking.ClientTLSSettings_SIMPLE && mode != networking.ClientTLSSettings_MUTUAL {
		return
	}
	if tls.GetCaCertificates() != "" || tls.GetCredentialName() != "" || tls.GetInsecureSkipVerify().GetValue() {
		return
	}
	p.Report(&dr.ObjectMeta, at.Key("mode"), diag.NoCAForTLS,
		objName(&dr.ObjectMeta), mode, dr.Spec.GetHost(), where)
}

// MC4009: callers use a rule with tls.mode DISABLE for a service whose
// workloads require mutual TLS.
var mtlsDisabledForStrictServer = &Analyzer{Entry: diag.MTLSDisabledForStrictServer, Requires: []*fact{factInWorkloads}, Run: func(p *Pass) {
	type svcKey struct {
		host host.Name
		ns   string
	}
	type key struct {
		dr  *model.DestinationRule
		svc svcKey
	}
	type finding struct {
		svc     *resolve.Service
		at      model.Path
		ports   []uint32
		by      []*model.ObjectMeta
		proxies []*resolve.Proxy
	}
	in := p.inWorkloads()
	strictness := map[svcKey]map[uint32]*model.ObjectMeta{}
	var found groups[key, finding]
	for _, sc := range p.Mesh.Scopes {
		for svc, dec := range sc.DestinationRules() {
			if !slices.ContainsFunc(dec.Lookup.Rules, disables) {
				continue
			}
			sk := svcKey{svc.Host, svc.Namespace}
			strict, ok := strictness[sk]
			if !ok {
				strict = strictPorts(p.Mesh, svc, in)
				strictness[sk] = strict
			}
			if len(strict) == 0 {
				continue
			}
			// The callers of each rule: every proxy uses the plain rule
			// unless a selector rule of the lookup picks it.
			users := map[*resolve.Rule][]*resolve.Proxy{}
			var rules []*resolve.Rule
			for _, px := range sc.Proxies {
				r := dec.Lookup.RuleFor(px)
				if r == nil || !disables(r) {
					continue
				}
				if _, ok := users[r]; !ok {
					rules = append(rules, r)
				}
				users[r] = append(users[r], px)
			}
			for _, r := range rules {
				for _, port := range svc.Ports {
					tls, at := portTLS(r.TrafficPolicy, port.Number)
					by := strict[port.Number]
					if !plaintext(tls) || by == nil {
						continue
					}
					k := key{r.PolicyFrom, sk}
					f := found.add(k, func() finding { return finding{svc: svc, at: at} })
					if !slices.Contains(f.ports, port.Number) {
						f.ports = append(f.ports, port.Number)
					}
					if !slices.Contains(f.by, by) {
						f.by = append(f.by, by)
					}
					f.proxies = append(f.proxies, users[r]...)
				}
			}
		}
	}
	for _, k := range found.order {
		f := found.byKey[k]
		slices.Sort(f.ports)
		var ports, pas []string
		for _, n := range f.ports {
			ports = append(ports, strconv.FormatUint(uint64(n), 10))
		}
		for _, by := range f.by {
			pas = append(pas, objName(by))
		}
		d := p.Report(&k.dr.ObjectMeta, f.at, diag.PlaintextToStrict,
			objName(&k.dr.ObjectMeta), f.svc.Host, plural(len(ports), "port ", "ports ")+list(ports, 8), list(pas, 4))
		for _, by := range f.by {
			d.Related = append(d.Related, related(by, "requires mutual TLS (STRICT)"))
		}
		d.Proxies = proxyIDs(f.proxies)
	}
}}

// disables reports whether a rule's policy disables TLS at all, top-level
// or for some port: the cheap test before looking at the server.
func disables(r *resolve.Rule) bool {
	tp := r.TrafficPolicy
	return plaintext(tp.GetTls()) || slices.ContainsFunc(tp.GetPortLevelSettings(), func(pl *networking.TrafficPolicy_PortTrafficPolicy) bool {
		return plaintext(pl.GetTls())
	})
}

// plaintext reports whether a TLS setting turns TLS off. DISABLE is the
// zero mode, so an absent setting, which leaves auto mutual TLS on, must
// not count.
func plaintext(tls *networking.ClientTLSSettings) bool {
	return tls != nil && tls.GetMode() == networking.ClientTLSSettings_DISABLE
}

// portTLS is the TLS setting of a policy for a service port, and where it
// is written: a port-level entry replaces the whole policy for its port
// (docs/semantics/destination-rules.md §5.6).
func portTLS(tp *networking.TrafficPolicy, port uint32) (*networking.ClientTLSSettings, model.Path) {
	for i, pl := range tp.GetPortLevelSettings() {
		if pl.GetPort().GetNumber() == port {
			return pl.GetTls(), model.ParsePath(fmt.Sprintf("spec.trafficPolicy.portLevelSettings[%d].tls.mode", i))
		}
	}
	return tp.GetTls(), model.ParsePath("spec.trafficPolicy.tls.mode")
}

// strictPorts maps the service ports on which the service's servers
// require mutual TLS to the PeerAuthentication that says so. With
// workloads of the service in the input, its proxies decide, port by port
// (workloads without a sidecar enforce nothing). Without, only a STRICT
// policy of the service's own namespace is taken as proof: a mesh-wide
// STRICT with a DISABLE rule is the usual way to call a service that has
// no sidecar.
func strictPorts(m *resolve.Mesh, svc *resolve.Service, in *inputWorkloads) map[uint32]*model.ObjectMeta {
	out := map[uint32]*model.ObjectMeta{}
	if svc.Registry != resolve.Kubernetes || len(svc.Selector) == 0 {
		return out
	}
	if in.selects(svc) {
		for _, px := range in.proxies[svc.Namespace] {
			if !resolve.LabelsMatch(svc.Selector, px.Labels) {
				continue
			}
			mt := m.ProxyMTLS(px)
			for _, port := range svc.Ports {
				n, ok := resolve.ProxyPort(port, px)
				if !ok || out[port.Number] != nil || mt.Port(n) != security.PeerAuthentication_MutualTLS_STRICT {
					continue
				}
				by := mt.By
				if _, ok := mt.Ports[n]; ok {
					by = mt.PortsBy
				}
				out[port.Number] = by
			}
		}
		return out
	}
	if mt := m.NamespaceMTLS(svc.Namespace); mt.Mode == security.PeerAuthentication_MutualTLS_STRICT && mt.Level == resolve.MTLSNamespace {
		for _, port := range svc.Ports {
			out[port.Number] = mt.By
		}
	}
	return out
}
