package emit

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshc/meshc/internal/resolve"
)

// XDSCluster is the bootstrap cluster of Options.ADS that reaches the xDS
// server, named as istio-agent's bootstrap names its way to istiod.
const XDSCluster = "xds-grpc"

// ParseADS splits an xDS server's address, HOST:PORT, where HOST is an IP
// or a DNS name.
func ParseADS(addr string) (host string, port uint32, err error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("want HOST:PORT, got %q", addr)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || h == "" {
		return "", 0, fmt.Errorf("want HOST:PORT with a port from 1 to 65535, got %q", addr)
	}
	return h, uint32(n), nil
}

// xdsCluster reaches the xDS server of Options.ADS over plaintext HTTP/2
// (gRPC), by address for an IP and by DNS otherwise.
func xdsCluster(addr string) (*clusterv3.Cluster, error) {
	host, port, err := ParseADS(addr)
	if err != nil {
		return nil, fmt.Errorf("%s cluster: %w", XDSCluster, err)
	}
	h2, err := anypb.New(&httpv3.HttpProtocolOptions{UpstreamProtocolOptions: explicitH2()})
	if err != nil {
		return nil, fmt.Errorf("%s cluster: %w", XDSCluster, err)
	}
	discovery := clusterv3.Cluster_STRICT_DNS
	if _, err := netip.ParseAddr(host); err == nil {
		discovery = clusterv3.Cluster_STATIC
	}
	return &clusterv3.Cluster{
		Name:                          XDSCluster,
		ClusterDiscoveryType:          &clusterv3.Cluster_Type{Type: discovery},
		ConnectTimeout:                durationpb.New(1e9),
		LoadAssignment:                loadAssignment(XDSCluster, []resolve.Endpoint{{Address: host, Port: port}}),
		TypedExtensionProtocolOptions: map[string]*anypb.Any{httpOptsKey: h2},
	}, nil
}

// adsResources fetch every resource over one ADS stream through the
// xDS cluster: clusters and listeners by it, and their endpoints and
// routes by the ADS config sources they name.
func adsResources() *bootstrapv3.Bootstrap_DynamicResources {
	ads := func() *corev3.ConfigSource {
		return &corev3.ConfigSource{
			ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
			ResourceApiVersion:    corev3.ApiVersion_V3,
		}
	}
	return &bootstrapv3.Bootstrap_DynamicResources{
		AdsConfig: &corev3.ApiConfigSource{
			ApiType:             corev3.ApiConfigSource_GRPC,
			TransportApiVersion: corev3.ApiVersion_V3,
			GrpcServices: []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
				EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: XDSCluster}}}},
			// The server knows the node from the stream's first request.
			SetNodeOnFirstMessageOnly: true,
		},
		CdsConfig: ads(),
		LdsConfig: ads(),
	}
}
