package routecheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/request"
)

// Where istiod's simulation tests send traffic for an address no service
// has, on ports an external ServiceEntry declares with every protocol:
// through to the original destination under ALLOW_ANY, to the black hole
// (or, for HTTP on an HTTP port, the block_all virtual host) under
// REGISTRY_ONLY; with and without a VIP on the ServiceEntry.
func TestUnknownDestinationsAsIstioSimulates(t *testing.T) {
	protocols := map[uint32]string{80: "HTTP", 81: "", 82: "TCP", 83: "TLS", 84: "HTTPS", 85: "GRPC", 86: "HTTP2"}
	httpPort := func(p uint32) bool { return p == 80 || p == 85 || p == 86 }
	type call struct {
		name, protocol, tls, alpn string
	}
	calls := []call{
		{"http", "http", "plaintext", ""},
		{"http over tls", "http", "tls", ""},
		{"http over tls offering http/1.1", "http", "tls", "http/1.1"},
		{"tcp", "tcp", "plaintext", ""},
		{"http2 over tls", "http2", "tls", ""},
	}
	for _, mode := range []string{"REGISTRY_ONLY", "ALLOW_ANY"} {
		for _, vip := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s vip=%v", mode, vip), func(t *testing.T) {
				var se strings.Builder
				se.WriteString("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata:\n  name: se\n  namespace: default\nspec:\n  hosts: [istio.io]\n  location: MESH_EXTERNAL\n  resolution: DNS\n")
				if vip {
					se.WriteString("  addresses: [1.2.3.4]\n")
				}
				se.WriteString("  ports:\n")
				for p := uint32(80); p <= 86; p++ {
					fmt.Fprintf(&se, "  - {name: p%d, number: %d, protocol: %q}\n", p, p, protocols[p])
				}
				manifests := strings.Join([]string{
					"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n  labels: {istio-injection: enabled}\n",
					"apiVersion: v1\nkind: Pod\nmetadata:\n  name: client\n  namespace: default\nspec:\n  containers:\n  - {name: app, image: app}\n",
					"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: istio\n  namespace: istio-system\ndata:\n  mesh: |\n    outboundTrafficPolicy: {mode: " + mode + "}\n",
					se.String(),
				}, "---\n")
				f := &File{Path: "passthrough"}
				for p := uint32(80); p <= 86; p++ {
					for _, c := range calls {
						// Plain-text HTTP, which the HTTP inspector detects.
						isHTTP := c.protocol != "tcp" && c.tls == "plaintext"
						// Without a VIP the ServiceEntry's TCP port, and its
						// auto port for anything but plain-text HTTP, take
						// every address: not a passthrough case.
						if !vip && (p == 82 || (p == 81 && !isHTTP)) {
							continue
						}
						target := fmt.Sprintf("1.3.3.7:%d", p)
						if c.protocol != "tcp" {
							target = fmt.Sprintf("http://1.3.3.7:%d/", p)
						}
						tc := Case{Name: fmt.Sprintf("%s to port %d", c.name, p), Call: request.Call{From: "default/client", Target: target,
							Protocol: c.protocol, TLS: c.tls, ALPN: c.alpn, Headers: map[string]string{"Host": "foo"}}}
						blocked := "BlackHoleCluster"
						switch {
						case mode == "REGISTRY_ONLY" && isHTTP && (httpPort(p) || (!vip && p == 81)):
							vh := "block_all"
							tc.Expect.VirtualHost = &vh
						case mode == "REGISTRY_ONLY":
							tc.Expect.Cluster = &blocked
						default:
							pass := "PassthroughCluster"
							tc.Expect.Cluster = &pass
						}
						f.Tests = append(f.Tests, tc)
					}
				}
				runIn(t, manifests, f)
			})
		}
	}
}
