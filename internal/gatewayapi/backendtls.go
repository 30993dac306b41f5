package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

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

// generatedCreation is the creation time of a generated DestinationRule.
// istiod gives it none, so it sorts before every written rule, all of
// which have one on a cluster: before the zero time meshc gives a written
// object without one, too.
var generatedCreation = time.Time{}.Add(-time.Second)

// policyTarget is one Service or ServiceEntry host a policy gives TLS to:
// a port's (section) or the whole host's.
type policyTarget struct {
	kind, ns, name, host string
}

// policyPart is what one policy contributes to a target's DestinationRule.
type policyPart struct {
	policy  *model.BackendTLSPolicy
	index   int    // the targetRef's
	section string // port name, "" for every port
	port    uint32 // the section's port number
	tls     *networking.ClientTLSSettings
}

// backendTLSPolicies turns BackendTLSPolicies into the DestinationRules
// istiod generates from them, one per target and host, merging the
// policies of a target oldest first (docs/semantics/gateway-api.md §G8).
func (c *converter) backendTLSPolicies() {
	pols := slices.Clone(c.tlsPolicies)
	slices.SortStableFunc(pols, func(a, b *model.BackendTLSPolicy) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	pols = slices.DeleteFunc(pols, func(p *model.BackendTLSPolicy) bool {
		return strings.EqualFold(p.Annotations[annIgnorePolicy], "true")
	})
	var order []policyTarget
	parts := map[policyTarget][]policyPart{}
	for _, p := range pols {
		tls := c.policyTLS(p)
		for i, t := range p.Spec.TargetRefs {
			hosts, port, ok := c.policyTargetHosts(p, i)
			if !ok {
				continue
			}
			if winner := conflictingPolicy(p, t, pols); winner != nil {
				c.report(diag.PolicyTargetRejected.At(p.RefAt(targetPath(i)), p.Namespace+"/"+p.Name, targetName(t), "Conflicted",
					fmt.Sprintf("BackendTLSPolicy %q, older, targets the same backend", winner.Name)))
				continue
			}
			for _, h := range hosts {
				k := policyTarget{kind: string(t.Kind), ns: p.Namespace, name: string(t.Name), host: h}
				if _, seen := parts[k]; !seen {
					order = append(order, k)
				}
				section := ""
				if t.SectionName != nil {
					section = string(*t.SectionName)
				}
				parts[k] = append(parts[k], policyPart{policy: p, index: i, section: section, port: port, tls: tls})
			}
		}
	}
	for _, k := range order {
		c.out = append(c.out, policyRule(k, parts[k]))
	}
}

// policyRule is the DestinationRule of one target host: the oldest
// policy's TLS for the whole host and for each port.
func policyRule(k policyTarget, parts []policyPart) *model.DestinationRule {
	name := k.name + "~" + generatedSuffix
	if k.kind == "ServiceEntry" {
		name = k.name + "~" + strings.ReplaceAll(k.host, ".", "-") + "~" + generatedSuffix
	}
	first := parts[0].policy
	dr := &model.DestinationRule{ObjectMeta: derived("networking.istio.io/v1", "DestinationRule", k.ns, name, &first.ObjectMeta, targetPath(parts[0].index), ""),
		Spec: &networking.DestinationRule{Host: k.host, TrafficPolicy: &networking.TrafficPolicy{}}}
	dr.Created = generatedCreation
	tp := dr.Spec.TrafficPolicy
	var parents []string
	ports := map[string]bool{}
	for _, part := range parts {
		switch {
		case part.section == "" && tp.Tls == nil:
			tp.Tls = part.tls
		case part.section != "" && !ports[part.section]:
			ports[part.section] = true
			tp.PortLevelSettings = append(tp.PortLevelSettings, &networking.TrafficPolicy_PortTrafficPolicy{
				Port: &networking.PortSelector{Number: part.port}, Tls: part.tls})
		}
		parent := "BackendTLSPolicy/" + part.policy.Namespace + "." + part.policy.Name
		if !slices.Contains(parents, parent) {
			parents = append(parents, parent)
			if part.policy != first {
				dr.Derived.Parts = append(dr.Derived.Parts, model.DerivedPart{From: &part.policy.ObjectMeta, Path: targetPath(part.index)})
			}
		}
	}
	slices.SortStableFunc(tp.PortLevelSettings, func(a, b *networking.TrafficPolicy_PortTrafficPolicy) int {
		return cmp.Compare(a.GetPort().GetNumber(), b.GetPort().GetNumber())
	})
	dr.Annotations = map[string]string{annParents: strings.Join(parents, ",")}
	return dr
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
// to and, with a sectionName, the number of the port of that name; ok is
// false, with the finding reported, when istiod does not accept it. A
// Service of a namespace the input holds no Services of is not judged
// and gets nothing, as meshc builds no cluster for it.
func (c *converter) policyTargetHosts(p *model.BackendTLSPolicy, i int) (hosts []string, port uint32, ok bool) {
	t := p.Spec.TargetRefs[i]
	reject := func(why string) ([]string, uint32, bool) {
		c.report(diag.PolicyTargetRejected.At(p.RefAt(targetPath(i)), p.Namespace+"/"+p.Name, targetName(t), "TargetNotFound", "targetRefs invalid: "+why))
		return nil, 0, false
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
		svc := c.services[key]
		found, judged = svc != nil, c.svcNs[p.Namespace]
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
		return nil, 0, false
	}
	if t.SectionName == nil || *t.SectionName == "" {
		return hosts, 0, true
	}
	j := slices.IndexFunc(ports, func(pn portName) bool { return pn.name == string(*t.SectionName) })
	if j < 0 {
		return reject(fmt.Sprintf("sectionName %q does not exist in %s %s/%s", *t.SectionName, t.Kind, p.Namespace, t.Name))
	}
	return hosts, ports[j].number, true
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
// cannot be used.
func (c *converter) policyTLS(p *model.BackendTLSPolicy) *networking.ClientTLSSettings {
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
		}
		return tls
	}
	if len(v.CACertificateRefs) == 0 {
		return tls
	}
	// istiod reads only the first reference.
	ref := v.CACertificateRefs[0]
	shown := p.Namespace + "/" + string(ref.Name)
	bad := func(reason, why string) *networking.ClientTLSSettings {
		c.report(diag.PolicyCARefBad.At(p.RefAt(validation.Key("caCertificateRefs").Index(0)), p.Namespace+"/"+p.Name, shown, reason, why))
		tls.CredentialName = invalidCredential
		return tls
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
		return tls
	case ref.Group == "" && ref.Kind == "Secret":
		found = c.secrets[key] != nil
	case ref.Group == "" && ref.Kind == "Service":
		found = c.services[key] != nil
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
