package lint

import (
	"cmp"
	"iter"
	"net/netip"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// configHost is a host written in a VirtualService, DestinationRule or
// Sidecar egress entry, with where it is written. Route destinations are
// MC5002's and are not listed.
type configHost struct {
	obj *model.ObjectMeta
	// i and j place the host in its object (see path), which is built
	// only for a finding: most hosts make none.
	i, j int
	// host is as written, after the "ns/" prefix of a Sidecar egress
	// host; expands tells whether istiod expands a short one
	// (docs/semantics/hosts.md §3.1).
	prefix, host string
	expands      bool
}

// path is where c is written: spec.hosts[i] of a VirtualService,
// spec.host of a DestinationRule, spec.egress[i].hosts[j] of a Sidecar.
func (c configHost) path() model.Path {
	switch c.obj.Kind {
	case "VirtualService":
		return model.ParsePath("spec.hosts").Index(c.i)
	case "DestinationRule":
		return model.ParsePath("spec.host")
	}
	return model.ParsePath("spec.egress").Index(c.i).Key("hosts").Index(c.j)
}

// configHosts lists the hosts of VirtualServices, DestinationRules and
// Sidecar egress, in input order, counted first so the list is allocated
// once.
func configHosts(m *resolve.Mesh) []configHost {
	hosts := eachConfigHost(m)
	n := 0
	for range hosts {
		n++
	}
	return slices.AppendSeq(make([]configHost, 0, n), hosts)
}

// eachConfigHost yields configHosts' hosts.
func eachConfigHost(m *resolve.Mesh) iter.Seq[configHost] {
	return func(yield func(configHost) bool) {
		for _, o := range m.Objects {
			meta := o.Meta()
			switch x := o.(type) {
			case *model.VirtualService:
				for i, h := range x.Spec.GetHosts() {
					if !yield(configHost{meta, i, 0, "", h, true}) {
						return
					}
				}
			case *model.DestinationRule:
				if h := x.Spec.GetHost(); h != "" && !yield(configHost{meta, 0, 0, "", h, true}) {
					return
				}
			case *model.Sidecar:
				for i, eg := range x.Spec.GetEgress() {
					for j, h := range eg.GetHosts() {
						if ns, dns, ok := strings.Cut(h, "/"); ok && !yield(configHost{meta, i, j, h[:len(ns)+1], dns, false}) {
							return
						}
					}
				}
			}
		}
	}
}

// isName reports a host that names one service: not a wildcard, not an
// IP address.
func isName(h string) bool {
	if h == "" || strings.Contains(h, "*") {
		return false
	}
	// An IP address starts with a digit or has a colon; parsing only
	// those spares a name the failed parse's error.
	if h[0] < '0' || h[0] > '9' {
		if !strings.Contains(h, ":") {
			return true
		}
	}
	_, err := netip.ParseAddr(h)
	return err != nil
}

// MC3004: "name.namespace" is not expanded and matches nothing, while its
// .svc.<domain> form is a service (docs/semantics/hosts.md §3.1).
var nonFQDNDottedHost = &Analyzer{Entry: diag.NonFQDNDottedHost, Requires: []*fact{factConfigHosts}, Run: func(p *Pass) {
	for _, c := range p.configHosts() {
		// A copy HNC propagated says what its source says.
		if c.obj.InheritedFrom != nil || !strings.Contains(c.host, ".") || !isName(c.host) {
			continue
		}
		// The .svc.<domain> form first: an FQDN's is no service, and the
		// lookup of a host that is none allocates nothing.
		full := host.Name(c.host + ".svc." + p.Mesh.Config.DomainSuffix)
		svcs := p.Mesh.ServicesNamed(full)
		if len(svcs) == 0 || len(p.Mesh.ServicesNamed(host.Name(c.host))) > 0 {
			continue
		}
		d := p.Report(c.obj, c.path(), diag.DottedHostNotExpanded,
			c.obj.Kind, objName(c.obj), c.host, c.prefix, full)
		d.Related = append(d.Related, related(svcs[0].Object, "defines %s", full))
	}
}}

// MC3005: a short host expands into its object's namespace, where no such
// service is, while a Kubernetes Service of that name lives elsewhere.
var shortHostResolvesElsewhere = &Analyzer{Entry: diag.ShortHostResolvesElsewhere, Requires: []*fact{factConfigHosts}, Run: func(p *Pass) {
	byName := map[string][]*resolve.Service{}
	for _, s := range p.Mesh.Services {
		if s.Registry == resolve.Kubernetes {
			byName[s.Name] = append(byName[s.Name], s)
		}
	}
	// An object HNC copies into descendants is a template: its short hosts
	// are judged in each copy's namespace, where they expand.
	sources := map[*model.ObjectMeta]bool{}
	for _, o := range p.Mesh.Objects {
		if src := o.Meta().InheritedFrom; src != nil {
			sources[src] = true
		}
	}
	for _, c := range p.configHosts() {
		if !c.expands || sources[c.obj] || strings.Contains(c.host, ".") || len(byName[c.host]) == 0 || !isName(c.host) {
			continue
		}
		// A Service of that name in the object's namespace is the host
		// it expands to: no need to spell the name out and look it up.
		if slices.ContainsFunc(byName[c.host], func(s *resolve.Service) bool { return s.Namespace == c.obj.Namespace }) {
			continue
		}
		// A namespace whose Services the input does not hold may well
		// have this one.
		expanded := host.FQDN(c.host, c.obj.Namespace, p.Mesh.Config.DomainSuffix)
		if len(p.Mesh.ServicesNamed(expanded)) > 0 || !p.Mesh.Describes(expanded) {
			continue
		}
		others := slices.SortedFunc(slices.Values(byName[c.host]), func(a, b *resolve.Service) int { return cmp.Compare(a.Namespace, b.Namespace) })
		var fqdns []string
		for _, s := range others {
			fqdns = append(fqdns, string(s.Host))
		}
		fix := "write " + fqdns[0] + " if that is the one meant"
		if len(fqdns) > 1 {
			fix = "write the full name of the one meant: " + list(fqdns, 3)
		}
		d := p.Report(c.obj, c.path(), diag.ShortHostElsewhere,
			c.obj.Kind, objName(c.obj), c.host, expanded, plural(len(others), "namespace ", "namespaces ")+list(namespaces(others), 5), fix)
		for _, s := range others {
			d.Related = append(d.Related, related(s.Object, "defines %s", s.Host))
		}
	}
}}

// namespaces lists the services' namespaces, which are sorted, once each.
func namespaces(svcs []*resolve.Service) []string {
	var out []string
	for _, s := range svcs {
		out = append(out, s.Namespace)
	}
	return slices.Compact(out)
}
