package istiodcompare

import (
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/meshc/meshc/internal/envoycfg"
)

// Exclusion is one thing meshc deliberately does not reproduce, with why:
// resources to leave out of the comparison (Skip), or fields to clear on
// both sides first (Normalize).
type Exclusion struct {
	Name, Why string
	Skip      func(key envoycfg.Key) bool
	Normalize func(m proto.Message)
}

// Exclusions is the audited list; docs/fidelity.md explains each entry.
var Exclusions = []Exclusion{
	{
		Name: "HTTP tracing",
		Why: "istiod's tracing takes its tags from injector-set labels, the mesh and cluster ids, and the tracer " +
			"from istio-agent's bootstrap; a static config has no tracer to point it at",
		Normalize: eachHCM(func(h *hcmv3.HttpConnectionManager) { h.Tracing = nil }),
	},
	{
		Name: "Istio's own Envoy extensions",
		Why: "metadata exchange, ALPN override and stats filters are Istio's builds of Envoy; go-control-plane " +
			"has no types for them and stock Envoy does not load them",
		Normalize: func(m proto.Message) {
			eachHCM(func(h *hcmv3.HttpConnectionManager) {
				kept := h.HttpFilters[:0]
				for _, f := range h.GetHttpFilters() {
					if !istioExtension(f.GetTypedConfig()) {
						kept = append(kept, f)
					}
				}
				h.HttpFilters = kept
			})(m)
			if c, ok := m.(*clusterv3.Cluster); ok {
				kept := c.Filters[:0]
				for _, f := range c.GetFilters() {
					if !istioExtension(f.GetTypedConfig()) {
						kept = append(kept, f)
					}
				}
				c.Filters = kept
			}
			if l, ok := m.(*listenerv3.Listener); ok {
				for _, fc := range append(l.GetFilterChains(), l.GetDefaultFilterChain()) {
					if fc == nil {
						continue
					}
					kept := fc.Filters[:0]
					for _, f := range fc.GetFilters() {
						if !istioExtension(f.GetTypedConfig()) {
							kept = append(kept, f)
						}
					}
					fc.Filters = kept
				}
			}
		},
	},
	{
		Name: "Endpoint order",
		Why: "istiod lists a locality's endpoints, and the localities, in the order its informers saw them, " +
			"which no input fixes; meshc sorts them so that its output never depends on input order",
		Normalize: func(m proto.Message) {
			cla, ok := m.(*endpointv3.ClusterLoadAssignment)
			if !ok {
				return
			}
			slices.SortStableFunc(cla.Endpoints, func(a, b *endpointv3.LocalityLbEndpoints) int {
				return strings.Compare(prototext.Format(a.GetLocality()), prototext.Format(b.GetLocality()))
			})
			for _, l := range cla.Endpoints {
				slices.SortStableFunc(l.LbEndpoints, func(a, b *endpointv3.LbEndpoint) int {
					return strings.Compare(prototext.Format(a.GetEndpoint().GetAddress()), prototext.Format(b.GetEndpoint().GetAddress()))
				})
			}
		},
	},
}

// istioExtension reports an Any LoadOracle turned into a placeholder: a
// type go-control-plane does not know.
func istioExtension(a *anypb.Any) bool {
	var s structpb.Struct
	if a.GetTypeUrl() != "type.googleapis.com/google.protobuf.Struct" || a.UnmarshalTo(&s) != nil {
		return false
	}
	_, ok := s.GetFields()["unknownType"]
	return ok
}

// eachHCM applies f to every HTTP connection manager of a listener,
// repacking it.
func eachHCM(f func(*hcmv3.HttpConnectionManager)) func(proto.Message) {
	return func(m proto.Message) {
		l, ok := m.(*listenerv3.Listener)
		if !ok {
			return
		}
		for _, fc := range append(l.GetFilterChains(), l.GetDefaultFilterChain()) {
			for _, flt := range fc.GetFilters() {
				var h hcmv3.HttpConnectionManager
				if flt.GetTypedConfig().UnmarshalTo(&h) != nil {
					continue
				}
				f(&h)
				if a, err := anypb.New(&h); err == nil {
					flt.ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: a}
				}
			}
		}
	}
}
