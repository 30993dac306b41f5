package gatewayapi

import (
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/certcheck/certchecktest"
	"github.com/meshc/meshc/internal/model"
)

// caConfigMap is ConfigMap ns/name holding a CA certificate.
func caConfigMap(t *testing.T, ns, name string) string {
	t.Helper()
	cert, _, err := certchecktest.Pair()
	if err != nil {
		t.Fatal(err)
	}
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata:\n  ca.crt: |\n    " +
		strings.ReplaceAll(strings.TrimSpace(string(cert)), "\n", "\n    ")
}

// TestFrontendValidation checks the client certificate validation a
// Gateway's spec.tls.frontend gives its terminating listeners, and the
// references istiod refuses (docs/semantics/gateway-api.md §G2.4).
func TestFrontendValidation(t *testing.T) {
	gateway := func(frontend, options string) string {
		return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: edge}
spec:
  gatewayClassName: istio
  tls:
    frontend:
` + frontend + `
  listeners:
  - {name: secure, port: 443, protocol: HTTPS, tls: {certificateRefs: [{name: cert}]` + options + `}}
  - {name: web, port: 80, protocol: HTTP}`
	}
	def := func(refs string) string {
		return "      default:\n        validation:\n          caCertificateRefs: " + refs
	}
	grant := edgeGrant("ConfigMap")
	namedGrant := strings.Replace(grant, `kind: ConfigMap}`, `kind: ConfigMap, name: ca}`, 1)
	cm, certsCM := caConfigMap(t, "edge", "ca"), caConfigMap(t, "certs", "ca")
	tests := []struct {
		name string
		docs []string
		// want is the server TLS; "" when the listener is not programmed,
		// then reason is the ResolvedRefs reason reported.
		want, reason, at string
	}{
		{"ConfigMap CA", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca}]"), ""), cm},
			`{"caCertCredentialName":"configmap://edge/ca-cacert","credentialName":"kubernetes-gateway://edge/cert","insecureSkipVerify":false,"mode":"MUTUAL"}`, "", ""},
		{"Secret CA", []string{gateway(def("[{group: \"\", kind: Secret, name: cert}]"), "")},
			`{"caCertCredentialName":"kubernetes-gateway://edge/cert-cacert","credentialName":"kubernetes-gateway://edge/cert","insecureSkipVerify":false,"mode":"MUTUAL"}`, "", ""},
		{"insecure fallback", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca}]\n          mode: AllowInsecureFallback"), ""), cm},
			`{"caCertCredentialName":"configmap://edge/ca-cacert","credentialName":"kubernetes-gateway://edge/cert","insecureSkipVerify":true,"mode":"OPTIONAL_MUTUAL"}`, "", ""},
		{"terminate option wins", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca}]\n          mode: AllowInsecureFallback"),
			", options: {gateway.istio.io/tls-terminate-mode: MUTUAL}"), cm},
			`{"caCertCredentialName":"configmap://edge/ca-cacert","credentialName":"kubernetes-gateway://edge/cert","insecureSkipVerify":false,"mode":"MUTUAL"}`, "", ""},
		{"per port entry of another port", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: missing}]")+
			"\n      perPort:\n      - port: 443\n        tls: {validation: {caCertificateRefs: [{group: \"\", kind: ConfigMap, name: ca}]}}", ""), cm},
			`{"caCertCredentialName":"configmap://edge/ca-cacert","credentialName":"kubernetes-gateway://edge/cert","insecureSkipVerify":false,"mode":"MUTUAL"}`, "", ""},
		{"granted elsewhere", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca, namespace: certs}]"), ""), certsCM, grant},
			`{"caCertCredentialName":"configmap://certs/ca-cacert","credentialName":"kubernetes-gateway://edge/cert","insecureSkipVerify":false,"mode":"MUTUAL"}`, "", ""},
		{"grant naming the ConfigMap", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca, namespace: certs}]"), ""), certsCM, namedGrant},
			"", "RefNotPermitted", "name: ca, namespace: certs"},
		{"no grant", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca, namespace: certs}]"), ""), certsCM},
			"", "RefNotPermitted", "namespace: certs"},
		{"not in the input", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: nope}]"), ""), cm},
			"", "InvalidCACertificateRef", "name: nope"},
		{"kept in the cluster", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: nope}]"), "")},
			`{"caCertCredentialName":"configmap://edge/nope-cacert","credentialName":"kubernetes-gateway://edge/cert","insecureSkipVerify":false,"mode":"MUTUAL"}`, "", ""},
		{"malformed", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca}]"), ""),
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ca, namespace: edge}\ndata: {ca.crt: hello}"},
			"", "InvalidCACertificateRef", "name: ca}"},
		{"wrong kind", []string{gateway(def("[{group: \"\", kind: Service, name: ca}]"), "")},
			"", "InvalidCACertificateKind", "kind: Service"},
		{"two references", []string{gateway(def("[{group: \"\", kind: ConfigMap, name: ca}, {group: \"\", kind: ConfigMap, name: ca}]"), ""), cm},
			"", "InvalidCACertificateRef", "caCertificateRefs:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := append([]string{tlsSecret}, tt.docs...)
			res := convert(t, docs...)
			var server string
			for _, o := range res.Generated {
				if g, ok := o.(*model.Gateway); ok && strings.HasSuffix(g.Name, "~secure") {
					server = specJSON(t, g.Spec.GetServers()[0].GetTls())
				}
			}
			if server != tt.want {
				t.Errorf("server TLS\n got %s\nwant %s\ndiagnostics %v", server, tt.want, codes(res.Diagnostics))
			}
			insecure := slices.ContainsFunc(res.Gateways[0].Conditions, func(c Condition) bool { return c.Type == "InsecureFrontendValidationMode" })
			if want := strings.Contains(tt.docs[0], "AllowInsecureFallback"); insecure != want {
				t.Errorf("InsecureFrontendValidationMode condition: %v, want %v", insecure, want)
			}
			if tt.reason == "" {
				if hasDiag(res.Diagnostics, "MC7105") {
					t.Errorf("unexpected MC7105: %v", codes(res.Diagnostics))
				}
				return
			}
			var found bool
			lines := strings.Split(strings.Join(docs, "\n---\n"), "\n")
			for _, d := range res.Diagnostics {
				if d.Code != "MC7105" || !strings.Contains(d.Message, tt.reason) {
					continue
				}
				found = true
				if l := d.Object.Line; l < 1 || l > len(lines) || !strings.Contains(lines[l-1], tt.at) {
					t.Errorf("at line %d, want the line holding %q", l, tt.at)
				}
			}
			if !found {
				t.Errorf("no MC7105 %s: %v", tt.reason, codes(res.Diagnostics))
			}
			// The HTTP listener is not affected; the Gateway stays accepted.
			gw := res.Gateways[0]
			if l := gw.Listeners[0]; l.Conditions[0].Status || l.Conditions[0].Reason != "NoValidCACertificate" {
				t.Errorf("listener Accepted = %+v, want False NoValidCACertificate", l.Conditions[0])
			}
			if gw.Listeners[1].Istio == nil {
				t.Error("the HTTP listener lost its server")
			}
		})
	}
}
