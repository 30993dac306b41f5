package lint

import (
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
	"github.com/meshc/meshc/internal/resolve"
)

// listenerKey identifies one finding about a service port, whatever
// scopes it occurs in.
type listenerKey struct {
	svc    *model.ObjectMeta
	host   string
	port   uint32
	winner *model.ObjectMeta
}

// MC7001: a service port emit drops from an outbound listener another
// service's port already holds (docs/semantics/envoy-output.md §7.4).
// One finding per dropped port and winner, listing the proxies of every
// scope where it happens.
var listenerConflict = &Analyzer{Entry: diag.ListenerConflict, Requires: []*fact{factListeners}, Run: func(p *Pass) {
	type finding struct {
		drop    resolve.ListenerDrop
		proxies []*resolve.Proxy
	}
	// Under DNS capture a ServiceEntry istiod allocates addresses to has
	// them as its VIPs (resolve), so it takes no wildcard listener here.
	var found groups[listenerKey, finding]
	for _, sc := range p.Mesh.Scopes {
		for _, d := range p.listeners()[sc].drops {
			k := listenerKey{d.Loser.Service.Object, string(d.Loser.Service.Host), d.Loser.Port, d.Winner.Service.Object}
			f := found.add(k, func() finding { return finding{drop: d} })
			f.proxies = append(f.proxies, sc.Proxies...)
		}
	}
	for _, k := range found.order {
		f := found.byKey[k]
		l, w := f.drop.Loser, f.drop.Winner
		why := "its chain matches the same connections as " + string(w.Service.Host) + "'s, and the first service placed keeps them"
		if f.drop.Protocol {
			why = "one of them is " + string(protocolOf(l, w)) + " and the other is not, and the listener keeps the first"
		}
		d := p.Report(l.Service.Object, model.ParsePath("spec.ports"), diag.ListenerChainDropped,
			l.Port, l.Service.Host, l.Protocol, l.Listener(), w.Service.Host, w.Port, w.Protocol, why)
		if w.Service.Object != l.Service.Object {
			d.Related = append(d.Related, related(w.Service.Object, "holds listener %s", w.Listener()))
		}
		d.Proxies = proxyIDs(f.proxies)
	}
}}

// protocolOf names the Mongo or MySQL side of a protocol mismatch.
func protocolOf(a, b resolve.ListenerClaim) protocol.Protocol {
	if a.Protocol == protocol.Mongo || a.Protocol == protocol.MySQL {
		return a.Protocol
	}
	return b.Protocol
}

// MC7002: a TCP service port without an address of its own takes the
// wildcard listener of its port, so every TCP connection on that port that
// no address-specific listener takes goes to it.
var catchAllTCPCapture = &Analyzer{Entry: diag.CatchAllTCPCapture, Requires: []*fact{factListeners}, Run: func(p *Pass) {
	type finding struct {
		claim   resolve.ListenerClaim
		proxies []*resolve.Proxy
	}
	var found groups[listenerKey, finding]
	for _, sc := range p.Mesh.Scopes {
		for _, c := range p.listeners()[sc].catchAll {
			k := listenerKey{c.Service.Object, string(c.Service.Host), c.Port, nil}
			f := found.add(k, func() finding { return finding{claim: c} })
			f.proxies = append(f.proxies, sc.Proxies...)
		}
	}
	for _, k := range found.order {
		c := found.byKey[k].claim
		where := "to the service's endpoints"
		if c.Service.Resolution == resolve.Passthrough {
			where = "on to their original destination, but counted, and given the policies, as this service"
		}
		d := p.Report(c.Service.Object, model.ParsePath("spec.ports"), diag.ChainMatchesEverything,
			c.Service.Host, c.Port, c.Protocol, c.Listener(), where)
		d.Proxies = proxyIDs(found.byKey[k].proxies)
	}
}}
