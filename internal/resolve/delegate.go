package resolve

import (
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"
)

// Route is an HTTP route of a VirtualService after delegation: its own, or
// one of a delegate's merged into the root's (docs/semantics/virtual-services.md §6.5).
type Route struct {
	*networking.HTTPRoute
	// From is the VirtualService that wrote the route: the root, or the
	// delegate.
	From *VirtualService
	// Index is the route's position in From's spec.http.
	Index int
}

// DelegateProblem is a delegate route that could not be used.
type DelegateProblem struct {
	Root  *VirtualService
	Index int // the root's route with the delegate
	Why   string
}

// expandDelegates computes the effective HTTP routes of every root
// VirtualService. Only one level of delegation exists.
func expandDelegates(vss []*VirtualService, meshDefault []string) []DelegateProblem {
	byName := map[[2]string]*VirtualService{}
	for _, vs := range vss {
		byName[[2]string{vs.Namespace(), vs.Object.Name}] = vs
	}
	var problems []DelegateProblem
	for _, vs := range vss {
		for i, r := range vs.Object.Spec.GetHttp() {
			if r.GetDelegate() == nil {
				vs.Routes = append(vs.Routes, Route{r, vs, i})
				continue
			}
			ns := r.GetDelegate().GetNamespace()
			if ns == "" {
				ns = vs.Namespace()
			}
			d := byName[[2]string{ns, r.GetDelegate().GetName()}]
			switch {
			case d == nil:
				problems = append(problems, DelegateProblem{vs, i, "delegate " + ns + "/" + r.GetDelegate().GetName() + " does not exist"})
				continue
			case !d.Delegate:
				problems = append(problems, DelegateProblem{vs, i, "delegate " + ns + "/" + d.Object.Name + " has hosts, so it is not a delegate"})
				continue
			case !newExportTo(d.Object.Spec.GetExportTo(), meshDefault, d.Namespace()).visibleIn(vs.Namespace()):
				problems = append(problems, DelegateProblem{vs, i, "delegate " + ns + "/" + d.Object.Name + " is not exported to " + vs.Namespace()})
				continue
			}
			for j, c := range d.Object.Spec.GetHttp() {
				if merged := mergeDelegateRoute(r, c); merged != nil {
					vs.Routes = append(vs.Routes, Route{merged, d, j})
				}
			}
		}
	}
	return problems
}

// mergeDelegateRoute merges a delegate's route c under the root's route r:
// matches are combined (nil when they conflict) and c inherits what it
// leaves unset.
func mergeDelegateRoute(r, c *networking.HTTPRoute) *networking.HTTPRoute {
	out := proto.Clone(c).(*networking.HTTPRoute)
	match, ok := mergeMatches(r.GetMatch(), c.GetMatch())
	if !ok {
		return nil
	}
	out.Match = match
	switch {
	case r.GetName() != "" && c.GetName() != "":
		out.Name = r.GetName() + "-" + c.GetName()
	case r.GetName() != "":
		out.Name = r.GetName()
	}
	if out.Rewrite == nil {
		out.Rewrite = r.GetRewrite()
	}
	if out.DirectResponse == nil {
		out.DirectResponse = r.GetDirectResponse()
	}
	if out.Timeout == nil {
		out.Timeout = r.GetTimeout()
	}
	if out.Retries == nil {
		out.Retries = r.GetRetries()
	}
	if out.Fault == nil {
		out.Fault = r.GetFault()
	}
	if out.Mirror == nil {
		out.Mirror = r.GetMirror()
	}
	if out.MirrorPercentage == nil {
		out.MirrorPercentage = r.GetMirrorPercentage()
	}
	// The deprecated field is still honoured by istiod.
	if out.MirrorPercent == nil {
		out.MirrorPercent = r.GetMirrorPercent()
	}
	if out.CorsPolicy == nil {
		out.CorsPolicy = r.GetCorsPolicy()
	}
	if out.Mirrors == nil {
		out.Mirrors = r.GetMirrors()
	}
	if out.Headers == nil {
		out.Headers = r.GetHeaders()
	}
	return out
}

// mergeMatches combines root and delegate matches: every delegate match
// must be compatible with at least one root match, and each compatible pair
// gives one merged match.
func mergeMatches(root, leaf []*networking.HTTPMatchRequest) ([]*networking.HTTPMatchRequest, bool) {
	if len(root) == 0 {
		return leaf, true
	}
	if len(leaf) == 0 {
		return root, true
	}
	var out []*networking.HTTPMatchRequest
	for _, l := range leaf {
		found := false
		for _, r := range root {
			if matchConflict(r, l) {
				continue
			}
			out = append(out, mergeMatch(r, l))
			found = true
		}
		if !found {
			return nil, false
		}
	}
	return out, len(out) > 0
}

func matchConflict(r, l *networking.HTTPMatchRequest) bool {
	if stringMatchConflict(r.GetUri(), l.GetUri()) || stringMatchConflict(r.GetScheme(), l.GetScheme()) ||
		stringMatchConflict(r.GetMethod(), l.GetMethod()) || stringMatchConflict(r.GetAuthority(), l.GetAuthority()) {
		return true
	}
	if r.GetIgnoreUriCase() != l.GetIgnoreUriCase() {
		return true
	}
	if r.GetPort() != 0 && l.GetPort() != 0 && r.GetPort() != l.GetPort() {
		return true
	}
	if r.GetSourceNamespace() != "" && l.GetSourceNamespace() != r.GetSourceNamespace() {
		return true
	}
	for k, v := range l.GetSourceLabels() {
		if rv, ok := r.GetSourceLabels()[k]; ok && rv != v {
			return true
		}
	}
	if len(r.GetGateways()) > 0 {
		for _, g := range l.GetGateways() {
			if !slices.Contains(r.GetGateways(), g) {
				return true
			}
		}
	}
	return false
}

// stringMatchConflict: a root exact needs an equal leaf exact, a root
// prefix a leaf exact or prefix that extends it; a regex on either side
// conflicts with anything set on the other.
func stringMatchConflict(r, l *networking.StringMatch) bool {
	if r == nil || l == nil || r.GetMatchType() == nil || l.GetMatchType() == nil {
		return false
	}
	if r.GetRegex() != "" || l.GetRegex() != "" {
		return true
	}
	switch {
	case r.GetExact() != "":
		return l.GetExact() != r.GetExact()
	case r.GetPrefix() != "":
		if l.GetExact() != "" {
			return !strings.HasPrefix(l.GetExact(), r.GetPrefix())
		}
		return !strings.HasPrefix(l.GetPrefix(), r.GetPrefix())
	}
	return false
}

func mergeMatch(r, l *networking.HTTPMatchRequest) *networking.HTTPMatchRequest {
	out := proto.Clone(l).(*networking.HTTPMatchRequest)
	if out.Uri == nil {
		out.Uri = r.GetUri()
	}
	if out.Scheme == nil {
		out.Scheme = r.GetScheme()
	}
	if out.Method == nil {
		out.Method = r.GetMethod()
	}
	if out.Authority == nil {
		out.Authority = r.GetAuthority()
	}
	if out.Port == 0 {
		out.Port = r.GetPort()
	}
	if out.SourceNamespace == "" {
		out.SourceNamespace = r.GetSourceNamespace()
	}
	if len(out.Gateways) == 0 {
		out.Gateways = r.GetGateways()
	}
	if out.StatPrefix == "" {
		out.StatPrefix = r.GetStatPrefix()
	}
	out.Headers = unionMaps(r.GetHeaders(), l.GetHeaders())
	out.WithoutHeaders = unionMaps(r.GetWithoutHeaders(), l.GetWithoutHeaders())
	out.QueryParams = unionMaps(r.GetQueryParams(), l.GetQueryParams())
	out.SourceLabels = unionMaps(r.GetSourceLabels(), l.GetSourceLabels())
	return out
}

// unionMaps joins root and leaf entries, the leaf winning on a clash.
func unionMaps[V any](root, leaf map[string]V) map[string]V {
	if len(root) == 0 && len(leaf) == 0 {
		return nil
	}
	out := maps.Clone(root)
	if out == nil {
		out = map[string]V{}
	}
	maps.Copy(out, leaf)
	return out
}
