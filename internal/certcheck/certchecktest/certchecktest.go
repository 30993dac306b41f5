// Package certchecktest makes certificates for tests: a fresh self-signed
// CA certificate and its key, so that no key material is kept in the
// repository's test files.
package certchecktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// Pair is a new self-signed certificate for example.com and its private
// key, as PEM.
func Pair() (cert, key []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating a key: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "example.com"},
		DNSNames: []string{"example.com", "*.example.com"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<36, 0),
		IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the certificate: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// SecretYAML is a kubernetes.io/tls Secret ns/name holding a new Pair (and
// the certificate again as ca.crt).
func SecretYAML(ns, name string) (string, error) {
	cert, key, err := Pair()
	if err != nil {
		return "", err
	}
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s, ca.crt: %s}",
		name, ns, b64(cert), b64(key), b64(cert)), nil
}
