package resolve

import (
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// TestC42VirtualHostDomains: docs/semantics/cases.md C42, for the proxy DNS domains
// a Kubernetes pod can have (<namespace>.svc.<cluster domain>). The
// cases with other proxy domains (foo.local.campus.net seen from
// local.campus.net) have no Kubernetes equivalent and are left out.
func TestC42VirtualHostDomains(t *testing.T) {
	m := &Mesh{Config: model.MeshConfig{DomainSuffix: "cluster.local"}}
	svc := func(h string, reg Registry, res Resolution, addrs ...string) *Service {
		return &Service{Host: host.Name(h), Registry: reg, Resolution: res, Addresses: addrs}
	}
	const echo = "echo.default.svc.cluster.local"
	const headless = "headless.default.svc.cluster.local"
	tests := []struct {
		name    string
		s       *Service
		proxyNs string
		want    []string
	}{
		{"same namespace", svc(echo, Kubernetes, ClientSideLB), "default",
			[]string{echo, echo + ".", "echo", "echo.default.svc", "echo.default"}},
		{"other namespace", svc(echo, Kubernetes, ClientSideLB), "mesh",
			[]string{echo, echo + ".", "echo.default", "echo.default.svc"}},
		{"other cluster domain", svc("foo.default.svc.bar.baz", External, ClientSideLB), "default",
			[]string{"foo.default.svc.bar.baz", "foo.default.svc.bar.baz."}},
		{"not Kubernetes", svc("google.local", External, DNSLB), "foo",
			[]string{"google.local", "google.local."}},
		{"IPv4 host", svc("1.2.3.4", External, ClientSideLB), "default", []string{"1.2.3.4"}},
		{"IPv6 host", svc("2406:3003:2064:35b8:864:a648:4b96:e37d", External, ClientSideLB), "default",
			[]string{"[2406:3003:2064:35b8:864:a648:4b96:e37d]"}},
		{"headless", svc(headless, Kubernetes, Passthrough), "default",
			[]string{headless, headless + ".", "headless", "headless.default.svc", "headless.default",
				"*." + headless, "*." + headless + ".", "*.headless", "*.headless.default.svc", "*.headless.default"}},
		{"VIPs", svc(echo, Kubernetes, ClientSideLB, "1.2.3.4", "1.2.3.5"), "default",
			[]string{echo, echo + ".", "echo", "echo.default.svc", "echo.default", "1.2.3.4", "1.2.3.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := m.serviceDomains(tt.s, client{ns: tt.proxyNs})
			if !slices.Equal(got, tt.want) {
				t.Errorf("domains = %v\nwant      %v", got, tt.want)
			}
		})
	}
}
