package protocol

import "testing"

func TestC07Protocols(t *testing.T) {
	tests := []struct {
		port                  int32
		name, k8sProto, appPr string
		want                  Protocol
	}{
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
		{8888, "HTTP-x", "TCP", "", HTTP},
		{8888, "GRPC-Web-x", "", "", GRPCWeb},
		// More of istio.md §1.2.
		{8888, "x", "TCP", "kubernetes.io/ws", HTTP},
		{8888, "x", "TCP", "kubernetes.io/wss", HTTPS},
		{8888, "udp-foo", "TCP", "", UDP},
	}
	for _, tt := range tests {
		if got := FromServicePort(tt.k8sProto, tt.name, tt.appPr, tt.port); got != tt.want {
			t.Errorf("(%d, %q, %s, %q) = %s, want %s", tt.port, tt.name, tt.k8sProto, tt.appPr, got, tt.want)
		}
	}
}

func TestParseAndClasses(t *testing.T) {
	for s, want := range map[string]Protocol{"http": HTTP, "HTTP2": HTTP2, "grpc-web": GRPCWeb, "http_proxy": HTTPProxy, "": Unsupported, "http-x": Unsupported, "TLS": TLS} {
		if got := Parse(s); got != want {
			t.Errorf("Parse(%q) = %s, want %s", s, got, want)
		}
	}
	if !GRPC.IsHTTP() || !GRPC.IsHTTP2() || TLS.IsHTTP() || !TLS.IsTCP() || !Unsupported.IsHTTPOrSniffed() || UDP.IsTCP() {
		t.Error("protocol classes are wrong")
	}
}
