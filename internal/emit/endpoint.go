package emit

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/resolve"
)

// portEndpoints are a service's endpoints for one service port: those of
// the port that serves the number (resolve.Service.PortServing), as istiod
// matches endpoints to a cluster's port by name, so that a number declared
// for UDP and TCP (53) lists each workload once, at that port's target.
// The match is by name for Kubernetes services, whose endpoints are their
// own, even when a scope's copy keeps one port of the number (a Sidecar
// egress port's merge), and for any service declaring the number twice;
// ServiceEntries of one host share endpoints, which match by number.
func portEndpoints(s *resolve.Service, port uint32) []resolve.Endpoint {
	name, byName := "", false
	if s.Registry == resolve.Kubernetes || s.PortsNumbered(port) > 1 {
		p, _ := s.PortServing(port)
		name, byName = p.Name, true
	}
	var out []resolve.Endpoint
	for _, e := range s.Endpoints {
		if e.ServicePort == port && (!byName || e.PortName == name) {
			out = append(out, e)
		}
	}
	return out
}

// subsetEndpoints keeps the endpoints whose labels include all of the
// subset's.
func subsetEndpoints(eps []resolve.Endpoint, labels map[string]string) []resolve.Endpoint {
	var out []resolve.Endpoint
	for _, e := range eps {
		if resolve.LabelsMatch(labels, e.Labels) {
			out = append(out, e)
		}
	}
	return out
}

// loadAssignment groups endpoints by locality, in locality order, as EDS
// sends them (docs/semantics/envoy-output.md §7.8), each group in the
// service's endpoint order (resolve.Service.Endpoints). Endpoints whose
// address the manifests do not give (workload templates) are left out.
func loadAssignment(cluster string, eps []resolve.Endpoint) *endpointv3.ClusterLoadAssignment {
	return tlsLoadAssignment(cluster, eps, nil, false)
}

// tlsLoadAssignment is loadAssignment with istiod's per-endpoint mutual
// TLS check: an endpoint keeps its tlsMode-istio mark only when mtls says
// the client will use mutual TLS to it (nil: always). With mtlsOnly (the
// SNI-DNAT clusters of an AUTO_PASSTHROUGH gateway, which cannot tell
// whether the TLS they pass on is Istio's) unmarked endpoints are dropped,
// their locality kept without weight, as istiod sends it.
func tlsLoadAssignment(cluster string, eps []resolve.Endpoint, mtls func(resolve.Endpoint) bool, mtlsOnly bool) *endpointv3.ClusterLoadAssignment {
	byLocality := map[string][]*endpointv3.LbEndpoint{}
	weights := map[string]uint32{}
	for _, e := range eps {
		if e.Address == "" {
			continue
		}
		marked := e.TLSMode == "istio" && (mtls == nil || mtls(e))
		if _, ok := byLocality[e.Locality]; !ok {
			byLocality[e.Locality] = nil
		}
		if mtlsOnly && !marked {
			continue
		}
		w := max(e.Weight, 1)
		var extra []*endpointv3.Endpoint_AdditionalAddress
		for _, a := range e.Extra {
			extra = append(extra, &endpointv3.Endpoint_AdditionalAddress{Address: socketAddress(a, e.Port)})
		}
		byLocality[e.Locality] = append(byLocality[e.Locality], &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address:             endpointAddress(e.Address, e.Port),
				AdditionalAddresses: extra,
			}},
			HealthStatus:        health(e),
			Metadata:            endpointMetadata(e, marked),
			LoadBalancingWeight: wrapperspb.UInt32(w),
		})
		weights[e.Locality] += w
	}
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: cluster}
	for _, loc := range slices.Sorted(maps.Keys(byLocality)) {
		l := &endpointv3.LocalityLbEndpoints{Locality: locality(loc), LbEndpoints: byLocality[loc]}
		if len(l.LbEndpoints) > 0 {
			l.LoadBalancingWeight = wrapperspb.UInt32(weights[loc])
		}
		cla.Endpoints = append(cla.Endpoints, l)
	}
	return cla
}

// endpointMTLS is istiod's check whether a client uses mutual TLS to an
// endpoint (docs/semantics/envoy-output.md §7.3, §7.8): the TLS mode the
// DestinationRule names for the cluster's subset and port, if any, decides
// (ISTIO_MUTUAL or not); otherwise the endpoint's own PeerAuthentication,
// workload policy and port-level mode included, must not be DISABLE.
func (b *builder) endpointMTLS(s *resolve.Service, rule *resolve.Rule, sub *networking.Subset, port uint32) func(resolve.Endpoint) bool {
	var mode *networking.ClientTLSSettings_TLSmode
	if rule != nil {
		mode = ruleTLSMode(rule.TrafficPolicy, port)
		if sub != nil {
			if m := ruleTLSMode(sub.GetTrafficPolicy(), port); m != nil {
				mode = m
			}
		}
	}
	if mode != nil {
		on := *mode == networking.ClientTLSSettings_ISTIO_MUTUAL
		return func(resolve.Endpoint) bool { return on }
	}
	return func(e resolve.Endpoint) bool {
		ns := s.Namespace
		if e.Workload != nil {
			ns = e.Workload.Namespace
		}
		return b.mesh.ProxyMTLS(&resolve.Proxy{Namespace: ns, Labels: e.Labels}).Port(e.Port) != security.PeerAuthentication_MutualTLS_DISABLE
	}
}

// ruleTLSMode is the TLS mode a traffic policy sets for port: a port-level
// entry's when it has TLS settings, else the policy's own; nil when unset.
// Unlike cluster policies, a port-level entry without TLS does not hide
// the top-level mode here.
func ruleTLSMode(tp *networking.TrafficPolicy, port uint32) *networking.ClientTLSSettings_TLSmode {
	var mode *networking.ClientTLSSettings_TLSmode
	if t := tp.GetTls(); t != nil {
		mode = &t.Mode
	}
	for _, ps := range tp.GetPortLevelSettings() {
		if ps.GetPort().GetNumber() == port && ps.GetTls() != nil {
			mode = &ps.GetTls().Mode
			break
		}
	}
	return mode
}

// health is what istiod knows of an endpoint's health: a pod's readiness
// (the manifests' pods count as ready); nothing of WorkloadEntries and
// ServiceEntry endpoints, which have no probe it reads.
func health(e resolve.Endpoint) corev3.HealthStatus {
	if e.Workload != nil && (e.Workload.Kind == "WorkloadEntry" || e.Workload.Kind == "ServiceEntry") {
		return corev3.HealthStatus_UNKNOWN
	}
	return corev3.HealthStatus_HEALTHY
}

// dnsLoadAssignment is the load assignment of a DNS cluster: names Envoy
// resolves, whose health it does not know, so none is stated, as istiod
// leaves it out.
func dnsLoadAssignment(cluster string, eps []resolve.Endpoint, mtls func(resolve.Endpoint) bool, mtlsOnly bool) *endpointv3.ClusterLoadAssignment {
	cla := tlsLoadAssignment(cluster, eps, mtls, mtlsOnly)
	for _, l := range cla.Endpoints {
		for _, e := range l.LbEndpoints {
			e.HealthStatus = corev3.HealthStatus_UNKNOWN
		}
	}
	return cla
}

// locality splits "region/zone/subzone".
func locality(s string) *corev3.Locality {
	parts := strings.SplitN(s, "/", 3)
	parts = append(parts, "", "", "")
	return &corev3.Locality{Region: parts[0], Zone: parts[1], SubZone: parts[2]}
}

func endpointAddress(addr string, port uint32) *corev3.Address {
	if path, ok := strings.CutPrefix(addr, "unix://"); ok {
		return &corev3.Address{Address: &corev3.Address_Pipe{Pipe: &corev3.Pipe{Path: path}}}
	}
	return socketAddress(addr, port)
}

func socketAddress(addr string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       addr,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

// endpointMetadata marks endpoints reached with mutual TLS for the
// tlsMode-istio transport socket match, and names the workload as istiod
// does.
func endpointMetadata(e resolve.Endpoint, marked bool) *corev3.Metadata {
	md := &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{}}
	if marked {
		md.FilterMetadata["envoy.transport_socket_match"] = tlsModeMatch()
	}
	if e.Workload != nil {
		// The canonical service and revision, the revision left empty when
		// it is the default "latest", as istiod sends it.
		app := cmp.Or(e.Labels["service.istio.io/canonical-name"], e.Labels["app.kubernetes.io/name"], e.Labels["app"], e.Workload.Name)
		version := cmp.Or(e.Labels["service.istio.io/canonical-revision"], e.Labels["app.kubernetes.io/version"], e.Labels["version"])
		if version == "latest" {
			version = ""
		}
		md.FilterMetadata["istio"] = &structpb.Struct{Fields: map[string]*structpb.Value{
			"workload": structpb.NewStringValue(strings.Join([]string{e.Workload.Name, e.Workload.Namespace, app, version, "Kubernetes"}, ";")),
		}}
	}
	if len(md.FilterMetadata) == 0 {
		return nil
	}
	return md
}
