package model

import (
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	meshv1 "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"
)

// MeshConfig is the mesh-wide configuration istiod runs with.
type MeshConfig struct {
	*meshv1.MeshConfig
	// From names where the values came from: a ConfigMap, a file, or
	// nothing (istiod's defaults).
	From Source
	// DomainSuffix is istiod's --domain flag, not a MeshConfig field.
	DomainSuffix string
}

// CapturesDNS reports whether every proxy captures DNS: istio-agent puts
// defaultConfig.proxyMetadata in the node metadata it sends istiod, and
// istiod parses ISTIO_META_DNS_CAPTURE as a boolean.
func (mc MeshConfig) CapturesDNS() bool {
	v, _ := strconv.ParseBool(mc.GetDefaultConfig().GetProxyMetadata()["ISTIO_META_DNS_CAPTURE"])
	return v
}

// DefaultDomainSuffix is istiod's default cluster domain.
const DefaultDomainSuffix = "cluster.local"

// DefaultMeshConfig returns the values istiod uses when the mesh config sets
// nothing (docs/semantics/registry.md §1.7). Each call returns a fresh value.
func DefaultMeshConfig() *meshv1.MeshConfig {
	return &meshv1.MeshConfig{
		EnableTracing:                  true,
		AccessLogEncoding:              meshv1.MeshConfig_TEXT,
		ProtocolDetectionTimeout:       durationpb.New(0),
		IngressService:                 "istio-ingressgateway",
		IngressControllerMode:          meshv1.MeshConfig_STRICT,
		IngressClass:                   "istio",
		TrustDomain:                    "cluster.local",
		EnableAutoMtls:                 wrapperspb.Bool(true),
		OutboundTrafficPolicy:          &meshv1.MeshConfig_OutboundTrafficPolicy{Mode: meshv1.MeshConfig_OutboundTrafficPolicy_ALLOW_ANY},
		InboundTrafficPolicy:           &meshv1.MeshConfig_InboundTrafficPolicy{Mode: meshv1.MeshConfig_InboundTrafficPolicy_PASSTHROUGH},
		LocalityLbSetting:              &networking.LocalityLoadBalancerSetting{Enabled: wrapperspb.Bool(true)},
		DefaultConfig:                  defaultProxyConfig(),
		RootNamespace:                  "istio-system",
		ProxyListenPort:                15001,
		ProxyInboundListenPort:         15006,
		ConnectTimeout:                 durationpb.New(10 * time.Second),
		DefaultServiceExportTo:         []string{"*"},
		DefaultVirtualServiceExportTo:  []string{"*"},
		DefaultDestinationRuleExportTo: []string{"*"},
		DnsRefreshRate:                 durationpb.New(60 * time.Second),
		EnablePrometheusMerge:          wrapperspb.Bool(true),
		DefaultProviders:               &meshv1.MeshConfig_DefaultProviders{},
	}
}

func defaultProxyConfig() *meshv1.ProxyConfig {
	return &meshv1.ProxyConfig{
		ConfigPath:               "./etc/istio/proxy",
		DrainDuration:            durationpb.New(45 * time.Second),
		TerminationDrainDuration: durationpb.New(5 * time.Second),
		ProxyAdminPort:           15000,
		ControlPlaneAuthPolicy:   meshv1.AuthenticationPolicy_MUTUAL_TLS,
		DiscoveryAddress:         "istiod.istio-system.svc:15012",
		StatNameLength:           189,
		StatusPort:               15020,
	}
}
