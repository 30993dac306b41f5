package lint

import (
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// svcAnnotated is a Service with annotations written as a flow mapping.
func svcAnnotated(ns, name, annotations string, ports ...string) string {
	s := service(ns, name, ports...)
	return strings.Replace(s, "namespace: "+ns+"}", "namespace: "+ns+", annotations: {"+annotations+"}}", 1)
}

type registryCase struct {
	name    string
	code    string
	docs    []string
	want    int      // findings of code
	object  string   // the first one's subject, "Kind ns/name"
	line    int      // its line in in.yaml, when not 0
	message []string // fragments of its message
	proxies string   // its proxies, joined; "" when none
}

func runRegistryCases(t *testing.T, tests []registryCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := firstOf(t, tt.code, tt.want, tt.docs)
			if !ok {
				return
			}
			if e, ok := diag.Lookup(tt.code); !ok || d.Severity != e.Severity || d.Name != e.Name {
				t.Errorf("%s %s: not the catalog's name and severity", d.Name, d.Severity)
			}
			if d.Object.String() != tt.object {
				t.Errorf("subject %q, want %q", d.Object, tt.object)
			}
			if d.Object.File != "in.yaml" || d.Object.Line == 0 || (tt.line != 0 && d.Object.Line != tt.line) {
				t.Errorf("position %s:%d, want in.yaml:%d", d.Object.File, d.Object.Line, tt.line)
			}
			for _, m := range tt.message {
				if !strings.Contains(d.Message, m) {
					t.Errorf("message %q lacks %q", d.Message, m)
				}
			}
			if p := strings.Join(d.Proxies, ","); p != tt.proxies {
				t.Errorf("proxies %q, want %q", p, tt.proxies)
			}
		})
	}
}

// TestExportTo covers MC3002 and MC3003.
func TestExportTo(t *testing.T) {
	nss := []string{ns("web"), ns("client")}
	se := func(ns, name, exportTo string) string {
		return obj("ServiceEntry", ns, name, "hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS, exportTo: "+exportTo)
	}
	runRegistryCases(t, []registryCase{
		{name: "MC3002 Service exported only elsewhere", code: "MC3002",
			docs: append(nss, svcAnnotated("web", "api", "networking.istio.io/exportTo: 'client'")),
			want: 1, object: "Service web/api",
			message: []string{"exportTo of Service web/api hides it from its own namespace web", "names only client", `add "."`}},
		{name: "MC3002 ServiceEntry exported to ~", code: "MC3002",
			docs: append(nss, "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: ext, namespace: web}\nspec:\n  hosts: [api.example.com]\n  exportTo:\n  - '~'\n  ports: [{number: 443, name: tls, protocol: TLS}]\n"),
			want: 1, object: "ServiceEntry web/ext", line: 17,
			message: []string{`"~" hides it from every namespace`, `replace "~" with "."`}},
		{name: "MC3002 near miss: own namespace named, by name or dot", code: "MC3002",
			docs: append(nss, svcAnnotated("web", "api", "networking.istio.io/exportTo: 'client, web'"), se("web", "a", "['.', client]"), se("client", "b", "['*']")),
			want: 0},
		{name: "MC3002 near miss: no exportTo", code: "MC3002",
			docs: append(nss, service("web", "api"), se("web", "a", "[]")), want: 0},

		{name: "MC3003 DestinationRule exported to a misspelt namespace", code: "MC3003",
			docs: append(nss, service("web", "api"), obj("DestinationRule", "web", "api", "host: api, exportTo: ['.', clinet, 'nope']")),
			want: 1, object: "DestinationRule web/api",
			message: []string{"names namespaces clinet, nope", "check the spelling"}},
		{name: "MC3003 Service annotation", code: "MC3003",
			docs: append(nss, svcAnnotated("web", "api", "networking.istio.io/exportTo: 'web,frontend'")),
			want: 1, object: "Service web/api", message: []string{"Service web/api names namespace frontend"}},
		{name: "MC3003 near miss: namespaces from objects, anchors, the root and the cluster", code: "MC3003",
			docs: append(nss, obj("VirtualService", "web", "api", "hosts: [api], exportTo: [client, istio-system, team-a, default, mesh-gw], http: [{route: [{destination: {host: api}}]}]"),
				obj("Sidecar", "mesh-gw", "default", "egress: [{hosts: ['*/*']}]"),
				"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: SubnamespaceAnchor\nmetadata: {name: team-a, namespace: web}\n"),
			want: 0},
		{name: "MC3003 near miss: the input declares no namespace", code: "MC3003",
			docs: []string{service("web", "api"), obj("DestinationRule", "web", "api", "host: api, exportTo: [clinet]")},
			want: 0},
	})
}

// TestHostForms covers MC3004 and MC3005.
func TestHostForms(t *testing.T) {
	base := []string{ns("web"), ns("client"), service("web", "api"), service("client", "caller"), deployment("web", "api-v1", "{app: api}"), deployment("client", "caller", "{app: caller}")}
	runRegistryCases(t, []registryCase{
		{name: "MC3004 DestinationRule host name.namespace", code: "MC3004",
			docs: append(base, obj("DestinationRule", "client", "api", "host: api.web, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}")),
			want: 1, object: "DestinationRule client/api",
			message: []string{"names host api.web, which istiod does not expand", "write api.web.svc.cluster.local"}},
		{name: "MC3004 VirtualService host and Sidecar egress host", code: "MC3004",
			docs: append(base, obj("VirtualService", "client", "api", "hosts: [api.web], http: [{route: [{destination: {host: api.web.svc.cluster.local}}]}]"),
				obj("Sidecar", "client", "default", "egress: [{hosts: ['./*', '*/api.web']}]")),
			want: 2, object: "VirtualService client/api", message: []string{"VirtualService client/api names host api.web", "write api.web.svc.cluster.local"}},
		{name: "MC3004 Sidecar egress host keeps its namespace part", code: "MC3004",
			docs: append(base, obj("Sidecar", "client", "default", "egress: [{hosts: ['./*', 'web/api.web']}]")),
			want: 1, object: "Sidecar client/default", message: []string{"names host api.web", "write web/api.web.svc.cluster.local"}},
		{name: "MC3004 near miss: FQDN, external host, wildcard", code: "MC3004",
			docs: append(base, obj("DestinationRule", "client", "api", "host: api.web.svc.cluster.local"),
				obj("VirtualService", "client", "ext", "hosts: [api.example.com, '*.web'], http: [{route: [{destination: {host: api.web.svc.cluster.local}}]}]")),
			want: 0},
		{name: "MC3004 near miss: a destination is MC5002's", code: "MC3004",
			docs: append(base, obj("VirtualService", "web", "api", "hosts: [api], http: [{route: [{destination: {host: api.web}}]}]")),
			want: 0},

		{name: "MC3005 DestinationRule in another namespace", code: "MC3005",
			docs: append(base, obj("DestinationRule", "client", "api", "host: api, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}")),
			want: 1, object: "DestinationRule client/api",
			message: []string{"expands in the object's own namespace to api.client.svc.cluster.local", "a Service named api exists in namespace web", "write api.web.svc.cluster.local"}},
		{name: "MC3005 VirtualService host, two candidates", code: "MC3005",
			docs: append(base, service("client", "other"), service("istio-system", "api"),
				obj("VirtualService", "client", "api", "hosts: [api], http: [{route: [{destination: {host: api.web.svc.cluster.local}}]}]")),
			want: 1, object: "VirtualService client/api",
			message: []string{"exists in namespaces istio-system, web", "api.istio-system.svc.cluster.local, api.web.svc.cluster.local"}},
		{name: "MC3005 near miss: the input holds no Service of the object's namespace", code: "MC3005",
			docs: []string{service("web", "api"), obj("DestinationRule", "client", "api", "host: api")},
			want: 0},
		{name: "MC3005 near miss: the service is in the object's namespace", code: "MC3005",
			docs: append(base, service("client", "api"), obj("DestinationRule", "client", "api", "host: api")),
			want: 0},
		{name: "MC3005 near miss: no service of that name anywhere", code: "MC3005",
			docs: append(base, obj("DestinationRule", "client", "db", "host: db")),
			want: 0},
		{name: "MC3005 near miss: an HNC template, judged in its copies' namespaces", code: "MC3005",
			docs: []string{ns("acme"), service("team-a", "api"),
				"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: SubnamespaceAnchor\nmetadata: {name: team-a, namespace: acme}\n",
				"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{group: networking.istio.io, resource: destinationrules, mode: Propagate}]}\n",
				obj("DestinationRule", "acme", "api", "host: api")},
			want: 0},
		{name: "MC3005 near miss: a destination is MC5002's", code: "MC3005",
			docs: append(base, obj("VirtualService", "client", "to-api", "hosts: [api.web.svc.cluster.local], http: [{route: [{destination: {host: api}}]}]")),
			want: 0},
	})
}

// TestConfigHostPath: a config host's path, built only for a finding,
// is where its object writes it.
func TestConfigHostPath(t *testing.T) {
	tests := []struct {
		kind string
		i, j int
		want string
	}{
		{"VirtualService", 2, 0, "spec.hosts[2]"},
		{"DestinationRule", 0, 0, "spec.host"},
		{"Sidecar", 1, 3, "spec.egress[1].hosts[3]"},
	}
	for _, tt := range tests {
		c := configHost{obj: &model.ObjectMeta{Kind: tt.kind}, i: tt.i, j: tt.j}
		if got := c.path().String(); got != tt.want {
			t.Errorf("%s %d %d: path %s, want %s", tt.kind, tt.i, tt.j, got, tt.want)
		}
	}
}

// TestIsName: addresses and wildcards are not names; a name may start
// with a digit.
func TestIsName(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"api", true},
		{"api.web", true},
		{"1password.example.com", true},
		{"10.0.0.1", false},
		{"::1", false},
		{"fe80::1%eth0", false},
		{"*.example.com", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isName(tt.host); got != tt.want {
			t.Errorf("isName(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

// TestPorts covers MC3006 to MC3010.
func TestPorts(t *testing.T) {
	web := []string{ns("web"), ns("client"), deployment("web", "api-v1", "{app: api, version: v1}"), deployment("client", "caller", "{app: caller}")}
	externalName := func(name, ports string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: " + name + ", namespace: web}\nspec: {type: ExternalName, externalName: db.example.com, ports: [" + ports + "]}\n"
	}
	svcSel := func(name, selector string, ports ...string) string {
		return strings.Replace(service("web", name, ports...), "selector: {app: "+name+"}", "selector: "+selector, 1)
	}
	se := func(ns, name, exportTo, protocol string, extra ...string) string {
		return obj("ServiceEntry", ns, name, "hosts: [db.example.com], ports: [{number: 5432, name: db, protocol: "+protocol+"}], resolution: DNS, exportTo: "+exportTo, extra...)
	}
	runRegistryCases(t, []registryCase{
		{name: "MC3006 unnamed and unprefixed ports", code: "MC3006",
			docs: append(web, service("web", "api", "{port: 8080}", "{port: 9090, name: metrics}", "{port: 80, name: http-web}")),
			want: 2, object: "Service web/api",
			message: []string{`port 8080 (name "") of Service web/api selects no protocol`, "http-8080"}},
		{name: "MC3006 a protocol past the first word is proposed", code: "MC3006",
			docs: append(web, service("web", "jaeger", "{port: 14250, name: jaeger-collector-grpc}", "{port: 8080, name: ui-grpc-web}")),
			want: 2, object: "Service web/jaeger",
			message: []string{"istiod reads the protocol only from the name's first word; name it grpc-jaeger-collector or set appProtocol: grpc"}},
		{name: "MC3006 near miss: named, appProtocol, TCP by number, UDP, control plane, system namespace", code: "MC3006",
			docs: append(web, service("web", "api", "{port: 8080, name: grpc-api}", "{port: 9090, name: metrics, appProtocol: http}", "{port: 3306}", "{port: 8125, protocol: UDP}"),
				"apiVersion: v1\nkind: Service\nmetadata: {name: istiod, namespace: istio-system, labels: {istio: pilot}}\nspec: {ports: [{port: 15010}]}\n",
				service("kube-system", "metrics-server", "{port: 443}"),
				externalName("db", "{port: 5432, name: pg}")),
			want: 0},

		{name: "MC3007 ExternalName port named tcp", code: "MC3007",
			docs: append(web, externalName("db", "{port: 5432, name: tcp}")),
			want: 1, object: "Service web/db",
			message: []string{`port 5432 (name "tcp") of ExternalName Service web/db is plain tcp`, "forwarded to db.example.com"}},
		{name: "MC3007 ExternalName port selecting nothing", code: "MC3007",
			docs: append(web, externalName("db", "{port: 5432, name: postgres}")),
			want: 1, object: "Service web/db", message: []string{"selects no protocol"}},
		{name: "MC3007 near miss: tcp-prefixed and tls ports", code: "MC3007",
			docs: append(web, externalName("db", "{port: 5432, name: tcp-pg}, {port: 443, name: tls}")),
			want: 0},

		{name: "MC3008 two Services, one port, http and tcp", code: "MC3008",
			docs: append(web, svcSel("api", "{app: api}", "{port: 8080, name: http}"), svcSel("api-raw", "{version: v1}", "{port: 8080, name: tcp-raw}")),
			want: 1, object: "Service web/api-raw",
			message: []string{"Services web/api, web/api-raw select workload web/api-v1 and declare port 8080 with different protocols (HTTP in web/api; TCP in web/api-raw)"},
			proxies: "web/api-v1"},
		{name: "MC3008 near miss: agreeing protocols; one Service's own UDP and TCP", code: "MC3008",
			docs: append(web, svcSel("api", "{app: api}", "{port: 8080, name: http}", "{port: 53, name: dns, protocol: UDP}", "{port: 53, name: dns-tcp}"),
				svcSel("api-raw", "{version: v1}", "{port: 8080, name: http-alt}")),
			want: 0},
		{name: "MC3008 near miss: no workload in the input", code: "MC3008",
			docs: []string{ns("web"), svcSel("api", "{app: api}", "{port: 8080, name: http}"), svcSel("api-raw", "{version: v1}", "{port: 8080, name: tcp-raw}")},
			want: 0},

		{name: "MC3009 two Services, one targetPort, two ports", code: "MC3009",
			docs: append(web, svcSel("api", "{app: api}", "{port: 80, name: http, targetPort: 8080}"), svcSel("api-alt", "{version: v1}", "{port: 8080, name: http}")),
			want: 1, object: "Service web/api-alt",
			message: []string{"Services web/api, web/api-alt select workload web/api-v1 and send different service ports to workload port 8080 (80 in web/api; 8080 in web/api-alt)"},
			proxies: "web/api-v1"},
		{name: "MC3009 named targetPort resolved on the workload", code: "MC3009",
			docs: []string{ns("web"), svcSel("api", "{app: api}", "{port: 80, name: http, targetPort: web}"), svcSel("api-alt", "{app: api}", "{port: 8080, name: http}"),
				strings.Replace(deployment("web", "api-v1", "{app: api}"), "image: x}", "image: x, ports: [{name: web, containerPort: 8080}]}", 1)},
			want: 1, object: "Service web/api-alt", message: []string{"to workload port 8080 (80 in web/api; 8080 in web/api-alt)"}, proxies: "web/api-v1"},
		{name: "MC3009 near miss: same port for the same targetPort", code: "MC3009",
			docs: append(web, svcSel("api", "{app: api}", "{port: 80, name: http, targetPort: 8080}"), svcSel("api-alt", "{version: v1}", "{port: 80, name: http, targetPort: 8080}", "{port: 9090, name: http-admin}")),
			want: 0},

		{name: "MC3010 two ServiceEntries disagree", code: "MC3010",
			docs: append(web, se("web", "db-a", "['*']", "TCP", at(1)), se("client", "db-b", "['*']", "HTTP", at(2))),
			want: 1, object: "ServiceEntry client/db-b",
			message: []string{"host db.example.com port 5432 is declared with different protocols (HTTP in client/db-b; TCP in web/db-a)"}},
		{name: "MC3010 ServiceEntry against a Service", code: "MC3010",
			docs: append(web, service("web", "api", "{port: 8080, name: http}"),
				obj("ServiceEntry", "client", "api", "hosts: [api.web.svc.cluster.local], ports: [{number: 8080, name: tcp, protocol: TCP}], resolution: DNS")),
			want: 1, object: "ServiceEntry client/api", message: []string{"(HTTP in web/api; TCP in client/api)"}},
		{name: "MC3010 three declarations, one sniffed", code: "MC3010",
			docs: append(web, se("web", "db-a", "['*']", "TCP", at(1)), se("client", "db-b", "['*']", "HTTP", at(2)), se("client", "db-c", "['*']", "''", at(3))),
			want: 1, object: "ServiceEntry client/db-c",
			message: []string{"(HTTP in client/db-b; TCP in web/db-a; none (sniffed) in client/db-c)", "proxies that see these declarations use one of them"}},
		{name: "MC3010 near miss: exportTo keeps them apart", code: "MC3010",
			docs: append(web, se("web", "db-a", "['.']", "TCP"), se("client", "db-b", "['.']", "HTTP")),
			want: 0},
		{name: "MC3010 near miss: same protocol, different case", code: "MC3010",
			docs: append(web, se("web", "db-a", "['*']", "TCP"), se("client", "db-b", "['*']", "tcp")),
			want: 0},
	})
}

func TestImpliedProtocol(t *testing.T) {
	for name, want := range map[string][2]string{
		"jaeger-collector-grpc": {"grpc", "jaeger-collector"},
		"ui-grpc-web":           {"grpc-web", "ui"},
		"Metrics-HTTP":          {"http", "metrics"},
		"dns-udp":               {"", ""},
		"metrics":               {"", ""},
		"httptest":              {"", ""},
		"":                      {"", ""},
	} {
		if said, rest := impliedProtocol(name); said != want[0] || rest != want[1] {
			t.Errorf("impliedProtocol(%q) = %q, %q; want %q, %q", name, said, rest, want[0], want[1])
		}
	}
}
