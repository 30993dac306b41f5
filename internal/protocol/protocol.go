// Package protocol holds the port protocols Istio infers from Kubernetes
// Service ports and reads from Istio port declarations, and their classes.
package protocol

import "strings"

// Protocol is a port protocol as istiod names it.
type Protocol string

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
	Unsupported Protocol = "UnsupportedProtocol" // sniffed ("auto")
)

// Parse reads an Istio port protocol (ServiceEntry, Sidecar, Gateway):
// the whole string, case-insensitively; empty or unknown is Unsupported.
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

// FromServicePort infers a Kubernetes Service port's protocol: UDP ports
// are UDP; otherwise appProtocol, else the port name, decides by its part
// before the first "-"; a few well-known ports default to TCP.
func FromServicePort(k8sProtocol, name, appProtocol string, port int32) Protocol {
	if strings.EqualFold(k8sProtocol, "UDP") {
		return UDP
	}
	s := name
	switch appProtocol {
	case "":
	case "kubernetes.io/h2c":
		return HTTP2
	case "kubernetes.io/ws":
		return HTTP
	case "kubernetes.io/wss":
		return HTTPS
	default:
		s = appProtocol
	}
	if strings.HasPrefix(strings.ToLower(s), "grpc-web") {
		return GRPCWeb
	}
	prefix, _, _ := strings.Cut(s, "-")
	if p := Parse(prefix); p != Unsupported {
		return p
	}
	switch port {
	case 25, 53, 3306, 27017:
		return TCP
	}
	return Unsupported
}

// IsHTTP reports the HTTP class, whose outbound listeners route HTTP.
func (p Protocol) IsHTTP() bool {
	switch p {
	case HTTP, HTTP2, GRPC, GRPCWeb, HTTPProxy:
		return true
	}
	return false
}

// IsTCP reports the TCP class (TLS and HTTPS included: they are proxied
// as TCP with SNI).
func (p Protocol) IsTCP() bool {
	switch p {
	case TCP, HTTPS, TLS, Mongo, Redis, MySQL:
		return true
	}
	return false
}

// IsUnsupported reports a sniffed port.
func (p Protocol) IsUnsupported() bool { return p == Unsupported }

// IsHTTP2 reports protocols that use HTTP/2 upstream.
func (p Protocol) IsHTTP2() bool { return p == HTTP2 || p == GRPC || p == GRPCWeb }

// IsHTTPOrSniffed reports ports that get HTTP routes.
func (p Protocol) IsHTTPOrSniffed() bool { return p.IsHTTP() || p == Unsupported }
