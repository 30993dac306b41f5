package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/certcheck"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// annIgnorePolicy on a BackendTLSPolicy makes istiod pass it over.
const annIgnorePolicy = "istio.io/ignore-policy-attachment"

// The credential istiod gives a policy whose CA cannot be used: no proxy
// can load it, so TLS to the targets fails rather than going unchecked.
const invalidCredential = "invalid://"

// backendTLSParts adds what each BackendTLSPolicy gives its targets to
// parts, oldest policy first (docs/semantics/gateway-api.md §G8), and
// records each policy's status.
func (c *converter) backendTLSParts(parts *policyParts) {
	pols := slices.Clone(c.tlsPolicies)
	slices.SortStableFunc(pols, func(a, b *model.BackendTLSPolicy) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	pols = slices.DeleteFunc(pols, func(p *model.BackendTLSPolicy) bool {
		return strings.EqualFold(p.Annotations[annIgnorePolicy], "true")
	})
	for _, p := range pols {
		tls, conds := c.policyTLS(p)
		status := &Policy{Kind: "BackendTLSPolicy", Object: &p.ObjectMeta}
		c.policies = append(c.policies, status)
		for i, t := range p.Spec.TargetRefs {
			target := PolicyTarget{Kind: string(t.Kind), Name: string(t.Name), Section: sectionOf(t), Conditions: conds}
			hosts, port, reason, why := c.policyTargetHosts(p, i)
			if reason == "" {
				if winner := conflictingPolicy(p, t, pols); winner != nil {
					reason, why = "Conflicted", fmt.Sprintf("BackendTLSPolicy %q, older, targets the same backend", winner.Name)
					c.report(diag.PolicyTargetRejected.At(p.RefAt(targetPath(i)), p.Namespace+"/"+p.Name, targetName(t), reason, why))
				}
			}
			if reason != "" {
				target.Conditions = withCondition(conds, Condition{Type: "Accepted", Reason: reason, Message: why})
			}
			target.Hosts = hosts
			status.Targets = append(status.Targets, target)
			if reason != "" {
				continue
			}
			for _, h := range hosts {
				parts.add(policyTarget{kind: string(t.Kind), ns: p.Namespace, name: string(t.Name), host: h},
					policyPart{kind: "BackendTLSPolicy", from: &p.ObjectMeta, index: i, section: target.Section, port: port, tls: tls})
			}
		}
	}
}

func targetPath(i int) model.Path {
	return model.Path{}.Key("spec").Key("targetRefs").Index(i)
}

func targetName(t gwv1.LocalPolicyTargetReferenceWithSectionName) string {
	s := string(t.Kind) + " " + string(t.Name)
	if t.SectionName != nil && *t.SectionName != "" {
		s += " section " + string(*t.SectionName)
	}
	return s
}

// policyTargetHosts resolves a policy's targetRef: the hosts it gives TLS
// to and, with a sectionName, the number of the port of that name; reason
// and why say, with the finding reported, why istiod does not accept it.
// A Service of a namespace the input holds no Services of is not judged
// and gets nothing (no hosts), as meshc builds no cluster for it.
func (c *converter) policyTargetHosts(p *model.BackendTLSPolicy, i int) (hosts []string, port uint32, reason, why string) {
	t := p.Spec.TargetRefs[i]
	reject := func(why string) ([]string, uint32, string, string) {
		why = "targetRefs invalid: " + why
		c.report(diag.PolicyTargetRejected.At(p.RefAt(targetPath(i)), p.Namespace+"/"+p.Name, targetName(t), "TargetNotFound", why))
		return nil, 0, "TargetNotFound", why
	}
	type portName struct {
		name   string
		number uint32
	}
	var ports []portName
	var found, judged bool
	key := nsName{p.Namespace, string(t.Name)}
	switch {
	case t.Group == "" && t.Kind == "Service":
		svc := c.services.get(key)
		found, judged = svc != nil, c.services.has(p.Namespace)
		if found {
			hosts = []string{c.serviceHost(string(t.Name), p.Namespace)}
			for _, sp := range svc.Spec.Ports {
				ports = append(ports, portName{sp.Name, uint32(sp.Port)})
			}
		}
	case t.Group == "networking.istio.io" && t.Kind == "ServiceEntry":
		se := c.serviceEntries[key]
		found, judged = se != nil, c.seNs[p.Namespace]
		if found {
			hosts = se.Spec.GetHosts()
			for _, sp := range se.Spec.GetPorts() {
				ports = append(ports, portName{sp.GetName(), sp.GetNumber()})
			}
		}
	default:
		return reject(fmt.Sprintf("unsupported reference kind: %s", t.Kind))
	}
	switch {
	case !found && judged:
		return reject(fmt.Sprintf("%s %s/%s not found", t.Kind, p.Namespace, t.Name))
	case !found:
		return nil, 0, "", ""
	}
	if t.SectionName == nil || *t.SectionName == "" {
		return hosts, 0, "", ""
	}
	j := slices.IndexFunc(ports, func(pn portName) bool { return pn.name == string(*t.SectionName) })
	if j < 0 {
		return reject(fmt.Sprintf("sectionName %q does not exist in %s %s/%s", *t.SectionName, t.Kind, p.Namespace, t.Name))
	}
	return hosts, ports[j].number, "", ""
}

// conflictingPolicy is the policy that takes a targetRef from p: an older
// one (creation time, then name) naming the same target and section.
func conflictingPolicy(p *model.BackendTLSPolicy, t gwv1.LocalPolicyTargetReferenceWithSectionName, pols []*model.BackendTLSPolicy) *model.BackendTLSPolicy {
	for _, o := range pols {
		if o == p || o.Namespace != p.Namespace {
			continue
		}
		if cmp.Or(o.Created.Compare(p.Created), cmp.Compare(o.Name, p.Name)) >= 0 {
			continue
		}
		if slices.ContainsFunc(o.Spec.TargetRefs, func(ot gwv1.LocalPolicyTargetReferenceWithSectionName) bool {
			return ot.Group == t.Group && ot.Kind == t.Kind && ot.Name == t.Name && sectionOf(ot) == sectionOf(t)
		}) {
			return o
		}
	}
	return nil
}

func sectionOf(t gwv1.LocalPolicyTargetReferenceWithSectionName) string {
	if t.SectionName == nil {
		return ""
	}
	return string(*t.SectionName)
}

// policyTLS is the TLS a policy originates: SIMPLE, with its hostname as
// SNI, its subjectAltNames, and its CA: none for the system's, a
// ConfigMap's (configmap://ns/name), or invalid:// when the reference
// cannot be used; and the policy's Accepted and ResolvedRefs conditions.
func (c *converter) policyTLS(p *model.BackendTLSPolicy) (*networking.ClientTLSSettings, []Condition) {
	conds := []Condition{policyAccepted, {Type: "ResolvedRefs", Status: true, Reason: "ResolvedRefs", Message: "Configuration is valid"}}
	v := p.Spec.Validation
	tls := &networking.ClientTLSSettings{Mode: networking.ClientTLSSettings_SIMPLE, Sni: string(v.Hostname)}
	for _, san := range v.SubjectAltNames {
		switch san.Type {
		case gwv1.HostnameSubjectAltNameType:
			tls.SubjectAltNames = append(tls.SubjectAltNames, string(san.Hostname))
		case gwv1.URISubjectAltNameType:
			tls.SubjectAltNames = append(tls.SubjectAltNames, string(san.URI))
		}
	}
	validation := model.Path{}.Key("spec").Key("validation")
	if wk := v.WellKnownCACertificates; wk != nil {
		if *wk != gwv1.WellKnownCACertificatesSystem {
			c.report(diag.PolicyValidationInvalid.At(p.RefAt(validation.Key("wellKnownCACertificates")), p.Namespace+"/"+p.Name, "Invalid",
				fmt.Sprintf("unknown wellKnownCACertificates %q; istiod validates with the system's CAs", *wk)))
			conds[0] = Condition{Type: "Accepted", Reason: "Invalid", Message: fmt.Sprintf("Unknown wellKnownCACertificates: %v", *wk)}
		}
		return tls, conds
	}
	if len(v.CACertificateRefs) == 0 {
		return tls, conds
	}
	// istiod reads only the first reference.
	ref := v.CACertificateRefs[0]
	shown := p.Namespace + "/" + string(ref.Name)
	bad := func(reason, why string) (*networking.ClientTLSSettings, []Condition) {
		c.report(diag.PolicyCARefBad.At(p.RefAt(validation.Key("caCertificateRefs").Index(0)), p.Namespace+"/"+p.Name, shown, reason, why))
		tls.CredentialName = invalidCredential
		conds = []Condition{{Type: "Accepted", Reason: "NoValidCACertificate", Message: "Certificate reference invalid: " + why},
			{Type: "ResolvedRefs", Reason: reason, Message: why}}
		return tls, conds
	}
	key := nsName{p.Namespace, string(ref.Name)}
	var found bool
	switch {
	case ref.Group == "" && ref.Kind == "ConfigMap":
		cm := c.configMaps[key]
		if cm == nil && c.configMapNs[p.Namespace] {
			return bad("InvalidCACertificateRef", "ConfigMap "+shown+" not found: the input holds ConfigMaps of "+p.Namespace+" but not this one")
		}
		if cm != nil {
			if problem := certcheck.RootKey(certcheck.Strings(cm.Data)); problem != "" {
				return bad("InvalidCACertificateRef", "certificate invalid: "+problem)
			}
		}
		tls.CredentialName = "configmap://" + shown
		return tls, conds
	case ref.Group == "" && ref.Kind == "Secret":
		found = c.secrets[key] != nil
	case ref.Group == "" && ref.Kind == "Service":
		found = c.services.get(key) != nil
	case ref.Group == "networking.istio.io" && ref.Kind == "ServiceEntry":
		found = c.serviceEntries[key] != nil
	default:
		return bad("InvalidKind", fmt.Sprintf("kind %s is not supported; only a ConfigMap is", ref.Kind))
	}
	if !found {
		return bad("InvalidCACertificateRef", fmt.Sprintf("%s %s not found: it is not in the input", ref.Kind, shown))
	}
	return bad("InvalidKind", fmt.Sprintf("kind %s is not supported; only a ConfigMap is", ref.Kind))
}
