package load

import (
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// serviceEntry: istiod's ValidateServiceEntry.
func (c *istioChecks) serviceEntry(se *networking.ServiceEntry, spec model.Path, labels map[string]string) {
	ws := se.GetWorkloadSelector()
	c.workloadSelector(ws.GetLabels(), ws != nil, spec.Key("workloadSelector"), "ServiceEntry")
	if ws != nil && se.GetEndpoints() != nil {
		c.add(spec.Key("endpoints"), "a ServiceEntry with both workloadSelector and endpoints is rejected by istiod's validation: use one")
	}
	res := se.GetResolution()
	if len(se.GetHosts()) == 0 {
		c.add(spec, "a ServiceEntry without hosts is rejected by istiod's validation: add hosts")
	}
	for i, h := range se.GetHosts() {
		at := spec.Key("hosts").Index(i)
		if h == "*" {
			c.add(at, "host \"*\" is rejected by istiod's validation in a ServiceEntry: name the hosts")
			continue
		}
		if msg := wildcardDomainProblem(h); msg != "" {
			c.addf(at, "host %q is rejected by istiod's validation: %s", h, msg)
		}
		if res != networking.ServiceEntry_DYNAMIC_DNS && partialWildcard(h) {
			c.warnf(at, "host %q has a partial wildcard: istiod warns; a wildcard must be a whole first label (\"*.example.com\")", h)
		}
	}
	cidr := false
	for i, a := range se.GetAddresses() {
		cidr = cidr || strings.Contains(a, "/")
		if !ipOrCIDR(a) {
			c.addf(spec.Key("addresses").Index(i), "address %q is rejected by istiod's validation: use an IP or a CIDR block", a)
		}
	}
	if cidr && res != networking.ServiceEntry_NONE && res != networking.ServiceEntry_STATIC {
		c.addf(spec.Key("addresses"), "CIDR addresses with resolution %s are rejected by istiod's validation: they need NONE or STATIC", res)
	}
	// istiod gives addresses to a ServiceEntry without any.
	autoAllocate := model.AutoAllocatesAddress(se, labels)
	names := map[string]bool{}
	numbers := map[uint32]bool{}
	for i, port := range se.GetPorts() {
		at := spec.Key("ports").Index(i)
		if names[port.GetName()] {
			c.addf(at.Key("name"), "port name %q is used twice: istiod's validation rejects it", port.GetName())
		}
		names[port.GetName()] = true
		if numbers[port.GetNumber()] {
			c.addf(at.Key("number"), "port %d is listed twice: istiod's validation rejects it", port.GetNumber())
		}
		numbers[port.GetNumber()] = true
		if port.GetTargetPort() != 0 {
			c.port(int64(port.GetTargetPort()), at.Key("targetPort"))
		}
		if len(se.GetAddresses()) == 0 && !autoAllocate && (port.GetProtocol() == "" || port.GetProtocol() == "TCP") {
			c.warnf(at, "TCP port %d without addresses and without IP auto-allocation (resolution NONE or opted out): istiod warns, as a TCP port is told apart by address only; add addresses", port.GetNumber())
		}
		c.portName(port.GetName(), at.Key("name"))
		c.protocolName(port.GetProtocol(), at.Key("protocol"))
		c.port(int64(port.GetNumber()), at.Key("number"))
	}
	switch res {
	case networking.ServiceEntry_NONE:
		if len(se.GetEndpoints()) > 0 {
			c.add(spec.Key("endpoints"), "endpoints with resolution NONE are rejected by istiod's validation: use resolution STATIC or DNS, or remove them")
		}
		if ws != nil {
			c.warnf(spec.Key("workloadSelector"), "workloadSelector with resolution NONE: istiod warns; use resolution STATIC to send to the selected workloads")
		}
	case networking.ServiceEntry_STATIC:
		for i, ep := range se.GetEndpoints() {
			c.workloadEntry(ep, spec.Key("endpoints").Index(i), names, false)
		}
	case networking.ServiceEntry_DNS, networking.ServiceEntry_DNS_ROUND_ROBIN:
		if len(se.GetEndpoints()) == 0 {
			for i, h := range se.GetHosts() {
				if msg := fqdnProblem(h); msg != "" {
					c.addf(spec.Key("hosts").Index(i), "host %q with resolution %s and no endpoints is rejected by istiod's validation: %s; DNS resolves exact names (or add endpoints)", h, res, msg)
					break
				}
			}
		}
		if res == networking.ServiceEntry_DNS_ROUND_ROBIN && len(se.GetEndpoints()) > 1 {
			c.add(spec.Key("endpoints"), "more than one endpoint with resolution DNS_ROUND_ROBIN is rejected by istiod's validation: use DNS, or one endpoint")
		}
		for i, ep := range se.GetEndpoints() {
			at := spec.Key("endpoints").Index(i)
			if a := ep.GetAddress(); !isIP(a) && fqdnProblem(a) != "" {
				c.addf(at.Key("address"), "endpoint address %q is rejected by istiod's validation: use an IP or a DNS name", a)
			}
			c.labels(ep.GetLabels(), at.Key("labels"))
			c.endpointPorts(ep.GetPorts(), names, at.Key("ports"))
		}
		if len(se.GetAddresses()) > 0 && len(se.GetHosts()) > 1 && slices.ContainsFunc(se.GetPorts(), func(p *networking.ServicePort) bool {
			return protocol.Parse(p.GetProtocol()).IsTCP()
		}) {
			c.warnf(spec.Key("hosts"), "several hosts with addresses and a TCP port: istiod warns, as a TCP port cannot tell the hosts apart; use one host per ServiceEntry")
		}
	case networking.ServiceEntry_DYNAMIC_DNS:
		for i, h := range se.GetHosts() {
			if !strings.HasPrefix(h, "*") {
				c.addf(spec.Key("hosts").Index(i), "host %q with resolution DYNAMIC_DNS is rejected by istiod's validation: the hosts must be wildcards", h)
			}
		}
		if len(se.GetAddresses()) > 0 {
			c.add(spec.Key("addresses"), "addresses with resolution DYNAMIC_DNS are rejected by istiod's validation: remove them")
		}
		if len(se.GetEndpoints()) > 0 {
			c.add(spec.Key("endpoints"), "endpoints with resolution DYNAMIC_DNS are rejected by istiod's validation: remove them")
		}
		for i, port := range se.GetPorts() {
			if pr := protocol.Parse(port.GetProtocol()); pr != protocol.HTTP && pr != protocol.TLS && pr != protocol.GRPC && pr != protocol.HTTP2 {
				c.addf(spec.Key("ports").Index(i).Key("protocol"), "protocol %q with resolution DYNAMIC_DNS is rejected by istiod's validation: use HTTP, HTTP2, GRPC or TLS", port.GetProtocol())
			}
		}
		if loc := se.GetLocation(); loc == networking.ServiceEntry_MESH_INTERNAL {
			if w := labels["istio.io/use-waypoint"]; w != "" && !strings.EqualFold(w, "none") {
				c.add(spec.Key("location"), "location MESH_INTERNAL with resolution DYNAMIC_DNS and a waypoint is rejected by istiod's validation")
			}
		}
	}
	if res != networking.ServiceEntry_NONE && len(se.GetHosts()) > 1 {
		for i, port := range se.GetPorts() {
			if pr := protocol.Parse(port.GetProtocol()); !pr.IsHTTP() && pr != protocol.HTTPS && pr != protocol.TLS {
				c.addf(spec.Key("ports").Index(i), "several hosts with a %s port are rejected by istiod's validation (resolution %s): only HTTP and TLS ports tell hosts apart; split the ServiceEntry", protocolOrSniffed(port.GetProtocol()), res)
				break
			}
		}
	}
	c.exportTo(se.GetExportTo(), spec, true, false)
}

func protocolOrSniffed(s string) string {
	if s == "" {
		return "protocol-less"
	}
	return s
}

// endpointPorts: an endpoint's ports are named after service ports.
func (c *istioChecks) endpointPorts(ports map[string]uint32, service map[string]bool, p model.Path) {
	for _, name := range slices.Sorted(maps.Keys(ports)) {
		at := p.Key(name)
		if service != nil && !service[name] {
			c.addf(at, "endpoint port %q is rejected by istiod's validation: the ServiceEntry has no port of that name", name)
		}
		c.portName(name, at)
		c.port(int64(ports[name]), at)
	}
}

// workloadEntry: istiod's rules for a WorkloadEntry and for a
// ServiceEntry STATIC endpoint (service holds the ServiceEntry's port
// names then; nil for a WorkloadEntry, which may also have a DNS name as
// address).
func (c *istioChecks) workloadEntry(we *networking.WorkloadEntry, p model.Path, service map[string]bool, fqdnOK bool) {
	addr := we.GetAddress()
	if addr == "" {
		if we.GetNetwork() == "" {
			c.add(p, "a workload without address is rejected by istiod's validation: set address (or network)")
			return
		}
		c.warnf(p, "a workload without address on network %q: istiod warns; it is reached through that network's gateway", we.GetNetwork())
	}
	unix := strings.HasPrefix(addr, "unix://")
	switch {
	case unix:
		c.unixAddress(strings.TrimPrefix(addr, "unix://"), p.Key("address"))
		if len(we.GetPorts()) > 0 {
			c.add(p.Key("ports"), "ports on a unix socket endpoint are rejected by istiod's validation: remove them")
		}
	case addr != "" && !isIP(addr) && !fqdnOK:
		c.addf(p.Key("address"), "endpoint address %q is rejected by istiod's validation: with resolution STATIC it must be an IP", addr)
	case addr != "" && !isIP(addr) && fqdnProblem(addr) != "":
		c.addf(p.Key("address"), "address %q is rejected by istiod's validation: use an IP or a DNS name", addr)
	}
	c.endpointPorts(we.GetPorts(), service, p.Key("ports"))
	c.labels(we.GetLabels(), p.Key("labels"))
	if unix && service != nil && len(service) != 1 {
		c.add(p.Key("address"), "a unix socket endpoint in a ServiceEntry with other than one port is rejected by istiod's validation")
	}
}
