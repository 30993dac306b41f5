// Package protocol holds port protocols as istiod sees them: the protocol it
// infers for a Kubernetes Service port, the protocol it reads from Istio
// port declarations (ServiceEntry, Sidecar, Gateway), and the classes that
// decide what kind of outbound listener and cluster a port gets. See
// docs/semantics/registry.md §1.2.
package protocol

import "strings"

// Protocol is a port protocol, spelled as istiod spells it.
type Protocol string

// The protocols istiod knows for sidecars and gateways.
const (
	HTTP        Protocol = "HTTP"
	HTTP2       Protocol = "HTTP2"
	GRPC        Protocol = "GRPC"
	GRPCWeb     Protocol = "GRPC-Web"
	HTTPProxy   Protocol = "HTTP_PROXY"
	HTTPS       Protocol = "HTTPS"
	TCP         Protocol = "TCP"
	TLS         Protocol = "TLS"
	Mongo       Protocol = "Mongo"
	Redis       Protocol = "Redis"
	MySQL       Protocol = "MySQL"
	UDP         Protocol = "UDP"
	Unsupported Protocol = "UnsupportedProtocol" // unknown: sniffed ("auto")
)

// Parse reads a protocol from an Istio port declaration (ServiceEntry,
// Sidecar or Gateway server port): the whole string, case-insensitively.
// Empty or unknown strings are Unsupported, i.e. sniffed; there is no
// prefix splitting here, so "http-web" is Unsupported.
func Parse(s string) Protocol {
	switch strings.ToLower(s) {
	case "http":
		return HTTP
	case "http2":
		return HTTP2
	case "grpc":
		return GRPC
	case "grpc-web":
		return GRPCWeb
	case "http_proxy":
		return HTTPProxy
	case "https":
		return HTTPS
	case "tcp":
		return TCP
	case "tls":
		return TLS
	case "mongo":
		return Mongo
	case "redis":
		return Redis
	case "mysql":
		return MySQL
	case "udp":
		return UDP
	}
	return Unsupported
}

// grpcWebPrefix must be recognised before splitting at "-", since the
// protocol name itself contains one.
const grpcWebPrefix = "grpc-web"

// FromServicePort infers the protocol of a Kubernetes Service port from
// its protocol field k8sProtocol ("TCP", "UDP", "SCTP" or ""), name,
// appProtocol ("" when unset) and port number:
//
//  1. protocol UDP gives UDP (the field is a case-sensitive enum);
//  2. otherwise appProtocol is the source if set, else the name; the
//     Kubernetes-defined appProtocols kubernetes.io/h2c, kubernetes.io/ws
//     and kubernetes.io/wss give HTTP2, HTTP and HTTPS;
//  3. a source starting with "grpc-web" (any case) gives GRPC-Web;
//  4. else the source's part before the first "-" is Parse'd;
//  5. if that is Unsupported, ports 25, 53, 3306 and 27017 are TCP instead,
//     because sniffing would break those server-first protocols.
//
// Consequence worth a diagnostic: a TCP port named "udp-foo" comes out as
// UDP and is ignored by every generator.
func FromServicePort(k8sProtocol, name, appProtocol string, port int32) Protocol {
	if k8sProtocol == "UDP" {
		return UDP
	}
	s := name
	// Kubernetes rejects an empty appProtocol, so "" can safely mean unset.
	if appProtocol != "" {
		switch appProtocol {
		case "kubernetes.io/h2c":
			return HTTP2
		case "kubernetes.io/ws":
			return HTTP
		case "kubernetes.io/wss":
			return HTTPS
		}
		s = appProtocol
	}
	if len(s) >= len(grpcWebPrefix) && strings.EqualFold(s[:len(grpcWebPrefix)], grpcWebPrefix) {
		return GRPCWeb
	}
	prefix, _, _ := strings.Cut(s, "-")
	if p := Parse(prefix); p != Unsupported {
		return p
	}
	switch port {
	case 25, 53, 3306, 27017: // SMTP, DNS, MySQL, MongoDB
		return TCP
	}
	return Unsupported
}

// IsHTTP reports the HTTP class, whose outbound listeners run the HTTP
// connection manager with RDS routes.
func (p Protocol) IsHTTP() bool {
	switch p {
	case HTTP, HTTP2, GRPC, GRPCWeb, HTTPProxy:
		return true
	}
	return false
}

// IsTCP reports the TCP class, proxied with tcp_proxy. HTTPS and TLS are
// in it: the proxy sees only TLS bytes and routes by SNI.
func (p Protocol) IsTCP() bool {
	switch p {
	case TCP, HTTPS, TLS, Mongo, Redis, MySQL:
		return true
	}
	return false
}

// IsUnsupported reports a port whose protocol is sniffed ("auto"): it gets
// both a TCP and an HTTP filter chain.
func (p Protocol) IsUnsupported() bool { return p == Unsupported }

// IsHTTP2 reports protocols whose upstream connections use HTTP/2.
func (p Protocol) IsHTTP2() bool {
	switch p {
	case HTTP2, GRPC, GRPCWeb:
		return true
	}
	return false
}

// IsHTTPOrSniffed reports ports that get HTTP routes: the HTTP class and
// sniffed ports.
func (p Protocol) IsHTTPOrSniffed() bool { return p.IsHTTP() || p.IsUnsupported() }
