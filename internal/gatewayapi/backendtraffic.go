package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// The Gateway API's defaults for a retry budget (the CRD's, which the API
// server applies): 20 percent over 10 seconds, and at least 10 retries
// allowed.
const (
	defaultBudgetPercent  = 20
	defaultBudgetInterval = 10 * time.Second
	defaultMinRetries     = 10
)

// backendTrafficParts adds what each XBackendTrafficPolicy gives the
// Services it targets to parts, and records each policy's status
// (docs/semantics/gateway-api.md §G9). istiod reads the kind only with
// PILOT_ENABLE_ALPHA_GATEWAY_API; without it each policy is reported as
// not read.
func (c *converter) backendTrafficParts(parts *policyParts) {
	pols := slices.Clone(c.trafficPolicies)
	slices.SortStableFunc(pols, func(a, b *model.XBackendTrafficPolicy) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, p := range pols {
		name := p.Namespace + "/" + p.Name
		if !c.opts.AlphaGatewayAPI {
			c.report(diag.AlphaPolicyNotRead.At(p.Ref(), "XBackendTrafficPolicy", name))
			continue
		}
		if strings.EqualFold(p.Annotations[annIgnorePolicy], "true") {
			continue
		}
		accepted := policyAccepted
		if p.Spec.SessionPersistence != nil {
			accepted.Message = "Configuration is valid, but Istio does not support the following fields: sessionPersistence"
			c.report(diag.TrafficPolicyFieldUnsupported.At(p.RefAt(model.ParsePath("spec.sessionPersistence")), name, "sessionPersistence"))
		}
		budget := retryBudget(p)
		status := &Policy{Kind: "XBackendTrafficPolicy", Object: &p.ObjectMeta}
		c.policies = append(c.policies, status)
		for i, t := range p.Spec.TargetRefs {
			target := PolicyTarget{Kind: string(t.Kind), Name: string(t.Name), Conditions: []Condition{accepted}}
			host, why := c.trafficTarget(p.Namespace, string(t.Group), string(t.Kind), string(t.Name))
			switch {
			case why != "":
				why = "targetRefs invalid: " + why
				target.Conditions = []Condition{{Type: "Accepted", Reason: "TargetNotFound", Message: why}}
				c.report(diag.TrafficPolicyTargetRejected.At(p.RefAt(targetPath(i)), name, string(t.Kind)+" "+string(t.Name), "TargetNotFound", why))
			case host != "":
				target.Hosts = []string{host}
				// istiod gives every policy a load balancer, empty: it
				// changes nothing, but makes the oldest policy of a
				// Service the only one applied there.
				parts.add(policyTarget{kind: "Service", ns: p.Namespace, name: string(t.Name), host: host},
					policyPart{kind: "XBackendTrafficPolicy", from: &p.ObjectMeta, index: i, lb: &networking.LoadBalancerSettings{}, budget: budget})
			}
			status.Targets = append(status.Targets, target)
		}
	}
}

// trafficTarget resolves an XBackendTrafficPolicy's targetRef: the host
// of the Service it names, or why istiod does not accept it. A Service of
// a namespace the input holds no Services of is not judged, and gets
// nothing (neither host nor reason).
func (c *converter) trafficTarget(ns, group, kind, name string) (host, why string) {
	key := nsName{ns, name}
	switch {
	case group == "" && kind == "Service":
		switch {
		case c.services.get(key) != nil:
			return c.serviceHost(name, ns), ""
		case c.services.has(ns):
			return "", fmt.Sprintf("reference %s/%s (of kind %s) not found", ns, name, kind)
		}
		return "", ""
	case group == "networking.istio.io" && kind == "ServiceEntry":
		if c.serviceEntries[key] != nil || !c.seNs[ns] {
			return "", "unsupported reference kind: " + kind
		}
		return "", fmt.Sprintf("reference %s/%s (of kind %s) not found", ns, name, kind)
	}
	return "", "unsupported kind " + kind
}

// retryBudget is the retry budget of a policy's retryConstraint, with
// the Gateway API's defaults where it gives none; nil without one.
func retryBudget(p *model.XBackendTrafficPolicy) *networking.TrafficPolicy_RetryBudget {
	rc := p.Spec.RetryConstraint
	if rc == nil {
		return nil
	}
	b := &networking.TrafficPolicy_RetryBudget{Percent: wrapperspb.Double(defaultBudgetPercent),
		BudgetInterval: durationpb.New(defaultBudgetInterval), MinRetryConcurrency: defaultMinRetries}
	if bd := rc.Budget; bd != nil {
		if bd.Percent != nil {
			b.Percent = wrapperspb.Double(float64(*bd.Percent))
		}
		if bd.Interval != nil {
			if d, err := time.ParseDuration(string(*bd.Interval)); err == nil {
				b.BudgetInterval = durationpb.New(d)
			}
		}
	}
	if r := rc.MinRetryRate; r != nil && r.Count != nil {
		b.MinRetryConcurrency = uint32(*r.Count)
	}
	return b
}
