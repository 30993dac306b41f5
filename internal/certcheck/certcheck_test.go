package certcheck

import (
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/certcheck/certchecktest"
)

// testPair makes a self-signed certificate and its key, as PEM.
func testPair(t *testing.T) (cert, key []byte) {
	t.Helper()
	cert, key, err := certchecktest.Pair()
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func TestKeyPair(t *testing.T) {
	cert, key := testPair(t)
	_, other := testPair(t)
	tests := []struct {
		name string
		data map[string][]byte
		want string // a substring of the verdict; "" for none
	}{
		{"tls keys", map[string][]byte{"tls.crt": cert, "tls.key": key}, ""},
		{"generic keys win", map[string][]byte{"cert": cert, "key": key, "tls.crt": []byte("x"), "tls.key": []byte("y")}, ""},
		{"malformed", map[string][]byte{"tls.crt": []byte("hello"), "tls.key": key}, "the certificate is malformed"},
		{"key of another certificate", map[string][]byte{"tls.crt": cert, "tls.key": other}, "the certificate is malformed"},
		{"empty", map[string][]byte{"tls.crt": nil, "tls.key": nil}, `found keys "tls.crt" and "tls.key", but they were empty`},
		{"no keys", map[string][]byte{"ca.crt": cert}, "found: ca.crt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := KeyPair(tt.data)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("KeyPair = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "PRIVATE") || strings.Contains(got, "BEGIN") {
				t.Errorf("verdict shows material: %q", got)
			}
		})
	}
}

func TestRoot(t *testing.T) {
	cert, _ := testPair(t)
	tests := []struct {
		name          string
		data          map[string]string
		want, wantKey string
	}{
		{"ca.crt", map[string]string{"ca.crt": string(cert)}, "", ""},
		{"cacert", map[string]string{"cacert": string(cert)}, "", ""},
		{"not PEM", map[string]string{"ca.crt": "hello"}, "the bundle is malformed", ""},
		{"empty", map[string]string{"ca.crt": ""}, "but it was empty", "but it was empty"},
		{"other key", map[string]string{"not-ca.crt": "hello"}, "found: not-ca.crt", "found: not-ca.crt"},
		{"nothing", nil, "found: none", "found: none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := Strings(tt.data)
			if got := Root(data); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Root = %q, want %q", got, tt.want)
			}
			if got := RootKey(data); (tt.wantKey == "") != (got == "") || !strings.Contains(got, tt.wantKey) {
				t.Errorf("RootKey = %q, want %q", got, tt.wantKey)
			}
		})
	}
}
