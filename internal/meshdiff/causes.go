package meshdiff

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// Cause is an input object that changed and that a proxy group's changed
// resources are built from.
type Cause struct {
	// Status is the object's: added, removed or modified.
	Status    string `json:"status"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Role is what the object is to the changed resources, e.g.
	// "VirtualService for reviews.default.svc.cluster.local".
	Role string `json:"role"`
	// PropagatedTo names the namespace of the copy HNC propagated from
	// this object when the proxies read the copy.
	PropagatedTo string `json:"propagatedTo,omitempty"`
}

// provenance finds, for a proxy on one side, the objects a resource of its
// configuration is built from, as resolve recorded them.
type provenance struct {
	view *resolve.ProxyView
}

// related is an object and what it is to a resource.
type related struct {
	meta *model.ObjectMeta
	role string
}

// of lists the objects a resource is built from: for an outbound cluster
// or its endpoints, the service, the workloads behind it, the
// DestinationRules the lookup chose and the Sidecar that imports it; for
// a route configuration's virtual host, the VirtualService in force for
// the host and the route's delegates; for a listener, the services on its
// address and port and their VirtualServices. The scope's Sidecar, and a
// gateway's Gateways with the VirtualServices bound to them, are related
// to every resource, as they decide what the proxies serve and see.
func (p provenance) of(c Change) []related {
	if p.view == nil {
		return nil
	}
	sc := p.view.Scope
	var out []related
	if s := sc.Choice.Sidecar; s != nil {
		out = append(out, related{&s.ObjectMeta, "Sidecar of the proxies"})
	}
	// A gateway's listeners and routes come from its Gateways' servers and
	// the VirtualServices bound to them.
	for _, gs := range p.view.Gateways {
		out = append(out, related{&gs.Gateway.ObjectMeta, "Gateway of the proxies"})
		for _, r := range gs.Routes {
			out = append(out, related{&r.VirtualService.Object.ObjectMeta, "VirtualService bound to Gateway " + gs.Gateway.Namespace + "/" + gs.Gateway.Name})
		}
	}
	var hosts []host.Name
	switch envoycfg.Type(c.Type) {
	case envoycfg.Cluster, envoycfg.Endpoints:
		id, ok := resolve.ParseClusterID(c.Resource)
		if !ok {
			return out
		}
		hosts = append(hosts, id.Host)
	case envoycfg.Route:
		// The first step of a route change is its virtual host, host:port.
		vh, _, _ := strings.Cut(c.Path, " › ")
		if h, _, ok := strings.Cut(vh, ":"); ok {
			hosts = append(hosts, host.Name(h))
		}
	case envoycfg.Listener:
		addr, port, ok := cutLast(c.Resource, "_")
		n, err := strconv.ParseUint(port, 10, 32)
		if !ok || err != nil {
			return out
		}
		for _, s := range sc.Services {
			if _, ok := s.PortNumbered(uint32(n)); ok && (addr == "0.0.0.0" || slices.Contains(s.Addresses, addr)) {
				hosts = append(hosts, s.Host)
			}
		}
	}
	for _, h := range hosts {
		out = append(out, p.host(h, c.Type == string(envoycfg.Endpoints))...)
	}
	return out
}

// host lists the objects a host's resources are built from in the scope.
func (p provenance) host(h host.Name, endpoints bool) []related {
	sc := p.view.Scope
	var out []related
	if s, ok := sc.Service(h); ok {
		out = append(out, related{s.Object, "service " + string(h)})
		if endpoints {
			for _, e := range s.Endpoints {
				if e.Workload != nil {
					out = append(out, related{e.Workload, "workload behind " + string(h)})
				}
			}
		}
	}
	if imp, ok := sc.Import(h); ok && imp.ViaVirtualService != nil {
		out = append(out, related{&imp.ViaVirtualService.ObjectMeta, "VirtualService routing to " + string(h)})
	}
	if d, ok := sc.DestinationRule(h); ok {
		var rules []*resolve.Rule
		if d.Rule != nil {
			rules = append(rules, d.Rule)
		}
		rules = append(rules, d.Lookup.Rules...)
		for _, r := range rules {
			for _, dr := range r.From {
				out = append(out, related{&dr.ObjectMeta, "DestinationRule for " + string(h)})
			}
		}
	}
	for _, vc := range sc.VirtualServices {
		if vc.Host != h || vc.Winner == nil {
			continue
		}
		out = append(out, related{&vc.Winner.Object.ObjectMeta, "VirtualService for " + string(h)})
		for _, r := range vc.Winner.Routes {
			if r.From != nil && r.From != vc.Winner {
				out = append(out, related{&r.From.Object.ObjectMeta, "delegate VirtualService for " + string(h)})
			}
		}
		for _, l := range vc.Losers() {
			out = append(out, related{&l.Object.ObjectMeta, "VirtualService that lost " + string(h)})
		}
	}
	return out
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// findCauses names, for each group, the changed input objects its changed
// resources are built from, as the group's proxies see them on either
// side (once per pair of scopes), and the proxies' own workloads; for an
// added or removed proxy, its workload.
func findCauses(base, head *compile.Result, groups []ProxyGroup, objects []Object) {
	changed := map[model.ID]string{}
	for _, o := range objects {
		changed[model.ID{Group: o.Group, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}] = o.Status
	}
	if len(changed) == 0 {
		return
	}
	view := func(r *compile.Result, id string) *resolve.ProxyView {
		ns, name, _ := strings.Cut(id, "/")
		v, _ := r.Mesh.View(ns, name)
		return v
	}
	scopeOf := func(v *resolve.ProxyView) *resolve.Scope {
		if v == nil {
			return nil
		}
		return v.Scope
	}
	for i := range groups {
		g := &groups[i]
		var rel []related
		done := map[[2]*resolve.Scope]bool{}
		for _, id := range g.Proxies {
			b, h := view(base, id), view(head, id)
			for _, v := range []*resolve.ProxyView{b, h} {
				if v != nil {
					rel = append(rel, related{v.Proxy.Object, "the proxy's workload"})
				}
			}
			if g.Status != StatusChanged {
				continue
			}
			if k := [2]*resolve.Scope{scopeOf(b), scopeOf(h)}; !done[k] {
				done[k] = true
				for _, c := range g.Changes {
					rel = append(rel, provenance{b}.of(c)...)
					rel = append(rel, provenance{h}.of(c)...)
				}
			}
		}
		g.Causes = causesAmong(rel, changed)
	}
}

// causesAmong keeps the related objects that changed, each once with its
// first role; a propagated copy stands for its source.
func causesAmong(rel []related, changed map[model.ID]string) []Cause {
	seen := map[model.ID]bool{}
	var out []Cause
	for _, r := range rel {
		if r.meta == nil {
			continue
		}
		m, to := r.meta, ""
		if m.InheritedFrom != nil {
			m, to = m.InheritedFrom, m.Namespace
		}
		id := m.ID()
		status, ok := changed[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, Cause{Status: status, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name, Role: r.role, PropagatedTo: to})
	}
	slices.SortFunc(out, func(a, b Cause) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// String is the cause on one line, e.g. "~ VirtualService default/reviews
// (VirtualService for reviews.default.svc.cluster.local)".
func (c Cause) String() string {
	ref := c.Kind + " " + c.Name
	if c.Namespace != "" {
		ref = c.Kind + " " + c.Namespace + "/" + c.Name
	}
	role := c.Role
	if c.PropagatedTo != "" {
		role += fmt.Sprintf(", through its copy in %s", c.PropagatedTo)
	}
	return ref + " (" + role + ")"
}
