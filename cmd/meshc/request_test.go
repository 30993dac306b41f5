package main

import (
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/testfiles"
)

const requestMesh = "testdata/request/mesh"

// TestExplainRequestGolden: explain request's text and JSON on bookinfo
// and on a mesh with Sidecars, matched and unmatched requests alike.
func TestExplainRequestGolden(t *testing.T) {
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"jason.txt", []string{"default/productpage-v1", "http://reviews:9080/reviews/0", "-H", "end-user: jason", bookinfoDir}},
		{"jason.json", []string{"default/productpage-v1", "http://reviews:9080/reviews/0", "-H", "end-user: jason", bookinfoDir, "-o", "json"}},
		{"split.json", []string{"default/productpage-v1", "http://10.0.0.1:9080/", "-H", "Host: reviews", bookinfoDir, "-o", "json"}},
		{"gateway.txt", []string{"gateway", "istio-system/istio-ingressgateway", "http://bookinfo.example.com/productpage", bookinfoDir}},
		{"gateway-no-route.txt", []string{"gateway", "istio-system/istio-ingressgateway", "http://bookinfo.example.com/admin", bookinfoDir}},
		{"gateway-no-route.json", []string{"gateway", "istio-system/istio-ingressgateway", "http://bookinfo.example.com/admin", bookinfoDir, "-o", "json"}},
		{"inbound-mtls.txt", []string{"reviews-v1", "http://reviews:9080/", "--inbound", "--tls", "mtls", bookinfoDir}},
		{"tcp.txt", []string{"default/productpage-v1", "ratings:9080", bookinfoDir}},
		{"sidecar-hides.txt", []string{"shop/cart", "http://payments.bank/", requestMesh}},
		{"sidecar-hides.json", []string{"shop/cart", "http://payments.bank/", requestMesh, "-o", "json"}},
		{"registry-only.txt", []string{"locked/vault", "10.9.9.9:5432", requestMesh}},
		{"rewrite.txt", []string{"shop/cart", "http://web/api/x?q=1", requestMesh}},
		{"redirect.json", []string{"shop/cart", "http://web/old", requestMesh, "-o", "json"}},
		// An address a Gateway server binds reaches its own listener.
		{"gateway-bind.txt", []string{"gateway", "istio-system/bind-and-none", "http://10.10.0.1:8080/ab", "-H", "Host: b.example.com", gatewayBind}},
		{"gateway-bind-wildcard.txt", []string{"gateway", "istio-system/bind-and-none", "http://a.example.com:8080/ab", gatewayBind}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, errOut := meshc(t, "", append([]string{"explain", "request"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			testfiles.Golden(t, filepath.Join("testdata", "request", tt.golden), []byte(out))
		})
	}
}

func TestExplainRequestExitCodes(t *testing.T) {
	runCLICases(t, []cliCase{
		{"no such proxy", []string{"explain", "request", "default/productpage", "http://reviews:9080/", bookinfoDir}, 2, "", "did you mean default/productpage-v1"},
		{"bad target", []string{"explain", "request", "default/productpage-v1", "reviews", bookinfoDir}, 2, "", "want http://HOST[:PORT][/PATH[?QUERY]], https://HOST[:PORT][/PATH], HOST:PORT or IP:PORT"},
		{"bad scheme", []string{"explain", "request", "default/productpage-v1", "ftp://reviews/", bookinfoDir}, 2, "", "has scheme ftp"},
		{"bad tls", []string{"explain", "request", "default/productpage-v1", "http://reviews:9080/", "--tls", "ssl", bookinfoDir}, 2, "", "want one of plaintext, tls, mtls"},
		{"bad protocol", []string{"explain", "request", "default/productpage-v1", "http://reviews:9080/", "--protocol", "udp", bookinfoDir}, 2, "", "want one of http, http2, grpc, tcp"},
		{"bad header", []string{"explain", "request", "default/productpage-v1", "http://reviews:9080/", "-H", "nocolon", bookinfoDir}, 2, "", "want 'Name: value'"},
		{"alpn in plain text", []string{"explain", "request", "default/productpage-v1", "http://reviews:9080/", "--alpn", "h2", bookinfoDir}, 2, "", "ALPN is offered in a TLS handshake only"},
		{"a sidecar is no gateway", []string{"explain", "request", "gateway", "default/productpage-v1", "http://reviews:9080/", bookinfoDir}, 2, "", "not a gateway"},
		{"gateway without target", []string{"explain", "request", "gateway", "istio-system/istio-ingressgateway"}, 2, "", "want gateway"},
		{"bad output", []string{"explain", "request", "default/productpage-v1", "http://reviews:9080/", "-o", "yaml", bookinfoDir}, 2, "", "unknown output format"},
		{"completes FROM with proxies", []string{"__complete", "explain", "request", "-f", bookinfoDir, ""}, 0, "default/productpage-v1\tDeployment", ""},
		{"completes a gateway", []string{"__complete", "explain", "request", "-f", bookinfoDir, "gateway", ""}, 0, "istio-system/istio-ingressgateway", ""},
		{"a gateway without the keyword", []string{"explain", "request", "istio-system/istio-ingressgateway", "http://bookinfo.example.com/productpage", bookinfoDir}, 0, "Request from istio-system/istio-ingressgateway (gateway)", ""},
		{"no route is still an answer", []string{"explain", "request", "gateway", "istio-system/istio-ingressgateway", "http://bookinfo.example.com/admin", bookinfoDir}, 0, "Stopped at route", ""},
	})
}

// TestMeshcTest: the bundled example passes; failures exit 1 with
// expected, actual and trace, in text and JUnit; a test file that cannot
// be read is exit 2 at its file:line.
func TestMeshcTest(t *testing.T) {
	tests := filepath.Join("testdata", "request", "tests")
	example := filepath.Join("..", "..", "examples", "bookinfo-routing-tests.yaml")
	runCLICases(t, []cliCase{
		{"bundled example passes", []string{"test", example, "-f", bookinfoDir}, 0, "7 tests, 7 passed, 0 failed", ""},
		{"failures exit 1", []string{"test", filepath.Join(tests, "failing.yaml"), "-f", requestMesh}, 1, "3 tests, 1 passed, 2 failed", ""},
		{"unknown field", []string{"test", filepath.Join(tests, "unknown-field.yaml"), "-f", requestMesh}, 2, "",
			filepath.Join(tests, "unknown-field.yaml") + ":6: field clustr not found"},
		{"unknown proxy", []string{"test", filepath.Join(tests, "unknown-proxy.yaml"), "-f", requestMesh}, 2, "",
			filepath.Join(tests, "unknown-proxy.yaml") + ":2: no proxy shop/card in the input"},
		{"missing file", []string{"test", filepath.Join(tests, "none.yaml"), "-f", requestMesh}, 2, "", "none.yaml"},
		{"bad output", []string{"test", example, "-f", bookinfoDir, "-o", "tap"}, 2, "", "unknown output format"},
	})
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"test-failing.txt", []string{"test", filepath.Join(tests, "failing.yaml"), "-f", requestMesh}},
		{"test-failing.xml", []string{"test", filepath.Join(tests, "failing.yaml"), "-f", requestMesh, "-o", "junit"}},
		{"test-example.xml", []string{"test", example, "-f", bookinfoDir, "-o", "junit"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			_, out, _ := meshc(t, "", tt.args...)
			testfiles.Golden(t, filepath.Join("testdata", "request", tt.golden), []byte(out))
		})
	}
}
