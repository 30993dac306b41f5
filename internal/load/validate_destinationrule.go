package load

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/durationpb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/model"
)

// destinationRule: istiod's ValidateDestinationRule.
func (c *istioChecks) destinationRule(dr *networking.DestinationRule, spec model.Path) {
	if msg := wildcardDomainProblem(dr.GetHost()); msg != "" {
		c.addf(spec.Key("host"), "host %q is rejected by istiod's validation: %s", dr.GetHost(), msg)
	}
	// Paths are built only for parts that are set or wrong: this runs on
	// every DestinationRule.
	if dr.GetTrafficPolicy() != nil {
		c.trafficPolicy(dr.GetTrafficPolicy(), spec.Key("trafficPolicy"))
	}
	seen := map[string]bool{}
	for i, s := range dr.GetSubsets() {
		at := spec.Key("subsets").Index(i)
		if seen[s.GetName()] {
			c.addf(at.Key("name"), "subset %q is defined twice: istiod's validation rejects duplicate subset names", s.GetName())
		}
		seen[s.GetName()] = true
		if !isDNSLabel(s.GetName()) {
			c.subsetName(s.GetName(), at.Key("name"))
		}
		c.labels(s.GetLabels(), at.Key("labels"))
		if s.GetTrafficPolicy() != nil {
			c.trafficPolicy(s.GetTrafficPolicy(), at.Key("trafficPolicy"))
		}
	}
	ws := dr.GetWorkloadSelector()
	c.exportTo(dr.GetExportTo(), spec, false, ws != nil)
	c.workloadSelector(ws.GetMatchLabels(), ws != nil, spec.Key("workloadSelector"), "DestinationRule")
}

// trafficPolicy checks a DestinationRule traffic policy (top level or a
// subset's) and its port-level entries.
func (c *istioChecks) trafficPolicy(tp *networking.TrafficPolicy, p model.Path) {
	if tp == nil {
		return
	}
	if tp.GetOutlierDetection() == nil && tp.GetConnectionPool() == nil && tp.GetLoadBalancer() == nil && tp.GetTls() == nil &&
		tp.GetPortLevelSettings() == nil && tp.GetTunnel() == nil && tp.GetProxyProtocol() == nil && tp.GetRetryBudget() == nil {
		c.add(p, "an empty trafficPolicy is rejected by istiod's validation: set a field or remove it")
		return
	}
	if tp.GetTunnel() != nil && tp.GetProxyProtocol() != nil {
		c.add(p, "a trafficPolicy with both tunnel and proxyProtocol is rejected by istiod's validation: use one")
		return
	}
	c.policyParts(tp.GetOutlierDetection(), tp.GetConnectionPool(), tp.GetLoadBalancer(), tp.GetTls(), p)
	for i, pl := range tp.GetPortLevelSettings() {
		at := p.Key("portLevelSettings").Index(i)
		if pl.GetPort() == nil {
			c.add(at, "a portLevelSettings entry without port is rejected by istiod's validation")
		}
		if pl.GetOutlierDetection() == nil && pl.GetConnectionPool() == nil && pl.GetLoadBalancer() == nil && pl.GetTls() == nil {
			c.add(at, "a portLevelSettings entry without settings is rejected by istiod's validation: set a field or remove it")
			continue
		}
		c.policyParts(pl.GetOutlierDetection(), pl.GetConnectionPool(), pl.GetLoadBalancer(), pl.GetTls(), at)
	}
	if t := tp.GetTunnel(); t != nil {
		at := p.Key("tunnel")
		if t.GetProtocol() != "" && t.GetProtocol() != "CONNECT" && t.GetProtocol() != "POST" {
			c.addf(at.Key("protocol"), "tunnel protocol %q is rejected by istiod's validation: use CONNECT or POST", t.GetProtocol())
		}
		if fqdnProblem(t.GetTargetHost()) != "" && !isIP(t.GetTargetHost()) {
			c.addf(at.Key("targetHost"), "tunnel targetHost %q is rejected by istiod's validation: use a DNS name or an IP", t.GetTargetHost())
		}
		c.port(int64(t.GetTargetPort()), at.Key("targetPort"))
	}
	if v := tp.GetProxyProtocol().GetVersion(); v != 0 && v != 1 {
		c.addf(p.Key("proxyProtocol").Key("version"), "proxyProtocol version %v is rejected by istiod's validation", v)
	}
}

// policyParts: what the top-level policy and its port-level entries share.
func (c *istioChecks) policyParts(od *networking.OutlierDetection, cp *networking.ConnectionPoolSettings, lb *networking.LoadBalancerSettings, tls *networking.ClientTLSSettings, p model.Path) {
	if od != nil {
		c.outlierDetection(od, p.Key("outlierDetection"))
	}
	if cp != nil {
		c.connectionPool(cp, p.Key("connectionPool"))
	}
	if lb != nil {
		c.loadBalancer(lb, od, p.Key("loadBalancer"))
	}
	if tls != nil {
		c.clientTLS(tls, p.Key("tls"))
	}
}

func (c *istioChecks) outlierDetection(od *networking.OutlierDetection, p model.Path) {
	if od == nil {
		return
	}
	c.duration(od.GetBaseEjectionTime(), p.Key("baseEjectionTime"))
	//lint:ignore SA1019 istiod warns about this deprecated field, so meshc reads it
	if od.GetConsecutiveErrors() != 0 {
		c.warnf(p.Key("consecutiveErrors"), "outlierDetection.consecutiveErrors is deprecated: istiod warns; use consecutive5xxErrors or consecutiveGatewayErrors")
	}
	if !od.GetSplitExternalLocalOriginErrors() && od.GetConsecutiveLocalOriginFailures().GetValue() > 0 {
		c.add(p.Key("consecutiveLocalOriginFailures"), "consecutiveLocalOriginFailures without splitExternalLocalOriginErrors: true is rejected by istiod's validation: set both")
	}
	c.duration(od.GetInterval(), p.Key("interval"))
	for _, f := range []struct {
		name string
		v    int32
	}{{"maxEjectionPercent", od.GetMaxEjectionPercent()}, {"minHealthPercent", od.GetMinHealthPercent()}} {
		if f.v < 0 || f.v > 100 {
			c.addf(p.Key(f.name), "%s %d is rejected by istiod's validation: it must be 0..100", f.name, f.v)
		}
	}
}

// connectionPool: counts are not negative; every duration passes
// istiod's rule, except a TCP idle timeout under a millisecond (0s turns
// it off); an HTTP/2 keepalive needs both its interval and its timeout.
func (c *istioChecks) connectionPool(cp *networking.ConnectionPoolSettings, p model.Path) {
	if cp == nil {
		return
	}
	if cp.GetHttp() == nil && cp.GetTcp() == nil {
		c.add(p, "an empty connectionPool is rejected by istiod's validation: set http or tcp, or remove it")
		return
	}
	negative := func(at model.Path, name string, v int32) {
		if v < 0 {
			c.addf(at.Key(name), "%s %d is rejected by istiod's validation: it cannot be negative", name, v)
		}
	}
	if h := cp.GetHttp(); h != nil {
		hp := p.Key("http")
		negative(hp, "http1MaxPendingRequests", h.GetHttp1MaxPendingRequests())
		negative(hp, "http2MaxRequests", h.GetHttp2MaxRequests())
		negative(hp, "maxRequestsPerConnection", h.GetMaxRequestsPerConnection())
		negative(hp, "maxRetries", h.GetMaxRetries())
		negative(hp, "maxConcurrentStreams", h.GetMaxConcurrentStreams())
		c.duration(h.GetIdleTimeout(), hp.Key("idleTimeout"))
		if h.GetH2UpgradePolicy() == networking.ConnectionPoolSettings_HTTPSettings_UPGRADE && h.GetUseClientProtocol() {
			c.add(hp.Key("useClientProtocol"), "useClientProtocol with h2UpgradePolicy UPGRADE is rejected by istiod's validation: use one")
		}
		if ka := h.GetHttp2KeepAlive(); ka != nil {
			kp := hp.Key("http2KeepAlive")
			for _, f := range []struct {
				name string
				d    *durationpb.Duration
			}{{"interval", ka.GetInterval()}, {"timeout", ka.GetTimeout()}} {
				if f.d == nil {
					c.add(kp, "http2KeepAlive without "+f.name+" is rejected by istiod's validation: it needs both interval and timeout")
				}
				c.duration(f.d, kp.Key(f.name))
			}
		}
	}
	if t := cp.GetTcp(); t != nil {
		tp := p.Key("tcp")
		negative(tp, "maxConnections", t.GetMaxConnections())
		c.duration(t.GetConnectTimeout(), tp.Key("connectTimeout"))
		c.duration(t.GetMaxConnectionDuration(), tp.Key("maxConnectionDuration"))
		if d := t.GetIdleTimeout(); d != nil && d.AsDuration().Milliseconds() != 0 {
			c.duration(d, tp.Key("idleTimeout"))
		}
		c.duration(t.GetTcpKeepalive().GetTime(), tp.Key("tcpKeepalive").Key("time"))
		c.duration(t.GetTcpKeepalive().GetInterval(), tp.Key("tcpKeepalive").Key("interval"))
	}
}

func (c *istioChecks) loadBalancer(lb *networking.LoadBalancerSettings, od *networking.OutlierDetection, p model.Path) {
	if lb == nil {
		return
	}
	if ch := lb.GetConsistentHash(); ch != nil {
		cp := p.Key("consistentHash")
		if hc := ch.GetHttpCookie(); hc != nil {
			if hc.GetName() == "" {
				c.add(cp.Key("httpCookie"), "an httpCookie hash without name is rejected by istiod's validation")
			}
			names := map[string]bool{}
			for i, a := range hc.GetAttributes() {
				at := cp.Key("httpCookie").Key("attributes").Index(i)
				switch {
				case a.GetName() == "":
					c.add(at, "a cookie attribute without name is rejected by istiod's validation")
				case names[a.GetName()]:
					c.addf(at, "cookie attribute %q is listed twice: istiod's validation rejects it", a.GetName())
				}
				names[a.GetName()] = true
			}
		}
		//lint:ignore SA1019 istiod warns about this deprecated field, so meshc reads it
		if ch.GetMinimumRingSize() != 0 {
			c.warnf(cp.Key("minimumRingSize"), "consistentHash.minimumRingSize is deprecated: istiod warns; use ringHash.minimumRingSize")
			if ch.GetHashAlgorithm() != nil {
				c.add(cp.Key("minimumRingSize"), "minimumRingSize with ringHash or maglev is rejected by istiod's validation: use one")
			}
		}
		if ml := ch.GetMaglev(); ml != nil {
			n := ml.GetTableSize()
			switch {
			case n == 0:
				c.add(cp.Key("maglev"), "maglev without tableSize is rejected by istiod's validation: set a prime below 5000011")
			case n >= 5000011:
				c.addf(cp.Key("maglev").Key("tableSize"), "maglev tableSize %d is rejected by istiod's validation: it must be below 5000011", n)
			case !isPrime(n):
				c.addf(cp.Key("maglev").Key("tableSize"), "maglev tableSize %d is rejected by istiod's validation: it must be a prime", n)
			}
		}
	}
	if lb.GetLocalityLbSetting() != nil && lb.GetZoneAwareLbSetting() != nil {
		c.add(p, "a loadBalancer with both localityLbSetting and zoneAwareLbSetting is rejected by istiod's validation: use one")
	}
	c.localityLB(lb.GetLocalityLbSetting(), od, p.Key("localityLbSetting"))
	if z := lb.GetZoneAwareLbSetting(); z != nil {
		zp := p.Key("zoneAwareLbSetting")
		for i, l := range z.GetFailoverPriority() {
			if topologyLabel(l) {
				c.addf(zp.Key("failoverPriority").Index(i), "failoverPriority %q is rejected by istiod's validation for zone-aware balancing: region and zone are handled already", l)
			}
		}
		if (len(z.GetFailover()) > 0 || len(z.GetFailoverPriority()) > 0) && od == nil {
			c.warnf(zp, "failover without outlierDetection: istiod warns, and failover never happens without it; add outlierDetection")
		}
		for i, f := range z.GetFailover() {
			c.failover(f.GetFrom(), f.GetTo(), zp.Key("failover").Index(i))
		}
	}
	if w := lb.GetWarmup(); w != nil {
		wp := p.Key("warmup")
		if w.GetDuration() == nil {
			c.add(wp, "a warmup without duration is rejected by istiod's validation")
		}
		c.duration(w.GetDuration(), wp.Key("duration"))
		if w.GetMinimumPercent().GetValue() > 100 {
			c.addf(wp.Key("minimumPercent"), "warmup minimumPercent %g is rejected by istiod's validation: at most 100", w.GetMinimumPercent().GetValue())
		}
		if w.GetAggression() != nil && w.GetAggression().GetValue() <= 0 {
			c.addf(wp.Key("aggression"), "warmup aggression %g is rejected by istiod's validation: it must be above 0", w.GetAggression().GetValue())
		}
	}
}

func topologyLabel(l string) bool {
	return l == "topology.kubernetes.io/region" || l == "topology.kubernetes.io/zone" || l == "topology.istio.io/subzone"
}

func isPrime(n uint64) bool {
	if n < 4 {
		return n > 0 // istiod counts 1 as prime
	}
	if n%2 == 0 {
		return false
	}
	for f := uint64(3); f <= uint64(math.Sqrt(float64(n))); f += 2 {
		if n%f == 0 {
			return false
		}
	}
	return true
}

// localityLB: istiod's rules for locality load balancing, which stop at
// the first structural problem. Overlapping localities are not checked
// here (see the checklist).
func (c *istioChecks) localityLB(lb *networking.LocalityLoadBalancerSetting, od *networking.OutlierDetection, p model.Path) {
	if lb == nil {
		return
	}
	if len(lb.GetDistribute()) > 0 && len(lb.GetFailover()) > 0 {
		c.add(p, "localityLbSetting with both distribute and failover is rejected by istiod's validation: use one")
		return
	}
	if len(lb.GetFailover()) > 0 {
		for i, l := range lb.GetFailoverPriority() {
			if topologyLabel(l) {
				c.addf(p.Key("failoverPriority").Index(i), "failoverPriority %q with failover is rejected by istiod's validation: failover already orders by region", l)
				return
			}
		}
	}
	for i, d := range lb.GetDistribute() {
		at := p.Key("distribute").Index(i)
		var total uint32
		tos := slices.Sorted(maps.Keys(d.GetTo()))
		for _, to := range tos {
			w := d.GetTo()[to]
			if w == 0 || w > 100 {
				c.addf(at.Key("to").Key(to), "locality weight %d is rejected by istiod's validation: it must be 1..100", w)
				return
			}
			total += w
		}
		if total != 100 {
			c.addf(at.Key("to"), "locality weights adding up to %d are rejected by istiod's validation: they must add up to 100", total)
			return
		}
		c.localities(tos, func(i int) model.Path { return at.Key("to").Key(tos[i]) })
	}
	c.localities(froms(lb.GetDistribute()), func(i int) model.Path { return p.Key("distribute").Index(i).Key("from") })
	if (len(lb.GetFailover()) > 0 || len(lb.GetFailoverPriority()) > 0) && od == nil {
		c.warnf(p, "failover without outlierDetection: istiod warns, and failover never happens without it; add outlierDetection")
	}
	for i, f := range lb.GetFailover() {
		c.failover(f.GetFrom(), f.GetTo(), p.Key("failover").Index(i))
	}
}

func froms(ds []*networking.LocalityLoadBalancerSetting_Distribute) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.GetFrom()
	}
	return out
}

// localities: each is region[/zone[/subzone]], no empty part, at most one
// "*" and only at the end, and none covers another of the list. Like
// istiod, it stops at the first problem; at(i) is the i-th one's path.
func (c *istioChecks) localities(list []string, at func(int) model.Path) {
	// seen[region][zone][subzone]; "*" marks everything below.
	seen := map[string]map[string]map[string]bool{}
	for i, l := range list {
		msg := ""
		parts := strings.SplitN(l, "/", 3)
		if n := strings.Count(l, "*"); n > 1 || n == 1 && !strings.HasSuffix(l, "*") {
			msg = "a wildcard \"*\" may appear once, at the end"
		} else if slices.Contains(parts, "") {
			msg = "region, zone and subzone may not be empty"
		} else if seen["*"] != nil || covered(seen, parts) {
			msg = "it overlaps a locality listed before it"
		}
		if msg != "" {
			c.addf(at(i), "locality %q is rejected by istiod's validation: %s", l, msg)
			return
		}
	}
}

// covered reports whether a locality overlaps one already in seen, and
// records it.
func covered(seen map[string]map[string]map[string]bool, parts []string) bool {
	region := parts[0]
	zones, ok := seen[region]
	if len(parts) == 1 {
		seen[region] = map[string]map[string]bool{"*": {"*": true}}
		return ok
	}
	if !ok {
		zones = map[string]map[string]bool{}
		seen[region] = zones
	}
	if zones["*"] != nil {
		return true
	}
	zone := parts[1]
	subs, ok := zones[zone]
	if len(parts) == 2 {
		zones[zone] = map[string]bool{"*": true}
		return ok
	}
	if !ok {
		subs = map[string]bool{}
		zones[zone] = subs
	}
	if subs["*"] || subs[parts[2]] {
		return true
	}
	subs[parts[2]] = true
	return false
}

func (c *istioChecks) failover(from, to string, p model.Path) {
	switch {
	case from == to:
		c.addf(p, "failover from %q to itself is rejected by istiod's validation: name two regions", from)
	case strings.Contains(from, "/") || strings.Contains(to, "/"):
		c.addf(p, "failover from %q to %q is rejected by istiod's validation: failover names regions only", from, to)
	case strings.Contains(from, "*") || strings.Contains(to, "*"):
		c.addf(p, "failover from %q to %q is rejected by istiod's validation: regions take no wildcard", from, to)
	}
}

// clientTLS: a configmap:// credential names its namespace, the
// DestinationRule's own, and a name; credentialName excludes inline
// certificates; insecureSkipVerify excludes CA and SANs; MUTUAL without
// credentialName needs a client certificate and key.
func (c *istioChecks) clientTLS(tls *networking.ClientTLSSettings, p model.Path) {
	if tls == nil {
		return
	}
	c.credentialName(tls, p)
	mode := tls.GetMode()
	simpleOrMutual := mode == networking.ClientTLSSettings_SIMPLE || mode == networking.ClientTLSSettings_MUTUAL
	if tls.GetInsecureSkipVerify().GetValue() {
		switch {
		case mode == networking.ClientTLSSettings_SIMPLE && (tls.GetCaCertificates() != "" || tls.GetCredentialName() != "" || tls.GetSubjectAltNames() != nil):
			c.add(p.Key("insecureSkipVerify"), "insecureSkipVerify with caCertificates, credentialName or subjectAltNames is rejected by istiod's validation: skipping verification excludes them")
		case mode == networking.ClientTLSSettings_MUTUAL && (tls.GetCaCertificates() != "" || tls.GetSubjectAltNames() != nil):
			c.add(p.Key("insecureSkipVerify"), "insecureSkipVerify with caCertificates or subjectAltNames is rejected by istiod's validation: skipping verification excludes them")
		}
	}
	if simpleOrMutual && tls.GetCredentialName() != "" {
		if tls.GetClientCertificate() != "" || tls.GetCaCertificates() != "" || tls.GetPrivateKey() != "" || tls.GetCaCrl() != "" {
			c.add(p.Key("credentialName"), "credentialName with clientCertificate, privateKey, caCertificates or caCrl is rejected by istiod's validation: the credential holds them")
		}
		return
	}
	if mode == networking.ClientTLSSettings_MUTUAL {
		if tls.GetClientCertificate() == "" {
			c.add(p, "tls mode MUTUAL without clientCertificate (or credentialName) is rejected by istiod's validation")
		}
		if tls.GetPrivateKey() == "" {
			c.add(p, "tls mode MUTUAL without privateKey (or credentialName) is rejected by istiod's validation")
		}
	}
}

// credentialName: a configmap:// credential names its namespace and
// name, and the namespace is the DestinationRule's own.
func (c *istioChecks) credentialName(tls *networking.ClientTLSSettings, p model.Path) {
	name, ok := strings.CutPrefix(tls.GetCredentialName(), "configmap://")
	if !ok {
		return
	}
	p = p.Key("credentialName")
	parts := strings.Split(name, "/")
	switch {
	case len(parts) < 2 || parts[0] == "" || parts[1] == "":
		c.add(p, fmt.Sprintf("credentialName %q is rejected by istiod's validation: configmap:// takes a namespace and a name, configmap://%s/NAME", tls.GetCredentialName(), c.ns))
	case parts[0] != c.ns:
		c.add(p, fmt.Sprintf("credentialName %q is rejected by istiod's validation: a configmap:// credential must be in the DestinationRule's namespace %q", tls.GetCredentialName(), c.ns))
	}
}
