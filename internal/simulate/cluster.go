package simulate

import (
	"fmt"
	"math"
	"net/netip"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

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
		tg.Policy = policy(c)
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

// policy reads how a cluster connects: its load balancer, TLS (its own
// transport socket, or Istio's per-endpoint match on tlsMode), connection
// limits and outlier detection.
func policy(c *clusterv3.Cluster) Policy {
	p := Policy{LoadBalancer: c.GetLbPolicy().String()}
	if ctx, ok := upstreamTLS(c.GetTransportSocket()); ok {
		p.TLS, p.SNI = "TLS", ctx.GetSni()
		if len(ctx.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs())+len(ctx.GetCommonTlsContext().GetTlsCertificates()) > 0 {
			p.TLS = "mutual TLS"
		}
	}
	for _, m := range c.GetTransportSocketMatches() {
		if m.GetMatch().GetFields()["tlsMode"].GetStringValue() != "istio" {
			continue
		}
		if ctx, ok := upstreamTLS(m.GetTransportSocket()); ok && p.TLS == "" {
			p.TLS, p.SNI = "Istio mutual TLS to endpoints with tlsMode istio", ctx.GetSni()
		}
	}
	for _, t := range c.GetCircuitBreakers().GetThresholds() {
		for _, l := range []struct {
			what string
			v    *wrapperspb.UInt32Value
		}{{"max connections", t.GetMaxConnections()}, {"max pending requests", t.GetMaxPendingRequests()},
			{"max requests", t.GetMaxRequests()}, {"max retries", t.GetMaxRetries()}} {
			if l.v != nil && l.v.GetValue() != math.MaxUint32 {
				p.Pool = append(p.Pool, fmt.Sprintf("%s %d", l.what, l.v.GetValue()))
			}
		}
	}
	if od := c.GetOutlierDetection(); od != nil {
		if n := od.GetConsecutive_5Xx(); n != nil {
			p.OutlierDetection = append(p.OutlierDetection, fmt.Sprintf("consecutive 5xx %d", n.GetValue()))
		}
		if n := od.GetConsecutiveGatewayFailure(); n != nil {
			p.OutlierDetection = append(p.OutlierDetection, fmt.Sprintf("consecutive gateway errors %d", n.GetValue()))
		}
		if d := od.GetInterval(); d != nil {
			p.OutlierDetection = append(p.OutlierDetection, "interval "+d.AsDuration().String())
		}
		if d := od.GetBaseEjectionTime(); d != nil {
			p.OutlierDetection = append(p.OutlierDetection, "base ejection "+d.AsDuration().String())
		}
		if n := od.GetMaxEjectionPercent(); n != nil {
			p.OutlierDetection = append(p.OutlierDetection, fmt.Sprintf("max ejection %d%%", n.GetValue()))
		}
	}
	return p
}

// upstreamTLS reads a transport socket as an upstream TLS context.
func upstreamTLS(ts *corev3.TransportSocket) (*tlsv3.UpstreamTlsContext, bool) {
	if ts == nil {
		return nil, false
	}
	var ctx tlsv3.UpstreamTlsContext
	if ts.GetTypedConfig().UnmarshalTo(&ctx) != nil {
		return nil, false
	}
	return &ctx, true
}
