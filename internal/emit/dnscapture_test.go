package emit

import (
	"os"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// fidelityFixture is the manifest of testdata/fidelity/NAME, a mesh
// meshc-fidelity compares with istiod's build.
func fidelityFixture(t *testing.T, name string) string {
	t.Helper()
	in, err := os.ReadFile("testdata/fidelity/" + name + "/mesh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(in)
}

// TestDNSCaptureAllocatedAddresses: testdata/fidelity/dns-capture, whose
// mesh config has proxies capture DNS. A ServiceEntry host's allocated
// address (from its status) is its TCP port's listener address and a
// domain of its HTTP virtual host, the IPv4 one on an IPv4 or dual-stack
// proxy and the IPv6 one on an IPv6-only proxy; resolution NONE and the
// opt-out label keep the wildcard, an entry's own address stays; so does
// a pod whose proxy.istio.io/config turns capture off. An IPv4
// Service's TCP port listens on its cluster IP on the IPv6-only proxy
// too, whose vhost for it does not name the address. As istiod's
// generator builds the fixture (checked with meshc-fidelity).
func TestDNSCaptureAllocatedAddresses(t *testing.T) {
	m := resolvetest.Mesh(t, fidelityFixture(t, "dns-capture"))
	for _, tc := range []struct {
		proxy     string
		listeners []string
		web       string // the web.example.com virtual host's last domain
		client    string // the client Service's
	}{
		{"client", []string{"0.0.0.0_80", "0.0.0.0_8000", "0.0.0.0_8080", "0.0.0.0_9001", "0.0.0.0_9002", "10.96.0.4_9090", "192.0.2.10_9003", "240.240.0.1_5432"}, "240.240.0.2", "10.96.0.4"},
		{"dual", []string{"0.0.0.0_80", "0.0.0.0_8000", "0.0.0.0_8080", "0.0.0.0_9001", "0.0.0.0_9002", "10.96.0.4_9090", "192.0.2.10_9003", "240.240.0.1_5432"}, "240.240.0.2", "10.96.0.4"},
		{"nocapture", []string{"0.0.0.0_5432", "0.0.0.0_80", "0.0.0.0_8000", "0.0.0.0_8080", "0.0.0.0_9001", "0.0.0.0_9002", "10.96.0.4_9090", "192.0.2.10_9003"}, "web.example.com.", "10.96.0.4"},
		{"v6", []string{"10.96.0.4_9090", "192.0.2.10_9003", "2001:2::1_5432", "::_80", "::_8000", "::_8080", "::_9001", "::_9002"}, "[2001:2::2]", "client.app"},
	} {
		t.Run(tc.proxy, func(t *testing.T) {
			v, ok := m.View("app", tc.proxy)
			if !ok {
				t.Fatalf("no proxy app/%s", tc.proxy)
			}
			cfg := New(m, Options{Format: XDS}).Build(v)
			var got []string
			for _, n := range names(cfg.Listeners) {
				if n != "virtualInbound" && n != "virtualOutbound" {
					got = append(got, n)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.listeners) {
				t.Errorf("listeners %v, want %v", got, tc.listeners)
			}
			for _, r := range []struct{ route, vhost, last string }{{"80", "web.example.com:80", tc.web}, {"8080", "client.app.svc.cluster.local:8080", tc.client}} {
				for _, vh := range routeNamed(cfg, r.route).GetVirtualHosts() {
					if d := vh.GetDomains(); vh.GetName() == r.vhost && d[len(d)-1] != r.last {
						t.Errorf("%s domains %v, want the last %s", r.vhost, d, r.last)
					}
				}
			}
		})
	}
}

// TestDNSCapturePerPod: testdata/fidelity/dns-capture-pod, a mesh that does
// not capture DNS where one pod's proxy.istio.io/config turns capture on:
// that proxy alone listens on the entry's allocated address. As istiod's
// generator builds the fixture (checked with meshc-fidelity).
func TestDNSCapturePerPod(t *testing.T) {
	m := resolvetest.Mesh(t, fidelityFixture(t, "dns-capture-pod"))
	for proxy, want := range map[string]string{"plain": "0.0.0.0_5432", "capturing": "240.240.0.1_5432"} {
		v, ok := m.View("app", proxy)
		if !ok {
			t.Fatalf("no proxy app/%s", proxy)
		}
		if cfg := New(m, Options{Format: XDS}).Build(v); listenerNamed(cfg, want) == nil {
			t.Errorf("%s: listeners %v lack %s", proxy, names(cfg.Listeners), want)
		}
	}
}
