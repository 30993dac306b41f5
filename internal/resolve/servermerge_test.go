package resolve

import (
	"slices"
	"strconv"
	"strings"
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

// TestServerMergeGroups: kept servers are grouped as istiod groups them,
// by port, protocol as written and bind, groups in the order they start;
// HTTP servers share route http.<port>[.<bind>], and a server starting a
// group anew takes its route name over.
func TestServerMergeGroups(t *testing.T) {
	type srv struct {
		proto, bind string
		tls         bool
	}
	tests := []struct {
		name    string
		servers []srv // server i of one Gateway "g", host h<i>
		groups  []string
		routes  []string
	}{
		{"TLS groups by protocol, then HTTP",
			[]srv{{"HTTPS", "", true}, {"TLS", "", true}, {"HTTPS", "", true}, {"HTTP", "", false}},
			[]string{"HTTPS@ https.80.p0.g.ns [0 2]", "TLS@ [1]", "HTTP@ http.80 [3]"},
			[]string{"https.80.p0.g.ns [0]", "https.80.p2.g.ns [2]", "http.80 [3]"}},
		{"one listener per bind",
			[]srv{{"HTTP", "10.0.0.1", false}, {"HTTP", "", false}, {"HTTP", "10.0.0.1", false}, {"HTTP", "", false}},
			[]string{"HTTP@10.0.0.1 http.80.10.0.0.1 [0 2]", "HTTP@ http.80 [1 3]"},
			[]string{"http.80.10.0.0.1 [0 2]", "http.80 [1 3]"}},
		{"a respelt protocol after another bind starts anew",
			[]srv{{"HTTP", "10.0.0.1", false}, {"HTTP", "10.0.0.2", false}, {"HTTP2", "10.0.0.1", false}},
			[]string{"HTTP@10.0.0.1 http.80.10.0.0.1 [0]", "HTTP@10.0.0.2 http.80.10.0.0.2 [1]", "HTTP2@10.0.0.1 http.80.10.0.0.1 [2]"},
			[]string{"http.80.10.0.0.1 [2]", "http.80.10.0.0.2 [1]"}},
		{"HTTPS on a bound listener of its own",
			[]srv{{"HTTP", "", false}, {"HTTPS", "10.0.0.1", true}},
			[]string{"HTTP@ http.80 [0]", "HTTPS@10.0.0.1 https.80.p1.g.ns.10.0.0.1 [1]"},
			[]string{"http.80 [0]", "https.80.p1.g.ns.10.0.0.1 [1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &model.Gateway{ObjectMeta: model.ObjectMeta{Namespace: "ns", Name: "g"}, Spec: &networking.Gateway{}}
			for i, s := range tt.servers {
				ns := &networking.Server{Port: &networking.Port{Number: 80, Name: "p" + strconv.Itoa(i), Protocol: s.proto}, Hosts: []string{"h" + strconv.Itoa(i)}, Bind: s.bind}
				if s.tls {
					ns.Tls = &networking.ServerTLSSettings{Mode: networking.ServerTLSSettings_SIMPLE, CredentialName: "c"}
				}
				g.Spec.Servers = append(g.Spec.Servers, ns)
			}
			m := NewServerMerge()
			for i := range tt.servers {
				if v := m.Add(ServerRef{Gateway: g, Index: i}, 80); v.Drop != DropNone {
					t.Fatalf("server %d dropped: %d", i, v.Drop)
				}
			}
			indices := func(refs []ServerRef) string {
				var out []string
				for _, r := range refs {
					out = append(out, strconv.Itoa(r.Index))
				}
				return "[" + strings.Join(out, " ") + "]"
			}
			var groups []string
			for _, gr := range m.Groups() {
				groups = append(groups, strings.Join(strings.Fields(gr.Protocol+"@"+gr.Bind+" "+gr.Route+" "+indices(gr.Servers)), " "))
			}
			if !slices.Equal(groups, tt.groups) {
				t.Errorf("groups %q, want %q", groups, tt.groups)
			}
			var routes []string
			for _, r := range m.Routes() {
				routes = append(routes, r+" "+indices(m.RouteServers(r)))
			}
			if !slices.Equal(routes, tt.routes) {
				t.Errorf("routes %q, want %q", routes, tt.routes)
			}
		})
	}
}
