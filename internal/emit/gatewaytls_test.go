package emit

import (
	"slices"
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// TestGatewayCredentialsAndClientValidation: a server with two
// credentials (as a Gateway API listener with an RSA and an ECDSA
// certificate) presents both and checks clients against the first's CA
// unless a CA credential is named; insecureSkipVerify on an
// OPTIONAL_MUTUAL server accepts untrusted client certificates, as
// istiod builds them.
func TestGatewayCredentialsAndClientValidation(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw", gatewayPod("edge"), `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: istio-system}
spec:
  selector: {istio: edge}
  servers:
  - {port: {number: 8443, name: https-a, protocol: HTTPS}, hosts: ["*/a.example.com"], tls: {mode: MUTUAL, credentialNames: [rsa, ecdsa]}}
  - port: {number: 9443, name: https-b, protocol: HTTPS}
    hosts: ["*/b.example.com"]
    tls: {mode: OPTIONAL_MUTUAL, credentialNames: [rsa, ecdsa], caCertCredentialName: "configmap://certs/ca-cacert", insecureSkipVerify: true}`)
	tests := []struct {
		listener, ca string
		require      bool
		trust        tlsv3.CertificateValidationContext_TrustChainVerification
	}{
		{"0.0.0.0_8443", "kubernetes://rsa-cacert", true, tlsv3.CertificateValidationContext_VERIFY_TRUST_CHAIN},
		{"0.0.0.0_9443", "configmap://certs/ca-cacert", false, tlsv3.CertificateValidationContext_ACCEPT_UNTRUSTED},
	}
	for _, tt := range tests {
		t.Run(tt.listener, func(t *testing.T) {
			l := listenerNamed(cfg, tt.listener)
			if l == nil || len(l.GetFilterChains()) != 1 {
				t.Fatalf("want %s with one chain, got %v", tt.listener, l)
			}
			ctx := downstreamTLS(t, l.GetFilterChains()[0])
			common := ctx.GetCommonTlsContext()
			if got := names(common.GetTlsCertificateSdsSecretConfigs()); !slices.Equal(got, []string{"kubernetes://rsa", "kubernetes://ecdsa"}) {
				t.Errorf("certificates %v, want both credentials", got)
			}
			v := common.GetCombinedValidationContext()
			if got := v.GetValidationContextSdsSecretConfig().GetName(); got != tt.ca {
				t.Errorf("CA %s, want %s", got, tt.ca)
			}
			if got := v.GetDefaultValidationContext().GetTrustChainVerification(); got != tt.trust {
				t.Errorf("trust chain verification %v, want %v", got, tt.trust)
			}
			if ctx.GetRequireClientCertificate().GetValue() != tt.require {
				t.Errorf("require_client_certificate %v, want %v", ctx.GetRequireClientCertificate(), tt.require)
			}
		})
	}
}

// TestInvalidCredential: a DestinationRule whose CA istiod could not
// resolve (a BackendTLSPolicy's, credential invalid://) asks for the
// secret "invalid://" itself, which no proxy can load, so that TLS to the
// backend fails instead of going unchecked.
func TestInvalidCredential(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "istio-system/gw", gatewayPod("edge"), `apiVersion: v1
kind: Service
metadata: {name: echo, namespace: app}
spec: {clusterIP: 10.0.0.9, ports: [{name: http, port: 80}]}`, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: echo, namespace: app}
spec: {host: echo.app.svc.cluster.local, trafficPolicy: {tls: {mode: SIMPLE, sni: echo.example.com, credentialName: "invalid://"}}}`, `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: istio-system}
spec: {selector: {istio: edge}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*/*"]}]}`)
	c := clusterNamed(cfg, "outbound|80||echo.app.svc.cluster.local")
	if c == nil {
		t.Fatal("no cluster for echo")
	}
	ctx := upstreamTLS(t, c)
	if got := ctx.GetCommonTlsContext().GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName(); got != "invalid://" || ctx.GetSni() != "echo.example.com" {
		t.Errorf("CA secret %q, SNI %q; want invalid:// and echo.example.com", got, ctx.GetSni())
	}
}
