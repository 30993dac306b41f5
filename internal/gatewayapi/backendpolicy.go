package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// generatedCreation is the creation time of a generated DestinationRule.
// istiod gives it none, so it sorts before every written rule, all of
// which have one on a cluster: before the zero time meshc gives a written
// object without one, too.
var generatedCreation = time.Time{}.Add(-time.Second)

// policyAccepted is a policy's Accepted condition when nothing is wrong.
var policyAccepted = Condition{Type: "Accepted", Status: true, Reason: "Accepted", Message: "Configuration is valid"}

// Policy is a backend policy (BackendTLSPolicy, XBackendTrafficPolicy)
// with the status istiod would give each of its targetRefs: for explain.
type Policy struct {
	Kind    string
	Object  *model.ObjectMeta
	Targets []PolicyTarget
}

// PolicyTarget is one targetRef of a policy.
type PolicyTarget struct {
	Kind, Name, Section string
	// Hosts are the hosts of the target: none when it does not exist or
	// cannot be judged.
	Hosts      []string
	Conditions []Condition
	// Shadowed, when not empty, says why istiod does not apply the
	// policy to the target although it accepts it.
	Shadowed string
}

// withCondition is conds with the condition of c's type replaced by c.
func withCondition(conds []Condition, c Condition) []Condition {
	out := slices.Clone(conds)
	for i := range out {
		if out[i].Type == c.Type {
			out[i] = c
			return out
		}
	}
	return append(out, c)
}

// policyTarget is one Service or ServiceEntry host backend policies
// apply to.
type policyTarget struct {
	kind, ns, name, host string
}

// policyPart is what one policy gives one target host.
type policyPart struct {
	kind    string // the policy's
	from    *model.ObjectMeta
	index   int    // the targetRef's
	section string // port name, "" for every port
	port    uint32 // the section's port number
	tls     *networking.ClientTLSSettings
	lb      *networking.LoadBalancerSettings
	budget  *networking.TrafficPolicy_RetryBudget
}

// policyParts are the parts of every target host, targets in the order
// first seen.
type policyParts struct {
	order []policyTarget
	parts map[policyTarget][]policyPart
}

func (p *policyParts) add(k policyTarget, part policyPart) {
	if p.parts == nil {
		p.parts = map[policyTarget][]policyPart{}
	}
	if _, seen := p.parts[k]; !seen {
		p.order = append(p.order, k)
	}
	p.parts[k] = append(p.parts[k], part)
}

// backendPolicies turns BackendTLSPolicies and XBackendTrafficPolicies
// into the DestinationRules istiod generates from them, one per target
// host (docs/semantics/gateway-api.md §G8, §G9).
func (c *converter) backendPolicies() {
	var parts policyParts
	c.backendTLSParts(&parts)
	c.backendTrafficParts(&parts)
	for _, k := range parts.order {
		c.out = append(c.out, c.policyRule(k, parts.parts[k]))
	}
}

// shadow marks the status of a part's targetRef as not applied.
func (c *converter) shadow(part policyPart, why string) {
	for _, p := range c.policies {
		if p.Object == part.from && part.index < len(p.Targets) {
			p.Targets[part.index].Shadowed = why
		}
	}
}

// policyRule is the DestinationRule of one target host. The policies'
// parts are taken oldest first (creation time, namespace, name), and as
// istiod takes them: the first TLS for the whole host, the first for each
// port, the first load balancer and the first retry budget win, and a
// part that brings a setting already taken is passed over whole, its
// policy left out of the rule's parents.
func (c *converter) policyRule(k policyTarget, parts []policyPart) *model.DestinationRule {
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b policyPart) int {
		return cmp.Or(a.from.Created.Compare(b.from.Created), cmp.Compare(a.from.Namespace, b.from.Namespace), cmp.Compare(a.from.Name, b.from.Name))
	})
	name := k.name + "~" + generatedSuffix
	if k.kind == "ServiceEntry" {
		name = k.name + "~" + strings.ReplaceAll(k.host, ".", "-") + "~" + generatedSuffix
	}
	first := parts[0]
	dr := &model.DestinationRule{ObjectMeta: derived("networking.istio.io/v1", "DestinationRule", k.ns, name, first.from, targetPath(first.index), ""),
		Spec: &networking.DestinationRule{Host: k.host, TrafficPolicy: &networking.TrafficPolicy{}}}
	dr.Created = generatedCreation
	tp := dr.Spec.TrafficPolicy
	var parents []string
	ports := map[string]bool{}
	var lbFrom *model.ObjectMeta
	for _, part := range parts {
		if part.tls != nil {
			switch {
			case part.section != "":
				if !ports[part.section] {
					ports[part.section] = true
					tp.PortLevelSettings = append(tp.PortLevelSettings, &networking.TrafficPolicy_PortTrafficPolicy{
						Port: &networking.PortSelector{Number: part.port}, Tls: part.tls})
				}
			case tp.Tls != nil:
				continue
			default:
				tp.Tls = part.tls
			}
		}
		if part.lb != nil {
			if tp.LoadBalancer != nil {
				c.report(diag.TrafficPolicyShadowed.At(part.from.RefAt(targetPath(part.index)), part.from.Namespace+"/"+part.from.Name,
					k.host, lbFrom.Name))
				c.shadow(part, fmt.Sprintf("istiod applies only the oldest policy of a Service, XBackendTrafficPolicy %q", lbFrom.Name))
				continue
			}
			tp.LoadBalancer, lbFrom = part.lb, part.from
		}
		if part.budget != nil {
			if tp.RetryBudget != nil {
				continue
			}
			tp.RetryBudget = part.budget
		}
		parent := part.kind + "/" + part.from.Namespace + "." + part.from.Name
		if !slices.Contains(parents, parent) {
			parents = append(parents, parent)
			if part.from != first.from {
				dr.Derived.Parts = append(dr.Derived.Parts, model.DerivedPart{From: part.from, Path: targetPath(part.index)})
			}
		}
	}
	slices.SortStableFunc(tp.PortLevelSettings, func(a, b *networking.TrafficPolicy_PortTrafficPolicy) int {
		return cmp.Compare(a.GetPort().GetNumber(), b.GetPort().GetNumber())
	})
	dr.Annotations = map[string]string{annParents: strings.Join(parents, ",")}
	return dr
}
