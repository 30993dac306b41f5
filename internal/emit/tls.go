package emit

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rawv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/raw_buffer/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
	security "istio.io/api/security/v1beta1"

	"github.com/meshc/meshc/internal/resolve"
)

// TLSMode says how Istio mutual TLS is written into a static config.
type TLSMode string

const (
	// TLSIstio references the workload certificate by SDS from the
	// istio-agent socket, as istiod does: for configs run beside an agent.
	TLSIstio TLSMode = "istio"
	// TLSFiles reads the certificate, key and root from files in CertDir.
	TLSFiles TLSMode = "files"
	// TLSOff sends plaintext where Istio would use mutual TLS.
	TLSOff TLSMode = "off"
)

// Files read in TLSFiles mode, named as istio-agent writes them.
const (
	certChainFile = "cert-chain.pem"
	keyFile       = "key.pem"
	rootCertFile  = "root-cert.pem"
)

// SDSCluster is the bootstrap cluster that reaches istio-agent's SDS
// socket; Istio-mutual TLS contexts fetch their secrets through it.
const SDSCluster = "sds-grpc"

const (
	tlsSocketName = "envoy.transport_sockets.tls"
	rawSocketName = "envoy.transport_sockets.raw_buffer"
	httpOptsKey   = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
)

// istioALPN are the ALPN values a sidecar offers to another sidecar.
var istioALPN = []string{"istio-peer-exchange", "istio"}

// applyProtocol sets the upstream HTTP protocol (docs/semantics/envoy-output.md §7.3): h2 for
// HTTP/2 and gRPC ports or, outbound only, when the DestinationRule or
// the mesh upgrades; the downstream's protocol for sniffed ports on
// sidecars; and the pool's HTTP settings. It says whether the cluster
// speaks HTTP/2 explicitly, which alone gives its TLS the h2 ALPN.
func (b *builder) applyProtocol(c *clusterv3.Cluster, port resolve.Port, pol policy, rule *resolve.Rule, outbound bool) (h2 bool) {
	h := pol.pool.GetHttp()
	opts := &httpv3.HttpProtocolOptions{}
	if t := pol.tls; b.originates(t, rule) && t.GetSni() == "" {
		// Without a fixed SNI, Envoy sends each request's host, and checks
		// the certificate against it unless names to check are given.
		opts.UpstreamHttpProtocolOptions = &corev3.UpstreamHttpProtocolOptions{
			AutoSni:           true,
			AutoSanValidation: len(t.GetSubjectAltNames()) == 0 && !t.GetInsecureSkipVerify().GetValue(),
		}
	}
	tcp := pol.pool.GetTcp()
	common := &corev3.HttpProtocolOptions{IdleTimeout: cmp.Or(h.GetIdleTimeout(), tcp.GetIdleTimeout()), MaxConnectionDuration: tcp.GetMaxConnectionDuration()}
	if n := h.GetMaxRequestsPerConnection(); n > 0 {
		common.MaxRequestsPerConnection = wrapperspb.UInt32(uint32(n))
	}
	// istiod writes the common options, even empty, whenever the pool sets
	// one of these, h2-only ones on an HTTP/1.1 cluster included.
	if common.IdleTimeout != nil || common.MaxConnectionDuration != nil || common.MaxRequestsPerConnection != nil ||
		h.GetMaxConcurrentStreams() > 0 || h.GetHttp2KeepAlive() != nil {
		opts.CommonHttpProtocolOptions = common
	}
	switch {
	case h.GetUseClientProtocol() || (port.Protocol.IsHTTPOrSniffed() && !port.Protocol.IsHTTP() && !port.Protocol.IsHTTP2() && b.sidecar()):
		opts.UpstreamProtocolOptions = &httpv3.HttpProtocolOptions_UseDownstreamProtocolConfig{
			UseDownstreamProtocolConfig: &httpv3.HttpProtocolOptions_UseDownstreamHttpConfig{
				HttpProtocolOptions: &corev3.Http1ProtocolOptions{}, Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
			}}
	case port.Protocol.IsHTTP2() || (outbound && b.h2(port, h)):
		explicit := explicitH2()
		o := explicit.ExplicitHttpConfig.GetHttp2ProtocolOptions()
		if n := h.GetMaxConcurrentStreams(); n > 0 {
			o.MaxConcurrentStreams = wrapperspb.UInt32(uint32(n))
		}
		if ka := h.GetHttp2KeepAlive(); ka != nil {
			o.ConnectionKeepalive = &corev3.KeepaliveSettings{Interval: ka.GetInterval(), Timeout: ka.GetTimeout()}
		}
		opts.UpstreamProtocolOptions = explicit
	}
	if proto.Size(opts) == 0 {
		return false
	}
	if opts.UpstreamProtocolOptions == nil {
		// Envoy requires a protocol; istiod states HTTP/1.1.
		opts.UpstreamProtocolOptions = &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{HttpProtocolOptions: &corev3.Http1ProtocolOptions{}},
		}}
	}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpOptsKey: b.pk.any(c.Name+" protocol options", opts)}
	return opts.GetExplicitHttpConfig().GetHttp2ProtocolOptions() != nil
}

func explicitH2() *httpv3.HttpProtocolOptions_ExplicitHttpConfig_ {
	return &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
		ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}},
	}}
}

// h2 says whether a cluster speaks HTTP/2 upstream.
func (b *builder) h2(port resolve.Port, h *networking.ConnectionPoolSettings_HTTPSettings) bool {
	switch h.GetH2UpgradePolicy() {
	case networking.ConnectionPoolSettings_HTTPSettings_UPGRADE:
		return true
	case networking.ConnectionPoolSettings_HTTPSettings_DO_NOT_UPGRADE:
		return port.Protocol.IsHTTP2()
	}
	if port.Protocol.IsHTTP2() {
		return true
	}
	return port.Protocol.IsHTTP() && b.mesh.Config.GetH2UpgradePolicy().String() == "UPGRADE"
}

// applyTLS sets the cluster's transport socket (docs/semantics/envoy-output.md §7.3, TLS),
// offering h2 by ALPN when the cluster speaks HTTP/2 explicitly (not when
// it keeps the client's protocol, as under useClientProtocol or on a
// sidecar's sniffed port, whatever the upgrade policy).
func (b *builder) applyTLS(c *clusterv3.Cluster, s *resolve.Service, port resolve.Port, subset string, rule *resolve.Rule, pol policy, h2, auto bool) {
	sni := resolve.ClusterID{Port: port.Number, Subset: subset, Host: s.Host}.SNI()
	// DISABLE is the enum's zero value: an unset policy is not DISABLE.
	switch t := pol.tls; {
	case t == nil:
		if auto {
			b.autoTLS(c, s, sni, h2)
		}
	case t.GetMode() == networking.ClientTLSSettings_DISABLE:
	case t.GetMode() == networking.ClientTLSSettings_SIMPLE || t.GetMode() == networking.ClientTLSSettings_MUTUAL:
		if b.originates(t, rule) {
			c.TransportSocket = b.tlsSocket(c.Name, b.userTLS(t, s, h2))
		}
	case t.GetMode() == networking.ClientTLSSettings_ISTIO_MUTUAL:
		if ctx := b.istioTLS(cmp.Or(t.GetSni(), sni), sansOr(t.GetSubjectAltNames(), b.serviceSANs(s)), h2); ctx != nil {
			c.TransportSocket = b.tlsSocket(c.Name, ctx)
		}
	}
}

// autoTLS is auto mutual TLS: by endpoint on load-balanced clusters, as
// each endpoint says whether it has a sidecar; always on original
// destination ones.
func (b *builder) autoTLS(c *clusterv3.Cluster, s *resolve.Service, sni string, h2 bool) {
	ctx := b.istioTLS(sni, b.serviceSANs(s), h2)
	if ctx == nil {
		return
	}
	if c.GetType() == clusterv3.Cluster_ORIGINAL_DST {
		c.TransportSocket = b.tlsSocket(c.Name, ctx)
		return
	}
	c.TransportSocketMatches = []*clusterv3.Cluster_TransportSocketMatch{
		{Name: "tlsMode-istio", Match: tlsModeMatch(), TransportSocket: b.tlsSocket(c.Name, ctx)},
		{Name: "tlsMode-disabled", Match: &structpb.Struct{}, TransportSocket: b.rawSocket(c.Name)},
	}
}

// rawSocket is the plaintext transport socket, stated.
func (b *builder) rawSocket(cluster string) *corev3.TransportSocket {
	return &corev3.TransportSocket{Name: rawSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: b.pk.any(cluster+" raw socket", &rawv3.RawBuffer{})}}
}

func tlsModeMatch() *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{"tlsMode": structpb.NewStringValue("istio")}}
}

// autoMTLS says whether istiod turns on mutual TLS by itself
// (docs/semantics/envoy-output.md §7.3, TLS rule 3): the mesh allows it,
// the service is in the mesh, and the server mode it infers is not
// DISABLE. It infers from tp, a traffic policy's top level (port-level
// settings not consulted): for a Passthrough service, or under a
// PASSTHROUGH load balancer, the service port's endpoints must all have
// sidecars; then the namespace's or the mesh's PeerAuthentication decides.
func (b *builder) autoMTLS(s *resolve.Service, port uint32, tp *networking.TrafficPolicy) bool {
	if !b.mesh.Config.GetEnableAutoMtls().GetValue() || s.MeshExternal {
		return false
	}
	if s.Resolution == resolve.Passthrough || tp.GetLoadBalancer().GetSimple() == networking.LoadBalancerSettings_PASSTHROUGH {
		eps := portEndpoints(s, port)
		if len(eps) == 0 || slices.ContainsFunc(eps, func(e resolve.Endpoint) bool { return e.TLSMode == "disabled" }) {
			return false
		}
	}
	return b.mesh.NamespaceMTLS(s.Namespace).Mode != security.PeerAuthentication_MutualTLS_DISABLE
}

// serviceSANs are the identities the service's workloads run as, and
// those its ServiceEntry names, each SPIFFE identity also in every
// trust-domain alias of the mesh, sorted and once each as istiod keeps
// them.
func (b *builder) serviceSANs(s *resolve.Service) []string {
	out := slices.Clone(s.EntrySubjectAltNames())
	for _, e := range s.Endpoints {
		if e.ServiceAccount == "" || e.Workload == nil {
			continue
		}
		out = append(out, spiffeID(b.mesh.Config.GetTrustDomain(), e.Workload.Namespace, e.ServiceAccount))
	}
	for _, san := range slices.Clone(out) {
		ns, sa, ok := parseSPIFFE(san)
		if !ok {
			continue
		}
		for _, td := range b.mesh.Config.GetTrustDomainAliases() {
			out = append(out, spiffeID(td, ns, sa))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// spiffeID is a workload's identity in trust domain td.
func spiffeID(td, ns, sa string) string { return "spiffe://" + td + "/ns/" + ns + "/sa/" + sa }

// parseSPIFFE splits an identity of the form spiffe://TD/ns/NS/sa/SA;
// istiod expands only those into the aliases.
func parseSPIFFE(id string) (ns, sa string, ok bool) {
	rest, ok := strings.CutPrefix(id, "spiffe://")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 5 || parts[1] != "ns" || parts[3] != "sa" {
		return "", "", false
	}
	return parts[2], parts[4], true
}

// validationTrustDomains are the trust domains whose workloads a
// sidecar's inbound mutual TLS accepts: the mesh's, its aliases, and those
// of its caCertificates, each once.
func (b *builder) validationTrustDomains() []string {
	mc := b.mesh.Config
	tds := append([]string{mc.GetTrustDomain()}, mc.GetTrustDomainAliases()...)
	for _, ca := range mc.GetCaCertificates() {
		tds = append(tds, ca.GetTrustDomains()...)
	}
	var out []string
	for _, td := range tds {
		if td != "" && !slices.Contains(out, td) {
			out = append(out, td)
		}
	}
	return out
}

// exactMatchers match subject alternative names exactly.
func exactMatchers(sans []string) []*matcherv3.StringMatcher {
	var out []*matcherv3.StringMatcher
	for _, san := range sans {
		out = append(out, &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: san}})
	}
	return out
}

// istioTLS is the client side of Istio mutual TLS; nil in TLSOff mode.
func (b *builder) istioTLS(sni string, sans []string, h2 bool) *tlsv3.UpstreamTlsContext {
	if b.opts.TLS == TLSOff {
		return nil
	}
	alpn := slices.Clone(istioALPN)
	if h2 {
		alpn = append(alpn, "h2")
	}
	matchers := exactMatchers(sans)
	common := &tlsv3.CommonTlsContext{
		TlsParams: &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2,
			TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
		},
		AlpnProtocols: alpn,
	}
	// istiod fills the untyped SAN field, which matches any SAN type.
	b.identity(common, &tlsv3.CertificateValidationContext{MatchSubjectAltNames: matchers}) //nolint:staticcheck // the field istiod sets
	return &tlsv3.UpstreamTlsContext{CommonTlsContext: common, Sni: sni}
}

// identity fills in the workload certificate and the trust root: SDS
// secrets "default" and "ROOTCA" from istio-agent, or files.
func (b *builder) identity(common *tlsv3.CommonTlsContext, validation *tlsv3.CertificateValidationContext) {
	if b.opts.TLS == TLSFiles {
		b.certificateFiles(common, filepath.Join(b.opts.CertDir, certChainFile), filepath.Join(b.opts.CertDir, keyFile))
	} else {
		common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{sdsSecret("default")}
	}
	b.trustRoot(common, validation, "")
}

// systemRoots is where Debian and Ubuntu, the proxy image's base, keep
// the system's trusted CAs, which istio-agent serves as "file-root:system".
const systemRoots = "/etc/ssl/certs/ca-certificates.crt"

// certificateFiles presents a certificate and key read from files: served
// by istio-agent's SDS in TLSIstio mode, as istiod configures it; read by
// Envoy itself when no agent runs beside it.
func (b *builder) certificateFiles(common *tlsv3.CommonTlsContext, cert, key string) {
	if b.opts.TLS == TLSIstio {
		common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{sdsSecret("file-cert:" + cert + "~" + key)}
		return
	}
	common.TlsCertificates = []*tlsv3.TlsCertificate{{CertificateChain: fileSource(cert), PrivateKey: fileSource(key)}}
}

// trustRoot validates peers against root: "" for the mesh's root
// ("ROOTCA" from the agent, or the root file of TLSFiles mode), "system"
// for the system's CAs, or a file. Files are read by Envoy itself when no
// agent runs beside it.
func (b *builder) trustRoot(common *tlsv3.CommonTlsContext, vc *tlsv3.CertificateValidationContext, root string) {
	switch {
	case root == "" && b.opts.TLS == TLSFiles:
		root = filepath.Join(b.opts.CertDir, rootCertFile)
	case root == "":
		combinedValidation(common, vc, sdsSecret("ROOTCA"))
		return
	case b.opts.TLS == TLSIstio:
		combinedValidation(common, vc, sdsSecret("file-root:"+root))
		return
	case root == "system":
		root = systemRoots
	}
	vc.TrustedCa = fileSource(root)
	common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: vc}
}

// combinedValidation checks peers with vc and the CA of an SDS secret.
func combinedValidation(common *tlsv3.CommonTlsContext, vc *tlsv3.CertificateValidationContext, ca *tlsv3.SdsSecretConfig) {
	common.ValidationContextType = &tlsv3.CommonTlsContext_CombinedValidationContext{
		CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
			DefaultValidationContext: vc, ValidationContextSdsSecretConfig: ca}}
}

// sdsSecret fetches a secret from the agent's SDS server. Only the
// proxy's own identity ("default", "ROOTCA") waits for it without a
// timeout, as istiod sets it: any other secret may never come, and must
// not hold its listener back.
func sdsSecret(name string) *tlsv3.SdsSecretConfig {
	cfg := &tlsv3.SdsSecretConfig{Name: name, SdsConfig: &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_ApiConfigSource{ApiConfigSource: &corev3.ApiConfigSource{
			ApiType:                   corev3.ApiConfigSource_GRPC,
			SetNodeOnFirstMessageOnly: true,
			TransportApiVersion:       corev3.ApiVersion_V3,
			GrpcServices: []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
				EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: SDSCluster}}}},
		}},
		ResourceApiVersion: corev3.ApiVersion_V3,
	}}
	if name == "default" || name == "ROOTCA" {
		cfg.SdsConfig.InitialFetchTimeout = durationpb.New(0)
	}
	return cfg
}

func fileSource(path string) *corev3.DataSource {
	return &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: path}}
}

// originates says whether a DestinationRule's SIMPLE or MUTUAL TLS is
// built for this proxy: a Secret reference on a selector-less rule gives
// sidecars none, lest every sidecar wait for a Secret it may not read
// (ConfigMaps are readable by all).
func (b *builder) originates(t *networking.ClientTLSSettings, rule *resolve.Rule) bool {
	if t.GetMode() != networking.ClientTLSSettings_SIMPLE && t.GetMode() != networking.ClientTLSSettings_MUTUAL {
		return false
	}
	cred := t.GetCredentialName()
	secret := cred != "" && !strings.HasPrefix(cred, "configmap://")
	return !secret || !b.sidecar() || (rule != nil && rule.Selector != nil)
}

// userTLS is a DestinationRule's SIMPLE or MUTUAL origination, as istiod
// builds it: TLS 1.2 to 1.3; with a credentialName, the Secret (and its
// "-cacert") as a gateway credential (credentialSecret); otherwise the certificate files, the CA defaulting
// to the system's. Either way a ServiceEntry's subjectAltNames stand in
// when the rule gives none.
func (b *builder) userTLS(t *networking.ClientTLSSettings, s *resolve.Service, h2 bool) *tlsv3.UpstreamTlsContext {
	common := &tlsv3.CommonTlsContext{TlsParams: &tlsv3.TlsParameters{
		TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2,
		TlsMaximumProtocolVersion: tlsv3.TlsParameters_TLSv1_3,
	}}
	mutual := t.GetMode() == networking.ClientTLSSettings_MUTUAL
	insecure := t.GetInsecureSkipVerify().GetValue()
	sans := t.GetSubjectAltNames()
	if s.Registry != resolve.Kubernetes && len(sans) == 0 {
		sans = b.serviceSANs(s)
	}
	if cred := t.GetCredentialName(); cred != "" {
		// istiod serves the credential itself over ADS, as it serves
		// gateway credentials; the agent's SDS cannot read Secrets.
		if mutual {
			common.TlsCertificateSdsSecretConfigs = []*tlsv3.SdsSecretConfig{b.credentialSecret(cred)}
		}
		if !insecure {
			vc := &tlsv3.CertificateValidationContext{MatchSubjectAltNames: exactMatchers(sans)} //nolint:staticcheck // the field istiod sets
			combinedValidation(common, vc, b.credentialSecret(cred+"-cacert"))
		}
	} else {
		if mutual {
			b.certificateFiles(common, t.GetClientCertificate(), t.GetPrivateKey())
		}
		if insecure {
			common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{}}
		} else {
			vc := &tlsv3.CertificateValidationContext{MatchSubjectAltNames: exactMatchers(sans)} //nolint:staticcheck // the field istiod sets
			if crl := t.GetCaCrl(); crl != "" {
				vc.Crl = fileSource(crl)
			}
			b.trustRoot(common, vc, cmp.Or(t.GetCaCertificates(), "system"))
		}
	}
	if h2 {
		common.AlpnProtocols = []string{"h2"}
	}
	return &tlsv3.UpstreamTlsContext{CommonTlsContext: common, Sni: t.GetSni()}
}

func (b *builder) tlsSocket(cluster string, ctx *tlsv3.UpstreamTlsContext) *corev3.TransportSocket {
	return &corev3.TransportSocket{Name: tlsSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{
		TypedConfig: b.pk.any(cluster+" TLS context", ctx)}}
}

func sansOr(given, derived []string) []string {
	if len(given) > 0 {
		return given
	}
	return derived
}
