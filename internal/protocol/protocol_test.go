package protocol

import (
	"fmt"
	"testing"
)

type portCase struct {
	port                        int32
	name, k8sProto, appProtocol string
	want                        Protocol
}

func runPortCases(t *testing.T, tests []portCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%s/%q/%q", tt.port, tt.k8sProto, tt.name, tt.appProtocol), func(t *testing.T) {
			if got := FromServicePort(tt.k8sProto, tt.name, tt.appProtocol, tt.port); got != tt.want {
				t.Errorf("FromServicePort(%q, %q, %q, %d) = %s, want %s",
					tt.k8sProto, tt.name, tt.appProtocol, tt.port, got, tt.want)
			}
		})
	}
}

// TestC07Protocols pins docs/semantics/cases.md C07, every row.
func TestC07Protocols(t *testing.T) {
	runPortCases(t, []portCase{
		{8888, "", "TCP", "", Unsupported},
		{25, "", "TCP", "", TCP},
		{53, "", "TCP", "", TCP},
		{3306, "", "TCP", "", TCP},
		{27017, "", "TCP", "", TCP},
		{8888, "http", "TCP", "", HTTP},
		{8888, "http-test", "TCP", "", HTTP},
		{8888, "http", "UDP", "", UDP},
		{8888, "httptest", "TCP", "", Unsupported},
		{3306, "httptest", "TCP", "", TCP},
		{8888, "https-x", "TCP", "", HTTPS},
		{8888, "http2-x", "TCP", "", HTTP2},
		{8888, "grpc-x", "TCP", "", GRPC},
		{8888, "grpc-web-x", "TCP", "", GRPCWeb},
		{8888, "grpcweb-x", "TCP", "", Unsupported},
		{8888, "mongo-x", "TCP", "", Mongo},
		{8888, "redis-x", "TCP", "", Redis},
		{8888, "mysql-x", "TCP", "", MySQL},
		{8888, "tcp", "TCP", "http", HTTP},
		{8888, "http-something", "TCP", "https", HTTPS},
		{3306, "random-name", "TCP", "kubernetes.io/h2c", HTTP2},
		// "names are matched case-insensitively"
		{8888, "HTTP-x", "TCP", "", HTTP},
		{8888, "Http2-x", "TCP", "", HTTP2},
		{8888, "GRPC-Web-x", "TCP", "", GRPCWeb},
		{8888, "Mongo", "TCP", "", Mongo},
		{8888, "TLS-x", "TCP", "", TLS},
	})
}

// TestServicePortEdges adds the rest of docs/semantics/registry.md §1.2 and its quirks.
func TestServicePortEdges(t *testing.T) {
	runPortCases(t, []portCase{
		// Kubernetes-defined appProtocols.
		{8080, "tcp-x", "TCP", "kubernetes.io/ws", HTTP},
		{8443, "tcp-x", "TCP", "kubernetes.io/wss", HTTPS},
		{8080, "tcp-x", "TCP", "kubernetes.io/h2c", HTTP2},
		// Those values are recognised only as appProtocol.
		{8080, "kubernetes.io/h2c", "TCP", "", Unsupported},
		// An unknown appProtocol wins over a meaningful name.
		{8080, "http", "TCP", "foo", Unsupported},
		{3306, "http", "TCP", "foo", TCP},
		// appProtocol is split at "-" too.
		{8080, "x", "TCP", "grpc-web", GRPCWeb},
		{8080, "x", "TCP", "http-custom", HTTP},
		// Quirk: a TCP port named udp-* is UDP and so silently dropped.
		{8080, "udp-foo", "TCP", "", UDP},
		{8080, "udp", "", "", UDP},
		// Missing or SCTP k8s protocol: the name decides.
		{8080, "http-x", "", "", HTTP},
		{8080, "http-x", "SCTP", "", HTTP},
		// UDP wins over everything, well-known port included.
		{53, "tcp-dns", "UDP", "http", UDP},
		// The protocol field is a case-sensitive enum.
		{8080, "http", "udp", "", HTTP},
		// Prefix only up to the first "-"; no trimming.
		{8080, "-http", "TCP", "", Unsupported},
		{8080, "http_proxy-x", "TCP", "", HTTPProxy},
		{8080, "grpc-webx", "TCP", "", GRPCWeb}, // starts with grpc-web
		{8080, "grpc-we", "TCP", "", GRPC},
		// Well-known ports only replace Unsupported.
		{27017, "http", "TCP", "", HTTP},
		{80, "", "TCP", "", Unsupported},
	})
}

func TestParse(t *testing.T) {
	tests := map[string]Protocol{
		"http": HTTP, "HTTP": HTTP, "http2": HTTP2, "GRPC": GRPC, "grpc-web": GRPCWeb, "GRPC-Web": GRPCWeb,
		"http_proxy": HTTPProxy, "HTTPS": HTTPS, "tcp": TCP, "TLS": TLS, "mongo": Mongo, "Redis": Redis,
		"MYSQL": MySQL, "udp": UDP,
		// Whole string only: no prefix splitting, no trimming.
		"": Unsupported, "http-x": Unsupported, " http": Unsupported, "auto": Unsupported,
		"UnsupportedProtocol": Unsupported, "HBONE": Unsupported,
	}
	for s, want := range tests {
		if got := Parse(s); got != want {
			t.Errorf("Parse(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestClasses(t *testing.T) {
	all := []Protocol{HTTP, HTTP2, GRPC, GRPCWeb, HTTPProxy, HTTPS, TCP, TLS, Mongo, Redis, MySQL, UDP, Unsupported}
	// Columns: IsHTTP, IsTCP, IsUnsupported, IsHTTP2, IsHTTPOrSniffed.
	want := map[Protocol][5]bool{
		HTTP:        {true, false, false, false, true},
		HTTP2:       {true, false, false, true, true},
		GRPC:        {true, false, false, true, true},
		GRPCWeb:     {true, false, false, true, true},
		HTTPProxy:   {true, false, false, false, true},
		HTTPS:       {false, true, false, false, false},
		TCP:         {false, true, false, false, false},
		TLS:         {false, true, false, false, false},
		Mongo:       {false, true, false, false, false},
		Redis:       {false, true, false, false, false},
		MySQL:       {false, true, false, false, false},
		UDP:         {false, false, false, false, false},
		Unsupported: {false, false, true, false, true},
	}
	for _, p := range all {
		got := [5]bool{p.IsHTTP(), p.IsTCP(), p.IsUnsupported(), p.IsHTTP2(), p.IsHTTPOrSniffed()}
		if got != want[p] {
			t.Errorf("%s classes = %v, want %v", p, got, want[p])
		}
		// Every protocol Parse knows reads back from its own spelling.
		if got := Parse(string(p)); p != Unsupported && got != p {
			t.Errorf("Parse(%q) = %s", p, got)
		}
	}
}
