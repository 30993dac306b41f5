// Package certcheck judges the certificates a Secret or ConfigMap holds as
// istiod does before it hands them to a gateway (docs/semantics/gateway-api.md
// §G2.4): a certificate and key that make a key pair, or a CA bundle with
// at least one certificate. It returns only a verdict, never the material:
// callers keep the verdict and drop the values.
package certcheck

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
)

// The data keys istiod reads, in the order it tries them.
var (
	pairKeys = [][2]string{{"cert", "key"}, {"tls.crt", "tls.key"}}
	rootKeys = []string{"cacert", "ca.crt"}
)

// KeyPair is "" when data holds a certificate and private key istiod can
// serve (cert and key, else tls.crt and tls.key), and otherwise why not.
func KeyPair(data map[string][]byte) string {
	for _, k := range pairKeys {
		cert, key := data[k[0]], data[k[1]]
		if len(cert) == 0 || len(key) == 0 {
			continue
		}
		if _, err := tls.X509KeyPair(cert, key); err != nil {
			return "the certificate is malformed: " + err.Error()
		}
		return ""
	}
	for _, k := range pairKeys {
		if present(data, k[0]) && present(data, k[1]) {
			return fmt.Sprintf("found keys %q and %q, but they were empty", k[0], k[1])
		}
	}
	return fmt.Sprintf("found no keys %q and %q, nor %q and %q; found: %s", "cert", "key", "tls.crt", "tls.key", keyList(data))
}

// Root is "" when data holds a CA bundle istiod can use (cacert, else
// ca.crt) with at least one PEM certificate, and otherwise why not.
func Root(data map[string][]byte) string {
	k, why := rootKey(data)
	if why != "" {
		return why
	}
	if !x509.NewCertPool().AppendCertsFromPEM(data[k]) {
		return "the bundle is malformed: key " + k + " holds no PEM certificate"
	}
	return ""
}

// RootKey is "" when data has a non-empty CA key (cacert or ca.crt),
// whatever it holds, and otherwise why not: the only check istiod makes of
// a BackendTLSPolicy's CA.
func RootKey(data map[string][]byte) string {
	_, why := rootKey(data)
	return why
}

// rootKey is the key the CA bundle is read from, or why there is none.
func rootKey(data map[string][]byte) (string, string) {
	for _, k := range rootKeys {
		if len(data[k]) > 0 {
			return k, ""
		}
	}
	for _, k := range rootKeys {
		if present(data, k) {
			return "", fmt.Sprintf("found key %q, but it was empty", k)
		}
	}
	return "", fmt.Sprintf("found no key %q or %q; found: %s", "cacert", "ca.crt", keyList(data))
}

// Strings converts a ConfigMap's data for Root.
func Strings(data map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(data))
	for k, v := range data {
		out[k] = []byte(v)
	}
	return out
}

func present(data map[string][]byte, k string) bool {
	_, ok := data[k]
	return ok
}

// keyList names the keys found, sorted; "none" for none.
func keyList(data map[string][]byte) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return "none"
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}
