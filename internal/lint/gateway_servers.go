package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// gatewayGroup is Gateways istiod merges on the same gateway workloads.
type gatewayGroup struct {
	// gateways, oldest first: istiod's merge order.
	gateways []*model.Gateway
	// workloads are the input workloads ("ns/name") every gateway of the
	// group selects; none when the input holds no workload the group
	// selects and the Gateways are grouped by equal selectors instead, as
	// istioctl does.
	workloads []string
}

// gatewayGroups groups the Gateways by the input workloads they select
// (a selector matches gateway workloads of any namespace,
// docs/semantics/virtual-services.md §6.7): one group per distinct set of
// Gateways on a workload. Gateways that select no workload of the input
// are grouped by equal selectors, so the checks work on repositories
// without workloads. Cost: Gateways × workloads.
func gatewayGroups(g *gatewayInput) []*gatewayGroup {
	gws := slices.Clone(g.gateways)
	slices.SortStableFunc(gws, func(a, b *model.Gateway) int { return resolve.OlderFirst(&a.ObjectMeta, &b.ObjectMeta) })
	byKey := map[string]*gatewayGroup{}
	var out []*gatewayGroup
	add := func(key string, members []*model.Gateway, workload string) {
		grp := byKey[key]
		if grp == nil {
			grp = &gatewayGroup{gateways: members}
			byKey[key] = grp
			out = append(out, grp)
		}
		if workload != "" {
			grp.workloads = append(grp.workloads, workload)
		}
	}
	selects := map[*model.Gateway]bool{}
	for _, ns := range slices.Sorted(maps.Keys(g.ws)) {
		for _, w := range g.ws[ns] {
			var members []*model.Gateway
			var key []string
			for _, gw := range gws {
				if g.selects(gw, w) {
					members = append(members, gw)
					key = append(key, objName(&gw.ObjectMeta))
					selects[gw] = true
				}
			}
			if len(members) > 0 {
				add(strings.Join(key, ","), members, objName(w.obj))
			}
		}
	}
	bySelector := map[string][]*model.Gateway{}
	var selectorOrder []string
	for _, gw := range gws {
		if selects[gw] {
			continue
		}
		k := labelString(gw.Spec.GetSelector())
		if svcs, ok := gw.Annotations[model.AnnotationGatewayService]; ok {
			// Generated: bound to Services rather than selecting.
			k = "services " + svcs
		}
		if bySelector[k] == nil {
			selectorOrder = append(selectorOrder, k)
		}
		bySelector[k] = append(bySelector[k], gw)
	}
	for _, k := range selectorOrder {
		add("selector "+k, bySelector[k], "")
	}
	return out
}

// sharedBy says which gateway workloads a finding about gw concerns: the
// input workloads, or, with none, those gw's selector names.
func sharedBy(workloads []string, gw *model.Gateway) string {
	if len(workloads) > 0 {
		return plural(len(workloads), "gateway workload ", "gateway workloads ") + list(workloads, 5)
	}
	if svcs, ok := gw.Annotations[model.AnnotationGatewayService]; ok {
		return "the workloads of " + svcs
	}
	if len(gw.Spec.GetSelector()) == 0 {
		return "every gateway workload"
	}
	return "gateway workloads selected by " + labelString(gw.Spec.GetSelector())
}

// serverRef names server i of a Gateway, with the address it binds, if
// any: servers on other binds listen apart.
func serverRef(gw *model.Gateway, i int) string {
	srv := gw.Spec.GetServers()[i]
	if bind := srv.GetBind(); bind != "" {
		return fmt.Sprintf("%s server %d (port %d on %s)", objName(&gw.ObjectMeta), i, srv.GetPort().GetNumber(), bind)
	}
	return fmt.Sprintf("%s server %d (port %d)", objName(&gw.ObjectMeta), i, srv.GetPort().GetNumber())
}

// MC7003: Gateways on the same workloads serving one host on one port, or
// one port with servers istiod does not merge. istiod merges the Gateways
// of a workload oldest first (resolve.ServerMerge): a TLS server repeating
// a host an earlier TLS server serves on the port and bind is dropped
// whole, as emit drops it; so is a server meeting an earlier plain server
// it cannot join (anything after TCP, anything but HTTP after HTTP);
// plain HTTP servers are merged, their VirtualServices joined
// (docs/semantics/virtual-services.md §6.7).
var conflictingGateways = &Analyzer{Entry: diag.ConflictingGateways, Requires: []*fact{factGatewayGroups}, Run: func(p *Pass) {
	type key struct {
		gw  *model.Gateway
		idx int
	}
	type finding struct {
		tls       bool
		conflict  *resolve.ServerRef // the older server holding the port
		hosts     []string
		earlier   []*model.Gateway
		workloads []string
	}
	var found groups[key, finding]
	for _, g := range p.gatewayGroups() {
		merge := resolve.NewServerMerge()
		type known struct {
			gw   *model.Gateway
			bind string
		}
		// port, TLS or not → host → first server naming it.
		seen := map[string]map[string]known{}
		for _, gw := range g.gateways {
			for i, srv := range gw.Spec.GetServers() {
				v := merge.Add(resolve.ServerRef{Gateway: gw, Index: i}, srv.GetPort().GetNumber())
				if v.Drop == resolve.DropProtocolConflict {
					f := found.add(key{gw, i}, func() finding { return finding{conflict: &v.Earlier} })
					f.workloads = mergeStrings(f.workloads, g.workloads)
					continue // dropped: its hosts are not served
				}
				tls := srv.GetTls() != nil
				sk := fmt.Sprintf("%d/%t", srv.GetPort().GetNumber(), tls)
				if seen[sk] == nil {
					seen[sk] = map[string]known{}
				}
				hosts := resolve.MergedServerHosts(gw, i)
				var dup []string
				var earlier []*model.Gateway
				for _, h := range hosts {
					if k, ok := seen[sk][h]; ok && k.bind == srv.GetBind() && k.gw != gw {
						dup = append(dup, h)
						if !slices.Contains(earlier, k.gw) {
							earlier = append(earlier, k.gw)
						}
					}
				}
				if tls && v.Drop != resolve.DropDuplicateTLSHosts {
					// istiod keeps it: a TLS host remembers only the bind
					// that named it last.
					dup = nil
				}
				if len(dup) > 0 {
					k := key{gw, i}
					f := found.add(k, func() finding { return finding{tls: tls} })
					f.hosts = mergeStrings(f.hosts, dup)
					for _, e := range earlier {
						if !slices.Contains(f.earlier, e) {
							f.earlier = append(f.earlier, e)
						}
					}
					f.workloads = mergeStrings(f.workloads, g.workloads)
					if tls {
						continue // dropped: its hosts are not known from it
					}
				}
				if tls && v.Drop == resolve.DropDuplicateTLSHosts {
					continue // dropped for a host of its own Gateway
				}
				for _, h := range hosts {
					if _, ok := seen[sk][h]; !ok || tls {
						seen[sk][h] = known{gw, srv.GetBind()}
					}
				}
			}
		}
	}
	for _, k := range found.order {
		f := found.byKey[k]
		var names []string
		for _, e := range f.earlier {
			names = append(names, objName(&e.ObjectMeta))
		}
		if c := f.conflict; c != nil {
			d := p.Report(&k.gw.ObjectMeta, model.ParsePath(fmt.Sprintf("spec.servers[%d].port.protocol", k.idx)), diag.ServerProtocolConflict,
				serverRef(k.gw, k.idx), k.gw.Spec.GetServers()[k.idx].GetPort().GetProtocol(), serverRef(c.Gateway, c.Index), c.Server().GetPort().GetProtocol(), sharedBy(f.workloads, k.gw))
			d.Related = append(d.Related, related(&c.Gateway.ObjectMeta, "older Gateway holding the port"))
			d.Proxies = f.workloads
			continue
		}
		at := model.ParsePath(fmt.Sprintf("spec.servers[%d].hosts", k.idx))
		var d *diag.Diagnostic
		if f.tls {
			d = p.Report(&k.gw.ObjectMeta, at, diag.TLSServerDropped,
				serverRef(k.gw, k.idx), plural(len(f.hosts), "host ", "hosts ")+list(f.hosts, 5), plural(len(names), "Gateway ", "Gateways ")+strings.Join(names, ", "), sharedBy(f.workloads, k.gw))
		} else {
			d = p.Report(&k.gw.ObjectMeta, at, diag.ServersMerged,
				serverRef(k.gw, k.idx), plural(len(f.hosts), "host ", "hosts ")+list(f.hosts, 5), plural(len(names), "Gateway ", "Gateways ")+strings.Join(names, ", "), sharedBy(f.workloads, k.gw), plural(len(f.hosts), "it", "them"))
		}
		for _, e := range f.earlier {
			d.Related = append(d.Related, related(&e.ObjectMeta, "older Gateway serving the same host and port"))
		}
		d.Proxies = f.workloads
	}
}}

// mergeStrings adds the strings of b missing from a, keeping a sorted.
func mergeStrings(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	slices.Sort(a)
	return a
}

// certificateOf names a server's certificate as istioctl compares them:
// its credentialName, else its serverCertificate and privateKey files.
func certificateOf(tls *networking.ServerTLSSettings) string {
	if c := tls.GetCredentialName(); c != "" {
		return "credentialName " + c
	}
	if tls.GetServerCertificate() != "" && tls.GetPrivateKey() != "" {
		return "serverCertificate " + tls.GetServerCertificate() + " (privateKey " + tls.GetPrivateKey() + ")"
	}
	return ""
}

// MC7005: Gateways on the same workloads using one certificate for
// different hosts.
var duplicateGatewayCertificate = &Analyzer{Entry: diag.DuplicateGatewayCertificate, Requires: []*fact{factGatewayGroups}, Run: func(p *Pass) {
	type key struct {
		gw, earlier *model.Gateway
		cert        string
	}
	type finding struct {
		idx, earlierIdx int
		hosts, other    []string
		workloads       []string
	}
	var found groups[key, finding]
	for _, g := range p.gatewayGroups() {
		type use struct {
			gw    *model.Gateway
			idx   int
			hosts []string
		}
		first := map[string]use{} // certificate → first server using it
		for _, gw := range g.gateways {
			for i, srv := range gw.Spec.GetServers() {
				cert := certificateOf(srv.GetTls())
				if cert == "" {
					continue
				}
				hosts := slices.Sorted(slices.Values(resolve.MergedServerHosts(gw, i)))
				u, ok := first[cert]
				if !ok {
					first[cert] = use{gw, i, hosts}
					continue
				}
				// The same hosts are MC7003's; one Gateway may reuse its
				// own certificate freely.
				if u.gw == gw || slices.Equal(u.hosts, hosts) {
					continue
				}
				// The subject is the Gateway with the broader selector, whose
				// servers reach every workload of the other (as istioctl
				// reports it); between equals, the later one.
				k := key{gw, u.gw, cert}
				idx, otherIdx, mine, theirs := i, u.idx, hosts, u.hosts
				if broader(u.gw.Spec.GetSelector(), gw.Spec.GetSelector()) {
					k = key{u.gw, gw, cert}
					idx, otherIdx, mine, theirs = u.idx, i, u.hosts, hosts
				}
				f := found.add(k, func() finding { return finding{idx: idx, earlierIdx: otherIdx, hosts: mine, other: theirs} })
				f.workloads = mergeStrings(f.workloads, g.workloads)
			}
		}
	}
	for _, k := range found.order {
		f := found.byKey[k]
		d := p.Report(&k.gw.ObjectMeta, model.ParsePath(fmt.Sprintf("spec.servers[%d].tls", f.idx)), diag.CertificateShared,
			serverRef(k.gw, f.idx), k.cert, serverRef(k.earlier, f.earlierIdx), list(f.hosts, 5), list(f.other, 5), sharedBy(f.workloads, k.gw))
		d.Related = append(d.Related, related(&k.earlier.ObjectMeta, "uses the same certificate"))
		d.Proxies = f.workloads
	}
}}

// broader reports whether selector a asks strictly less than b: every
// label of a is in b, and b has more.
func broader(a, b map[string]string) bool {
	return len(a) < len(b) && resolve.LabelsMatch(a, b)
}
