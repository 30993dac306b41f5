package compile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/resolve"
)

// Sizes of the pieces of a build, measured on generated meshes (JSON as
// meshc writes it): an outbound cluster with its endpoints, the listener
// and route entries of one visible service, a proxy's own files.
const (
	bytesPerCluster = 4300
	bytesPerService = 2800
	bytesPerProxy   = 38000
	// bytesPerADSBootstrap is a bootstrap of BuildOptions.ADS, the
	// proxy's whole output.
	bytesPerADSBootstrap = 3000
)

// Estimate is what a build of some proxies would write, from the resolved
// scopes alone: an order of magnitude, to stop before spending, not a
// measurement.
type Estimate struct {
	Bytes int64
	// Scopes are the scopes of the build, largest share first.
	Scopes []ScopeEstimate
}

// ScopeEstimate is one scope's share of a build.
type ScopeEstimate struct {
	// What names the scope: its Sidecar, or its namespace without one.
	What string
	// Sidecar is set when a Sidecar defines the scope.
	Sidecar string
	// Namespace is the first proxy's.
	Namespace string
	Proxies   int
	Services  int
	// PerProxy is what one proxy of the scope needs; Bytes what the scope
	// adds to the build.
	PerProxy, Bytes int64
}

// Estimate estimates the bytes a build of views would write. Shared, what
// proxies share is counted once: cluster sets by the services every
// namespace sees of those they hold (the others' clusters with each
// proxy), listeners and routes by scope; self-contained, every proxy
// counts all; with ADS, every proxy is one small bootstrap.
func (r *Result) Estimate(views []*resolve.ProxyView, opts BuildOptions) Estimate {
	byScope := map[*resolve.Scope]*ScopeEstimate{}
	var order []*resolve.Scope
	clusterSets := map[string]bool{}
	privateBytes := map[*resolve.Scope]int64{}
	var est Estimate
	for _, v := range views {
		se := byScope[v.Scope]
		if se == nil {
			size := scopeSize(v.Scope)
			se = &ScopeEstimate{Namespace: v.Proxy.Namespace, Services: size.services, What: v.Scope.Name()}
			if sc := v.Choice.Sidecar; sc != nil {
				se.Sidecar = sc.Namespace + "/" + sc.Name
			}
			clusterBytes, routeBytes := int64(size.clusters)*bytesPerCluster, int64(size.services)*bytesPerService
			privateBytes[v.Scope] = int64(size.private) * bytesPerCluster
			se.PerProxy = clusterBytes + routeBytes + bytesPerProxy
			if !opts.SelfContained && opts.ADS == "" {
				// Private clusters go with each proxy, the others to a
				// cluster file of the services every namespace sees.
				se.Bytes = routeBytes
				if key := servicesKey(v.Scope); !clusterSets[key] {
					clusterSets[key] = true
					se.Bytes += int64(size.clusters-size.private) * bytesPerCluster
				}
			}
			byScope[v.Scope] = se
			order = append(order, v.Scope)
		}
		se.Proxies++
		switch {
		case opts.ADS != "":
			se.PerProxy, se.Bytes = bytesPerADSBootstrap, se.Bytes+bytesPerADSBootstrap
		case opts.SelfContained:
			se.Bytes += se.PerProxy
		default:
			se.Bytes += bytesPerProxy + privateBytes[v.Scope]
		}
	}
	for _, sc := range order {
		est.Scopes = append(est.Scopes, *byScope[sc])
		est.Bytes += byScope[sc].Bytes
	}
	slices.SortStableFunc(est.Scopes, func(a, b ScopeEstimate) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return est
}

// sizes count a scope's outbound clusters (a port of a service, and one
// per subset of the DestinationRule the scope uses for it), those of them
// whose service not every namespace sees, and its services.
type sizes struct{ clusters, private, services int }

func scopeSize(sc *resolve.Scope) sizes {
	var n sizes
	for _, s := range sc.Services {
		subsets := 0
		if dec, ok := sc.DestinationRule(s.Host); ok && dec.Rule != nil {
			subsets = len(dec.Rule.Subsets)
		}
		c := len(s.Ports) * (1 + subsets)
		n.clusters += c
		if !s.ExportedEverywhere() {
			n.private += c
		}
	}
	n.services = len(sc.Services)
	return n
}

// servicesKey identifies the services every namespace sees of those a
// scope sees, which decide its shared cluster set.
func servicesKey(sc *resolve.Scope) string {
	var b strings.Builder
	for _, s := range sc.Services {
		if s.ExportedEverywhere() {
			fmt.Fprintf(&b, "%p;", s)
		}
	}
	return b.String()
}

// OverBudgetError stops a build whose estimate exceeds the budget.
type OverBudgetError struct {
	Estimate
	Budget int64
}

func (e *OverBudgetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "this build would write about %s, over the budget of %s (--max-output-bytes; 0 builds anyway)", size(e.Bytes), size(e.Budget))
	for i, s := range e.Scopes[:min(len(e.Scopes), 3)] {
		if i == 0 {
			b.WriteString("; the most: ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s, %d proxies seeing %d services, %s", s.What, s.Proxies, s.Services, size(s.Bytes))
	}
	if len(e.Scopes) > 0 {
		if s := e.Scopes[0]; s.Sidecar != "" {
			fmt.Fprintf(&b, "; narrowing the egress hosts of Sidecar %s to what the workloads call would trim it", s.Sidecar)
		} else {
			fmt.Fprintf(&b, "; a Sidecar in namespace %s whose egress hosts list only what the workloads call would trim it", s.Namespace)
		}
	}
	return b.String()
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
