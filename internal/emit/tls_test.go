package emit

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"

	"github.com/meshc/meshc/internal/load"
)

// upstreamTLS unpacks a cluster's TLS transport socket.
func upstreamTLS(t *testing.T, c *clusterv3.Cluster) *tlsv3.UpstreamTlsContext {
	t.Helper()
	ctx := &tlsv3.UpstreamTlsContext{}
	if err := c.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
		t.Fatalf("cluster %s: no TLS context: %v", c.GetName(), err)
	}
	return ctx
}

const externalAPI = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: default}
spec:
  hosts: [api.example.com]
  location: MESH_EXTERNAL
  resolution: DNS
  subjectAltNames: [api.example.com]
  ports: [{number: 443, name: https, protocol: HTTPS}]`

// TestUserTLSSources: a DestinationRule's certificate files reach Envoy
// through istio-agent's SDS as istiod writes them; with no agent (files
// and off modes) Envoy reads the same files itself, the system CAs from
// the system bundle. A ServiceEntry's SANs stand in for the rule's, and
// without a fixed SNI Envoy sends and checks each request's host.
func TestUserTLSSources(t *testing.T) {
	const cluster = "outbound|443||api.example.com"
	dr := func(tls string) string {
		return `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec: {host: api.example.com, trafficPolicy: {tls: ` + tls + `}}`
	}
	for _, tc := range []struct {
		name, tls   string
		mode        TLSMode
		cert, roots string // SDS secret names, or file names
		files       bool
	}{
		{"istio mutual files", `{mode: MUTUAL, clientCertificate: /c.pem, privateKey: /k.pem, caCertificates: /ca.pem}`, TLSIstio, "file-cert:/c.pem~/k.pem", "file-root:/ca.pem", false},
		{"istio system roots", `{mode: SIMPLE}`, TLSIstio, "", "file-root:system", false},
		{"files mutual", `{mode: MUTUAL, clientCertificate: /c.pem, privateKey: /k.pem, caCertificates: /ca.pem}`, TLSFiles, "/c.pem", "/ca.pem", true},
		{"off system roots", `{mode: SIMPLE}`, TLSOff, "", systemRoots, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clusterNamed(compile(t, Options{TLS: tc.mode, CertDir: "/certs"}, "default/client", injectedNs, clientPod, externalAPI, dr(tc.tls)), cluster)
			common := upstreamTLS(t, c).GetCommonTlsContext()
			var cert, roots string
			var sans []string
			if tc.files {
				if cs := common.GetTlsCertificates(); len(cs) > 0 {
					cert = cs[0].GetCertificateChain().GetFilename()
				}
				vc := common.GetValidationContext()
				roots = vc.GetTrustedCa().GetFilename()
				for _, m := range vc.GetMatchSubjectAltNames() { //nolint:staticcheck // the field istiod sets
					sans = append(sans, m.GetExact())
				}
				if len(common.GetTlsCertificateSdsSecretConfigs()) > 0 || common.GetCombinedValidationContext() != nil {
					t.Errorf("SDS without an agent: %v", common)
				}
			} else {
				if ss := common.GetTlsCertificateSdsSecretConfigs(); len(ss) > 0 {
					cert = ss[0].GetName()
				}
				cvc := common.GetCombinedValidationContext()
				roots = cvc.GetValidationContextSdsSecretConfig().GetName()
				for _, m := range cvc.GetDefaultValidationContext().GetMatchSubjectAltNames() { //nolint:staticcheck // the field istiod sets
					sans = append(sans, m.GetExact())
				}
			}
			if cert != tc.cert || roots != tc.roots {
				t.Errorf("certificate %q, roots %q; want %q, %q", cert, roots, tc.cert, tc.roots)
			}
			if len(sans) != 1 || sans[0] != "api.example.com" {
				t.Errorf("SANs %v, want the ServiceEntry's [api.example.com]", sans)
			}
			if v := common.GetTlsParams(); v.GetTlsMinimumProtocolVersion() != tlsv3.TlsParameters_TLSv1_2 || v.GetTlsMaximumProtocolVersion() != tlsv3.TlsParameters_TLSv1_3 {
				t.Errorf("TLS versions %v, want 1.2 to 1.3", v)
			}
			var opts httpv3.HttpProtocolOptions
			if err := c.GetTypedExtensionProtocolOptions()[httpOptsKey].UnmarshalTo(&opts); err != nil {
				t.Fatal(err)
			}
			// istiod checks the host's name unless the rule itself names SANs.
			if u := opts.GetUpstreamHttpProtocolOptions(); !u.GetAutoSni() || !u.GetAutoSanValidation() {
				t.Errorf("upstream options %v, want auto SNI and SAN validation", u)
			}
			if opts.GetExplicitHttpConfig().GetHttpProtocolOptions() == nil {
				t.Errorf("protocol %v, want HTTP/1.1 stated", opts.GetUpstreamProtocolOptions())
			}
		})
	}
}

// TestSecretCredentialOnSidecars: a Kubernetes Secret named by a
// selector-less DestinationRule gives sidecars no TLS (they may not read
// it); a rule selecting the workload, or a ConfigMap, does.
func TestSecretCredentialOnSidecars(t *testing.T) {
	const cluster = "outbound|443||api.example.com"
	for _, tc := range []struct {
		name, extra string
		tls         bool
	}{
		{"secret, no selector", `credentialName: api-cert`, false},
		{"secret, selector", "credentialName: api-cert\n  workloadSelector: {matchLabels: {app: client}}", true},
		{"configmap, no selector", `credentialName: configmap://default/api-ca`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tlsField, selector, _ := bytes.Cut([]byte(tc.extra), []byte("\n"))
			doc := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec:
  host: api.example.com
  trafficPolicy: {tls: {mode: SIMPLE, ` + string(tlsField) + `}}
` + string(selector)
			c := clusterNamed(compile(t, Options{}, "default/client", injectedNs, clientPod, externalAPI, doc), cluster)
			if got := c.GetTransportSocket() != nil; got != tc.tls {
				t.Errorf("TLS = %v, want %v", got, tc.tls)
			}
		})
	}
}

// TestBootstrapAgentCluster: a bootstrap reaches istio-agent's socket
// whenever a secret only the agent serves is named, whatever the TLS mode,
// and not otherwise in files and off modes.
func TestBootstrapAgentCluster(t *testing.T) {
	credentialDR := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec:
  host: api.example.com
  workloadSelector: {matchLabels: {app: client}}
  trafficPolicy: {tls: {mode: MUTUAL, credentialName: api-cert}}`
	for _, tc := range []struct {
		name  string
		mode  TLSMode
		docs  []string
		agent bool
	}{
		{"istio", TLSIstio, nil, true},
		{"files", TLSFiles, nil, false},
		{"off", TLSOff, nil, false},
		{"off with a credential", TLSOff, []string{credentialDR}, true},
		{"files with a credential", TLSFiles, []string{credentialDR}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := append([]string{injectedNs, clientPod, externalAPI}, tc.docs...)
			objs, _ := load.Bytes("in.yaml", []byte(strings.Join(docs, "\n---\n")))
			files := build(t, objs, Options{TLS: tc.mode, CertDir: "/certs"}, 1)
			boot := files[filepath.Join("default", "client.json")]
			if boot == nil {
				t.Fatalf("no bootstrap among %d files", len(files))
			}
			if got := bytes.Contains(boot, []byte(`"name": "`+SDSCluster+`"`)); got != tc.agent {
				t.Errorf("agent cluster = %v, want %v", got, tc.agent)
			}
			// Envoy runs a build from OUT: the agent's socket must not be
			// looked for under it.
			if tc.agent && !bytes.Contains(boot, []byte(`"path": "/var/run/secrets/workload-spiffe-uds/socket"`)) {
				t.Errorf("the agent's socket is not at its absolute path:\n%s", boot)
			}
		})
	}
}

// TestDestinationRuleCredentialOverADS (issue 15 item 14): a
// DestinationRule's credentialName is fetched from istiod over ADS, on
// gateways and on the sidecars a selector rule gives it to, as istiod
// sends it; a static bootstrap, without ADS, asks the agent. The
// ServiceEntry's subjectAltNames check the server, as with certificate
// files, since the rule names none.
func TestDestinationRuleCredentialOverADS(t *testing.T) {
	docs := []string{injectedNs, clientPod, externalAPI,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec: {host: api.example.com, workloadSelector: {matchLabels: {app: client}}, trafficPolicy: {tls: {mode: MUTUAL, credentialName: api-cert}}}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api-gw, namespace: gw}
spec: {host: api.example.com, trafficPolicy: {tls: {mode: MUTUAL, credentialName: api-cert}}}`,
		gwNamespace, gwPod, gwGateway(`  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]`),
	}
	for _, tc := range []struct {
		proxy  string
		format Format
		ads    bool
	}{
		{"gw/gw-1", XDS, true},
		{"default/client", XDS, true},
		{"gw/gw-1", Bootstrap, false},
	} {
		common := upstreamTLS(t, clusterNamed(compile(t, Options{Format: tc.format}, tc.proxy, docs...), "outbound|443||api.example.com")).GetCommonTlsContext()
		for _, sc := range []*tlsv3.SdsSecretConfig{common.GetTlsCertificateSdsSecretConfigs()[0], common.GetCombinedValidationContext().GetValidationContextSdsSecretConfig()} {
			src := sc.GetSdsConfig()
			if got := src.GetAds() != nil; got != tc.ads || (tc.ads && src.GetInitialFetchTimeout() != nil) {
				t.Errorf("%s %v: secret %s from %v; want ADS %v without a fetch timeout", tc.proxy, tc.format, sc.GetName(), src, tc.ads)
			}
			if !strings.HasPrefix(sc.GetName(), "kubernetes://api-cert") {
				t.Errorf("secret %s, want kubernetes://api-cert...", sc.GetName())
			}
		}
		var sans []string
		for _, m := range common.GetCombinedValidationContext().GetDefaultValidationContext().GetMatchSubjectAltNames() { //nolint:staticcheck // the field istiod sets
			sans = append(sans, m.GetExact())
		}
		if !slices.Equal(sans, []string{"api.example.com"}) {
			t.Errorf("%s %v: SANs %v, want the ServiceEntry's [api.example.com]", tc.proxy, tc.format, sans)
		}
	}
}

// TestALPNFollowsExplicitHTTP2 (issue 15 item 13): Istio mutual TLS
// offers h2 only on clusters that speak HTTP/2 explicitly: not under
// useClientProtocol, even on a gRPC port, nor on a sidecar's sniffed port
// whose rule upgrades (the client's protocol is kept); a gateway, which
// does not keep it, upgrades and offers h2.
func TestALPNFollowsExplicitHTTP2(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec: {clusterIP: 10.0.0.6, selector: {app: api}, ports: [{name: grpc, port: 80}, {name: other, port: 81}, {name: http, port: 82}, {name: grpc-b, port: 83}]}`,
		`apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: default}
spec:
  host: api
  trafficPolicy:
    tls: {mode: ISTIO_MUTUAL}
    connectionPool: {http: {useClientProtocol: true}}
    portLevelSettings:
    - port: {number: 81}
      tls: {mode: ISTIO_MUTUAL}
      connectionPool: {http: {h2UpgradePolicy: UPGRADE}}
    - port: {number: 82}
      tls: {mode: ISTIO_MUTUAL}
      connectionPool: {http: {h2UpgradePolicy: UPGRADE}}
    - port: {number: 83}
      tls: {mode: ISTIO_MUTUAL}`,
		gwNamespace, gwPod, gwGateway(`  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]`),
	}
	sidecar := compile(t, Options{Format: XDS}, "default/client", docs...)
	router := compile(t, Options{Format: XDS}, "gw/gw-1", docs...)
	for _, tc := range []struct {
		cfg  *Config
		port string
		h2   bool
	}{
		{sidecar, "80", false}, // useClientProtocol on a gRPC port
		{sidecar, "81", false}, // UPGRADE on a sniffed port
		{sidecar, "82", true},  // UPGRADE on an HTTP port
		{sidecar, "83", true},  // a gRPC port
		{router, "80", false},
		{router, "81", true}, // a gateway does not keep the client's protocol
	} {
		name := "outbound|" + tc.port + "||api.default.svc.cluster.local"
		alpn := upstreamTLS(t, clusterNamed(tc.cfg, name)).GetCommonTlsContext().GetAlpnProtocols()
		if got := slices.Contains(alpn, "h2"); got != tc.h2 {
			t.Errorf("%s %s: ALPN %v, want h2 %v", tc.cfg.View.Proxy.ID(), name, alpn, tc.h2)
		}
	}
}

// TestServiceEntrySANs: the identities checked on a ServiceEntry's
// servers are its subjectAltNames with its workloads' accounts, sorted
// and once each as istiod keeps them, under Istio mutual TLS and under a
// credential the rule names no SANs for alike.
func TestServiceEntrySANs(t *testing.T) {
	entry := `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: default}
spec:
  hosts: [db.internal]
  addresses: [240.0.0.10]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 80, name: http, protocol: HTTP}]
  endpoints: [{address: 10.9.0.1, serviceAccount: db}]
  subjectAltNames: [spiffe://z.example/db, b.example.com, b.example.com]`
	want := []string{"b.example.com", "spiffe://cluster.local/ns/default/sa/db", "spiffe://z.example/db"}
	for _, tls := range []string{
		`{mode: ISTIO_MUTUAL}`,
		`{mode: MUTUAL, credentialName: db-cert}`,
	} {
		dr := `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: db, namespace: default}
spec: {host: db.internal, workloadSelector: {matchLabels: {app: client}}, trafficPolicy: {tls: ` + tls + `}}`
		common := upstreamTLS(t, clusterNamed(compile(t, Options{}, "default/client", injectedNs, clientPod, entry, dr), "outbound|80||db.internal")).GetCommonTlsContext()
		var sans []string
		for _, m := range common.GetCombinedValidationContext().GetDefaultValidationContext().GetMatchSubjectAltNames() { //nolint:staticcheck // the field istiod sets
			sans = append(sans, m.GetExact())
		}
		if !slices.Equal(sans, want) {
			t.Errorf("%s: SANs %v, want %v", tls, sans, want)
		}
	}
}
