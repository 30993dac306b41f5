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

	"github.com/meshc/meshc/internal/resolve"
)

// portEndpoints are a service's endpoints for one service port.
func portEndpoints(s *resolve.Service, port uint32) []resolve.Endpoint {
	var out []resolve.Endpoint
	for _, e := range s.Endpoints {
		if e.ServicePort == port {
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
// sends them (docs/semantics/envoy-output.md §7.8). Endpoints whose address the manifests do not
// give (workload templates) are left out.
func loadAssignment(cluster string, eps []resolve.Endpoint) *endpointv3.ClusterLoadAssignment {
	byLocality := map[string][]*endpointv3.LbEndpoint{}
	weights := map[string]uint32{}
	for _, e := range eps {
		if e.Address == "" {
			continue
		}
		w := max(e.Weight, 1)
		byLocality[e.Locality] = append(byLocality[e.Locality], &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: endpointAddress(e.Address, e.Port),
			}},
			HealthStatus:        health(e),
			Metadata:            endpointMetadata(e),
			LoadBalancingWeight: wrapperspb.UInt32(w),
		})
		weights[e.Locality] += w
	}
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: cluster}
	for _, loc := range slices.Sorted(maps.Keys(byLocality)) {
		cla.Endpoints = append(cla.Endpoints, &endpointv3.LocalityLbEndpoints{
			Locality:            locality(loc),
			LbEndpoints:         byLocality[loc],
			LoadBalancingWeight: wrapperspb.UInt32(weights[loc]),
		})
	}
	return cla
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
func dnsLoadAssignment(cluster string, eps []resolve.Endpoint) *endpointv3.ClusterLoadAssignment {
	cla := loadAssignment(cluster, eps)
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

// endpointMetadata marks sidecar-injected endpoints for the tlsMode-istio
// transport socket match, and names the workload as istiod does.
func endpointMetadata(e resolve.Endpoint) *corev3.Metadata {
	md := &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{}}
	if e.TLSMode == "istio" {
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
