package resolve

import (
	"testing"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/model"
)

func TestServerMerge(t *testing.T) {
	srv := func(proto, bind string, tls bool, hosts ...string) *networking.Server {
		s := &networking.Server{Port: &networking.Port{Number: 80, Name: proto, Protocol: proto}, Hosts: hosts, Bind: bind}
		if tls {
			s.Tls = &networking.ServerTLSSettings{Mode: networking.ServerTLSSettings_SIMPLE, CredentialName: "c"}
		}
		return s
	}
	gw := func(name string, servers ...*networking.Server) *model.Gateway {
		return &model.Gateway{ObjectMeta: model.ObjectMeta{Namespace: "ns", Name: name}, Spec: &networking.Gateway{Servers: servers}}
	}
	tests := []struct {
		name    string
		servers []*networking.Server // one Gateway each, merged in order
		want    []DropReason
	}{
		{"HTTP servers merge", []*networking.Server{srv("HTTP", "", false, "a"), srv("HTTP", "", false, "b")}, []DropReason{DropNone, DropNone}},
		{"TCP holds the port", []*networking.Server{srv("TCP", "", false, "a"), srv("HTTP", "", false, "b"), srv("TCP", "", false, "c")}, []DropReason{DropNone, DropProtocolConflict, DropProtocolConflict}},
		{"nothing but HTTP after HTTP", []*networking.Server{srv("HTTP", "", false, "a"), srv("TCP", "", false, "b"), srv("HTTPS", "", true, "c"), srv("HTTP2", "", false, "d")}, []DropReason{DropNone, DropProtocolConflict, DropProtocolConflict, DropNone}},
		{"TLS first, then plain holds", []*networking.Server{srv("HTTPS", "", true, "a"), srv("HTTP", "", false, "b"), srv("HTTPS", "", true, "c")}, []DropReason{DropNone, DropNone, DropProtocolConflict}},
		{"another bind is another listener", []*networking.Server{srv("TCP", "", false, "a"), srv("HTTP", "10.0.0.1", false, "b"), srv("HTTP", "10.0.0.1", false, "c"), srv("TCP", "", false, "d")}, []DropReason{DropNone, DropNone, DropNone, DropNone}},
		{"repeated TLS host", []*networking.Server{srv("HTTPS", "", true, "a", "b"), srv("TLS", "", true, "b")}, []DropReason{DropNone, DropDuplicateTLSHosts}},
		{"repeated TLS host on another bind", []*networking.Server{srv("HTTPS", "", true, "a"), srv("HTTPS", "10.0.0.1", true, "a")}, []DropReason{DropNone, DropNone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewServerMerge()
			for i, s := range tt.servers {
				// Distinct port names keep HTTPS route names apart.
				s.Port.Name = s.Port.Name + string(rune('a'+i))
				if got := m.Add(ServerRef{Gateway: gw(string(rune('a'+i)), s), Index: 0}, 80); got.Drop != tt.want[i] {
					t.Errorf("server %d (%s): drop %d, want %d", i, s.GetPort().GetProtocol(), got.Drop, tt.want[i])
				}
			}
		})
	}
	t.Run("one HTTPS route name twice", func(t *testing.T) {
		g := gw("g", srv("HTTPS", "", true, "a"), srv("HTTPS", "", true, "b"))
		m := NewServerMerge()
		m.Add(ServerRef{Gateway: g, Index: 0}, 443)
		if got := m.Add(ServerRef{Gateway: g, Index: 1}, 443); got.Drop != DropDuplicateHTTPSRoute {
			t.Errorf("drop %d, want DropDuplicateHTTPSRoute", got.Drop)
		}
	})
}

// The route of a TLS-terminating HTTPS server is named after the server's
// port, port name, Gateway and namespace, and its bind when it has one, as
// istiod names it.
func TestHTTPSRouteName(t *testing.T) {
	gw := &model.Gateway{ObjectMeta: model.ObjectMeta{Namespace: "infra", Name: "edge"}}
	srv := &networking.Server{Port: &networking.Port{Number: 443, Name: "https", Protocol: "HTTPS"}}
	if got, want := HTTPSRouteName(gw, srv), "https.443.https.edge.infra"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	srv.Bind = "10.0.0.1"
	if got, want := HTTPSRouteName(gw, srv), "https.443.https.edge.infra.10.0.0.1"; got != want {
		t.Errorf("with bind: got %s, want %s", got, want)
	}
}
