package simulate

import (
	"net/netip"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/meshc/meshc/internal/envoycfg"
)

// targets finds the action's clusters and their endpoints. A cluster the
// configuration lacks stops the walk; the others are still listed.
func targets(cfg *envoycfg.Config, t *Trace, a *Action, req Request, dst netip.Addr) {
	ws := a.Weighted
	if len(ws) == 0 {
		ws = []Weighted{{Cluster: a.Cluster}}
	}
	for _, w := range ws {
		tg := Target{Cluster: w.Cluster, Weight: w.Weight}
		c := cfg.Cluster(w.Cluster)
		if c == nil {
			t.Targets = append(t.Targets, tg)
			if t.StoppedAt == "" {
				t.stop(Cluster, "cluster %q is not in the configuration", w.Cluster)
			}
			continue
		}
		tg.Origin = metadataOrigin(c.GetMetadata())
		tg.Type = clusterType(c)
		switch {
		case c.GetType() == clusterv3.Cluster_ORIGINAL_DST:
			// Envoy connects where the application dialed.
			if dst.IsValid() {
				tg.Endpoints = []Endpoint{{Address: dst.String(), Port: req.Port}}
			}
		case c.GetType() == clusterv3.Cluster_EDS:
			name := c.GetEdsClusterConfig().GetServiceName()
			if name == "" {
				name = c.GetName()
			}
			tg.Endpoints = endpoints(cfg.EndpointsOf(name))
		default:
			tg.Endpoints = endpoints(c.GetLoadAssignment())
		}
		t.Targets = append(t.Targets, tg)
	}
	if len(ws) == 1 && t.StoppedAt == "" {
		t.add(Step{Stage: Cluster, Name: ws[0].Cluster, Index: -1, Detail: t.Targets[len(t.Targets)-1].Type,
			Origin: t.Targets[len(t.Targets)-1].Origin})
	}
}

// clusterType is a cluster's discovery type, or its custom type's name.
func clusterType(c *clusterv3.Cluster) string {
	if ct := c.GetClusterType(); ct != nil {
		return ct.GetName()
	}
	return c.GetType().String()
}

func endpoints(la *endpointv3.ClusterLoadAssignment) []Endpoint {
	var out []Endpoint
	for _, lle := range la.GetEndpoints() {
		loc := lle.GetLocality()
		locality := ""
		if loc.GetRegion()+loc.GetZone()+loc.GetSubZone() != "" {
			locality = strings.Join([]string{loc.GetRegion(), loc.GetZone(), loc.GetSubZone()}, "/")
		}
		for _, le := range lle.GetLbEndpoints() {
			sa := le.GetEndpoint().GetAddress().GetSocketAddress()
			addr := sa.GetAddress()
			if p := le.GetEndpoint().GetAddress().GetPipe(); p != nil {
				addr = p.GetPath()
			}
			out = append(out, Endpoint{
				Address: addr, Port: sa.GetPortValue(), Locality: locality, Weight: le.GetLoadBalancingWeight().GetValue(),
				TLSMode: le.GetMetadata().GetFilterMetadata()["envoy.transport_socket_match"].GetFields()["tlsMode"].GetStringValue(),
			})
		}
	}
	return out
}
