package load

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	security "istio.io/api/security/v1beta1"
	typev1beta1 "istio.io/api/type/v1beta1"

	"github.com/meshc/meshc/internal/model"
)

// peerAuthentication: istiod's ValidatePeerAuthentication.
func (c *istioChecks) peerAuthentication(pa *security.PeerAuthentication, spec model.Path) {
	sel := pa.GetSelector()
	if len(sel.GetMatchLabels()) == 0 && len(pa.GetPortLevelMtls()) > 0 {
		c.add(spec.Key("portLevelMtls"), "portLevelMtls in a namespace- or mesh-wide PeerAuthentication (no selector labels) is rejected by istiod's validation: add a selector")
	}
	if pa.GetPortLevelMtls() != nil && len(pa.GetPortLevelMtls()) == 0 {
		c.add(spec.Key("portLevelMtls"), "an empty portLevelMtls is rejected by istiod's validation: list ports or remove it")
	}
	for _, port := range slices.Sorted(maps.Keys(pa.GetPortLevelMtls())) {
		if port == 0 || port > 65535 {
			c.addf(spec.Key("portLevelMtls").Key(strconv.FormatUint(uint64(port), 10)), "port %d is rejected by istiod's validation: a port number is 1..65535", port)
		}
	}
	c.workloadSelector(sel.GetMatchLabels(), sel != nil, spec.Key("selector"), "PeerAuthentication")
}

// policyTarget: a policy selects workloads with one of selector,
// targetRef and targetRefs; targets are Services, ServiceEntries,
// Gateways or GatewayClasses of the policy's namespace.
func (c *istioChecks) policyTarget(sel *typev1beta1.WorkloadSelector, ref *typev1beta1.PolicyTargetReference, refs []*typev1beta1.PolicyTargetReference, spec model.Path, what string) {
	set := 0
	for _, s := range []bool{sel != nil, ref != nil, len(refs) > 0} {
		if s {
			set++
		}
	}
	if set > 1 {
		c.add(spec, "a policy with more than one of selector, targetRef and targetRefs is rejected by istiod's validation: use one")
	}
	c.workloadSelector(sel.GetMatchLabels(), sel != nil, spec.Key("selector"), what)
	if ref != nil {
		c.targetRef(ref, spec.Key("targetRef"))
	}
	for i, r := range refs {
		c.targetRef(r, spec.Key("targetRefs").Index(i))
	}
}

func (c *istioChecks) targetRef(r *typev1beta1.PolicyTargetReference, p model.Path) {
	if r.GetName() == "" {
		c.add(p, "a targetRef without name is rejected by istiod's validation")
	}
	if r.GetNamespace() != "" {
		c.add(p.Key("namespace"), "a targetRef with a namespace is rejected by istiod's validation: policies target objects of their own namespace")
	}
	group := r.GetGroup()
	if group == "" {
		group = "core"
	}
	switch group + "/" + r.GetKind() {
	case "core/Service", "networking.istio.io/ServiceEntry", "gateway.networking.k8s.io/Gateway", "gateway.networking.k8s.io/GatewayClass":
	default:
		c.addf(p, "targetRef to %s/%s is rejected by istiod's validation: target a Service, ServiceEntry, Gateway or GatewayClass", group, r.GetKind())
	}
}

// authorizationPolicy: istiod's ValidateAuthorizationPolicy.
func (c *istioChecks) authorizationPolicy(ap *security.AuthorizationPolicy, spec model.Path) {
	c.policyTarget(ap.GetSelector(), ap.GetTargetRef(), ap.GetTargetRefs(), spec, "AuthorizationPolicy")
	action := ap.GetAction()
	custom := action == security.AuthorizationPolicy_CUSTOM
	if custom {
		if ap.GetRules() == nil {
			c.add(spec, "a CUSTOM AuthorizationPolicy without rules is rejected by istiod's validation: it would never apply; add an empty rule {} to apply it to every request")
		} else if ap.GetProvider().GetName() == "" {
			c.add(spec.Key("provider"), "a CUSTOM AuthorizationPolicy without provider.name is rejected by istiod's validation: name the extension provider")
		}
		for i, r := range ap.GetRules() {
			c.customRule(r, spec.Key("rules").Index(i))
		}
	}
	if ap.GetProvider() != nil && !custom {
		c.addf(spec.Key("provider"), "provider with action %s is rejected by istiod's validation: it takes action CUSTOM", action)
	}
	if action == security.AuthorizationPolicy_DENY && ap.GetRules() == nil {
		c.add(spec, "a DENY AuthorizationPolicy without rules is rejected by istiod's validation: it would never apply; add an empty rule {} to deny every request")
	}
	for i, r := range ap.GetRules() {
		c.authzRule(r, action, spec.Key("rules").Index(i))
	}
}

// customRule: the identity attributes a CUSTOM policy cannot match on.
func (c *istioChecks) customRule(r *security.Rule, p model.Path) {
	for i, f := range r.GetFrom() {
		src := f.GetSource()
		at := p.Key("from").Index(i).Key("source")
		for _, x := range []struct {
			name string
			n    int
		}{{"namespaces", len(src.GetNamespaces())}, {"notNamespaces", len(src.GetNotNamespaces())}, {"serviceAccounts", len(src.GetServiceAccounts())},
			{"notServiceAccounts", len(src.GetNotServiceAccounts())}, {"trustDomains", len(src.GetTrustDomains())}, {"notTrustDomains", len(src.GetNotTrustDomains())},
			{"principals", len(src.GetPrincipals())}, {"notPrincipals", len(src.GetNotPrincipals())}, {"requestPrincipals", len(src.GetRequestPrincipals())},
			{"notRequestPrincipals", len(src.GetNotRequestPrincipals())}} {
			if x.n > 0 {
				c.addf(at.Key(x.name), "source %s in a CUSTOM AuthorizationPolicy is rejected by istiod's validation: it is not supported with CUSTOM", x.name)
			}
		}
	}
	for i, w := range r.GetWhen() {
		k := w.GetKey()
		if k == "source.namespace" || k == "source.serviceAccount" || k == "source.trustDomain" || k == "source.principal" || strings.HasPrefix(k, "request.auth.") {
			c.addf(p.Key("when").Index(i).Key("key"), "condition %q in a CUSTOM AuthorizationPolicy is rejected by istiod's validation: it is not supported with CUSTOM", k)
		}
	}
}

func (c *istioChecks) authzRule(r *security.Rule, action security.AuthorizationPolicy_Action, p model.Path) {
	if r.GetFrom() != nil && len(r.GetFrom()) == 0 {
		c.add(p.Key("from"), "an empty from list is rejected by istiod's validation: remove it or add sources")
	}
	var fromSet, toSet, tcpFrom, tcpTo bool
	for i, f := range r.GetFrom() {
		at := p.Key("from").Index(i)
		src := f.GetSource()
		if src == nil {
			c.add(at, "a from entry without source is rejected by istiod's validation")
			continue
		}
		fromSet = true
		sp := at.Key("source")
		if len(src.GetPrincipals())+len(src.GetNotPrincipals())+len(src.GetNamespaces())+len(src.GetNotNamespaces()) > 0 &&
			len(src.GetServiceAccounts())+len(src.GetNotServiceAccounts()) > 0 {
			c.add(sp, "serviceAccounts with principals or namespaces in one source is rejected by istiod's validation: use separate sources")
		}
		lists := []struct {
			name string
			v    []string
		}{{"principals", src.GetPrincipals()}, {"notPrincipals", src.GetNotPrincipals()}, {"requestPrincipals", src.GetRequestPrincipals()},
			{"notRequestPrincipals", src.GetNotRequestPrincipals()}, {"namespaces", src.GetNamespaces()}, {"notNamespaces", src.GetNotNamespaces()},
			{"ipBlocks", src.GetIpBlocks()}, {"notIpBlocks", src.GetNotIpBlocks()}, {"remoteIpBlocks", src.GetRemoteIpBlocks()},
			{"notRemoteIpBlocks", src.GetNotRemoteIpBlocks()}, {"serviceAccounts", src.GetServiceAccounts()}, {"notServiceAccounts", src.GetNotServiceAccounts()},
			{"trustDomains", src.GetTrustDomains()}, {"notTrustDomains", src.GetNotTrustDomains()}}
		n := 0
		for _, l := range lists {
			n += len(l.v)
		}
		if n == 0 {
			c.add(sp, "an empty source is rejected by istiod's validation: set a field or remove the entry")
		}
		for _, l := range lists {
			lp := sp.Key(l.name)
			switch {
			case strings.HasSuffix(strings.ToLower(l.name), "ipblocks"):
				c.ipList(l.v, lp)
			case strings.HasSuffix(strings.ToLower(l.name), "serviceaccounts"):
				c.serviceAccounts(l.v, lp)
			case strings.HasSuffix(strings.ToLower(l.name), "trustdomains"):
				c.trustDomains(l.v, lp)
			}
			c.nonEmpty(l.v, lp)
		}
		tcpFrom = tcpFrom || src.GetNotPrincipals() != nil || src.GetPrincipals() != nil || src.GetIpBlocks() != nil || src.GetNotIpBlocks() != nil ||
			src.GetNamespaces() != nil || src.GetNotNamespaces() != nil || src.GetRemoteIpBlocks() != nil || src.GetNotRemoteIpBlocks() != nil ||
			src.GetServiceAccounts() != nil || src.GetNotServiceAccounts() != nil
	}
	if r.GetTo() != nil && len(r.GetTo()) == 0 {
		c.add(p.Key("to"), "an empty to list is rejected by istiod's validation: remove it or add operations")
	}
	for i, t := range r.GetTo() {
		at := p.Key("to").Index(i)
		op := t.GetOperation()
		if op == nil {
			c.add(at, "a to entry without operation is rejected by istiod's validation")
			continue
		}
		toSet = true
		opp := at.Key("operation")
		if len(op.GetPorts())+len(op.GetMethods())+len(op.GetPaths())+len(op.GetHosts())+len(op.GetNotPorts())+len(op.GetNotMethods())+len(op.GetNotPaths())+len(op.GetNotHosts()) == 0 {
			c.add(opp, "an empty operation is rejected by istiod's validation: set a field or remove the entry")
		}
		for _, l := range []struct {
			name string
			v    []string
		}{{"ports", op.GetPorts()}, {"notPorts", op.GetNotPorts()}, {"methods", op.GetMethods()}, {"notMethods", op.GetNotMethods()},
			{"paths", op.GetPaths()}, {"notPaths", op.GetNotPaths()}, {"hosts", op.GetHosts()}, {"notHosts", op.GetNotHosts()}} {
			lp := opp.Key(l.name)
			c.nonEmpty(l.v, lp)
			switch l.name {
			case "ports", "notPorts":
				c.portList(l.v, lp)
			case "paths", "notPaths":
				c.pathTemplates(l.v, lp)
			}
		}
		tcpTo = tcpTo || op.GetPorts() != nil || op.GetNotPorts() != nil
	}
	for i, w := range r.GetWhen() {
		at := p.Key("when").Index(i)
		k := w.GetKey()
		switch {
		case k == "":
			c.add(at.Key("key"), "a condition without key is rejected by istiod's validation")
		case len(w.GetValues()) == 0 && len(w.GetNotValues()) == 0:
			c.addf(at, "condition %q without values or notValues is rejected by istiod's validation", k)
		default:
			c.attributeKey(k, at.Key("key"))
			c.attributeValues(k, w.GetValues(), at.Key("values"))
			c.attributeValues(k, w.GetNotValues(), at.Key("notValues"))
		}
	}
	if action == security.AuthorizationPolicy_DENY && (fromSet && !toSet && !tcpFrom || toSet && !tcpTo) {
		c.warnf(p, "this DENY rule matches HTTP attributes only: istiod warns, as on TCP ports such a rule denies all traffic; name the ports it is for")
	}
}

func (c *istioChecks) nonEmpty(v []string, p model.Path) {
	if i := slices.Index(v, ""); i >= 0 {
		c.add(p.Index(i), "an empty value is rejected by istiod's validation")
	}
}

func (c *istioChecks) ipList(v []string, p model.Path) {
	for i, s := range v {
		if s != "" && !ipOrCIDR(s) {
			c.addf(p.Index(i), "%q is rejected by istiod's validation: use an IP or a CIDR block", s)
		}
	}
}

func (c *istioChecks) portList(v []string, p model.Path) {
	for i, s := range v {
		if n, err := strconv.ParseUint(s, 10, 32); s != "" && (err != nil || n > 65535) {
			c.addf(p.Index(i), "port %q is rejected by istiod's validation: use a number 0..65535", s)
		}
	}
}

func (c *istioChecks) serviceAccounts(v []string, p model.Path) {
	if len(v) > 16 {
		c.addf(p, "%d service accounts are rejected by istiod's validation: at most 16", len(v))
		return
	}
	for i, s := range v {
		if msg := serviceAccountProblem(s); msg != "" {
			c.addf(p.Index(i), "service account %q is rejected by istiod's validation: %s", s, msg)
			return
		}
	}
}

func serviceAccountProblem(s string) string {
	ns, sa, ok := strings.Cut(s, "/")
	switch {
	case s == "":
		return "" // reported as an empty value
	case strings.Contains(s, "*"):
		return "wildcards are not allowed"
	case strings.Count(s, "/") > 1 || ok && (ns == "" || sa == ""):
		return "write NAME or NAMESPACE/NAME"
	case len(s) > 320:
		return "it is longer than 320 characters"
	}
	return ""
}

func (c *istioChecks) trustDomains(v []string, p model.Path) {
	for i, s := range v {
		if msg := wildcardValueProblem(s); msg != "" || strings.Contains(s, "/") {
			if msg == "" {
				msg = "a trust domain has no '/'"
			}
			c.addf(p.Index(i), "trust domain %q is rejected by istiod's validation: %s", s, msg)
			return
		}
	}
}

// wildcardValueProblem: at most one "*", at the start or the end.
func wildcardValueProblem(s string) string {
	switch n := strings.Count(s, "*"); {
	case n > 1:
		return "at most one wildcard is allowed"
	case n == 1 && s != "*" && !strings.HasPrefix(s, "*") && !strings.HasSuffix(s, "*"):
		return "a wildcard is allowed only at the start or the end"
	}
	return ""
}

var pathLiteralRE = regexp.MustCompile(`^[a-zA-Z0-9-._~%!$&'()+,;:@=]+$`)

// pathTemplates: {*} and {**} path templates; {**} only last, no other
// braces, and literal segments of a template path are URL-safe.
func (c *istioChecks) pathTemplates(paths []string, p model.Path) {
	for i, path := range paths {
		template := strings.Contains(path, "{*}") || strings.Contains(path, "{**}")
		anySeen := false
		for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
			msg := ""
			switch {
			case (seg == "{*}" || seg == "{**}") && anySeen:
				msg = "{**} must be the last operator"
			case seg == "{*}":
				continue
			case seg == "{**}":
				anySeen = true
				continue
			case strings.ContainsAny(seg, "{}"):
				msg = "braces are allowed only as {*} or {**}"
			case template && !pathLiteralRE.MatchString(seg):
				msg = fmt.Sprintf("segment %q is not a valid literal", seg)
			}
			if msg != "" {
				c.addf(p.Index(i), "path %q is rejected by istiod's validation: %s", path, msg)
				break
			}
		}
	}
}

// attributeKey: a when condition's key is one istiod knows.
func (c *istioChecks) attributeKey(key string, p model.Path) {
	switch {
	case strings.HasPrefix(key, "request.headers"), strings.HasPrefix(key, "request.auth.claims"), strings.HasPrefix(key, "experimental.envoy.filters."):
		if open := strings.Index(key, "["); !strings.HasSuffix(key, "]") || open <= 0 || open >= len(key)-2 {
			c.addf(p, "condition key %q is rejected by istiod's validation: write it as name[key]", key)
		}
	case slices.Contains([]string{"source.ip", "remote.ip", "destination.ip", "source.serviceAccount", "source.trustDomain", "destination.port",
		"source.namespace", "source.principal", "request.auth.principal", "request.auth.audiences", "request.auth.presenter", "connection.sni"}, key):
	case key == "destination.namespace":
		c.addf(p, "condition key %q is rejected by istiod's validation: the policy's namespace decides it", key)
	case strings.HasPrefix(key, "destination.labels"):
		c.addf(p, "condition key %q is rejected by istiod's validation: use the selector", key)
	case key == "destination.name", key == "destination.user":
		c.addf(p, "condition key %q is rejected by istiod's validation: it was removed after v1alpha1", key)
	default:
		c.addf(p, "condition key %q is rejected by istiod's validation: it is not an attribute istiod knows", key)
	}
}

// attributeValues: a when condition's values have the form its key takes.
func (c *istioChecks) attributeValues(key string, values []string, p model.Path) {
	c.nonEmpty(values, p)
	switch key {
	case "source.ip", "remote.ip", "destination.ip":
		c.ipList(values, p)
	case "source.serviceAccount":
		c.serviceAccounts(values, p)
	case "source.trustDomain":
		for i, v := range values {
			if msg := wildcardValueProblem(v); msg != "" {
				c.addf(p.Index(i), "%q is rejected by istiod's validation: %s", v, msg)
			}
		}
	case "destination.port":
		c.portList(values, p)
	}
}
