package lint

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load/loadtest"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// run loads docs, resolves them and runs every analyzer.
func run(t *testing.T, opts Options, docs ...string) []diag.Diagnostic {
	t.Helper()
	objs := loadtest.Objects(t, docs...)
	opts.undeclared = undeclared(t)
	ds := analyze(t, resolvetest.Resolve(objs), Analyzers(), opts)
	uniqueKeys(t, ds)
	return ds
}

// analyze runs analyzers over m as a compile does.
func analyze(tb testing.TB, m *resolve.Mesh, analyzers []*Analyzer, opts Options) []diag.Diagnostic {
	tb.Helper()
	ds, err := Run(context.Background(), m, analyzers, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

// undeclared fails t when an analyzer reads a fact it does not require.
func undeclared(t *testing.T) func(code, fact string) {
	return func(code, fact string) { t.Errorf("%s reads fact %s, which it does not require", code, fact) }
}

// uniqueKeys fails t when two findings share a key: every test's input is
// also a test of the analyzers' discriminators.
func uniqueKeys(t *testing.T, ds []diag.Diagnostic) {
	t.Helper()
	seen := map[string]string{}
	for _, d := range ds {
		if prev, dup := seen[d.Key]; dup {
			t.Errorf("key %s for two findings:\n  %s\n  %s", d.Key, prev, d.Message)
		}
		seen[d.Key] = d.Message
	}
}

func ns(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {istio-injection: enabled}}\n", name)
}

func service(ns, name string, ports ...string) string {
	if len(ports) == 0 {
		ports = []string{"{port: 80, name: http}"}
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec: {selector: {app: %s}, ports: [%s]}\n", name, ns, name, strings.Join(ports, ", "))
}

func deployment(ns, name string, labels string) string {
	return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: %s}\nspec:\n  selector: {matchLabels: %s}\n  template:\n    metadata: {labels: %s}\n    spec: {containers: [{name: app, image: x}]}\n", name, ns, labels, labels)
}

func obj(kind, ns, name, spec string, extraMeta ...string) string {
	meta := fmt.Sprintf("name: %s, namespace: %s", name, ns)
	if len(extraMeta) > 0 {
		meta += ", " + strings.Join(extraMeta, ", ")
	}
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: %s\nmetadata: {%s}\nspec: {%s}\n", kind, meta, spec)
}

func at(sec int) string { return fmt.Sprintf("creationTimestamp: '2024-01-01T00:00:%02dZ'", sec) }

// codes lists the diagnostics of one code.
func only(ds []diag.Diagnostic, code string) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, d := range ds {
		if d.Code == code {
			out = append(out, d)
		}
	}
	return out
}

// firstOf runs every analyzer over docs, checks that code fires want
// times, and returns the first finding, which must carry its position;
// ok is false when want is 0.
func firstOf(t *testing.T, code string, want int, docs []string) (d diag.Diagnostic, ok bool) {
	t.Helper()
	all := run(t, Options{}, docs...)
	got := only(all, code)
	if len(got) != want {
		t.Fatalf("%d %s findings, want %d:\n%s", len(got), code, want, describe(all))
	}
	if want == 0 {
		return diag.Diagnostic{}, false
	}
	if d := got[0]; d.Object.File != "in.yaml" || d.Object.Line == 0 || d.Object.Name == "" {
		t.Errorf("finding lacks its subject's position: %+v", d.Object)
	}
	return got[0], true
}

func describe(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "  %s %s %s:%d %s proxies=%v\n", d.Code, d.Object, d.Object.File, d.Object.Line, d.Message, d.Proxies)
	}
	return b.String()
}

// TestAnalyzers has, for each code, a case where it fires and a near miss
// where it must not.
func TestAnalyzers(t *testing.T) {
	web := []string{ns("web"), ns("client"), service("web", "api"), deployment("web", "api-v1", "{app: api, version: v1}"), deployment("client", "caller", "{app: caller}")}
	tests := []struct {
		name    string
		code    string
		docs    []string
		want    int    // diagnostics of code
		message string // fragment of the first one's message
		proxies string // fragment of its proxies, joined
	}{
		{"MC3001 same external host in two namespaces", "MC3001", append(web,
			obj("ServiceEntry", "web", "ext-a", "hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS"),
			obj("ServiceEntry", "client", "ext-b", "hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS")),
			2, "api.example.com is defined in web and in client; proxies use the one in web (the proxy's own namespace wins)", "web/api-v1"},
		{"MC3001 near miss: one namespace", "MC3001", append(web,
			obj("ServiceEntry", "web", "ext-a", "hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS")),
			0, "", ""},

		{"MC4001 client-namespace DR shadows the service's", "MC4001", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}]"),
			obj("DestinationRule", "client", "api-override", "host: api.web.svc.cluster.local, trafficPolicy: {connectionPool: {tcp: {maxConnections: 5}}}")),
			1, "web/api is shadowed for proxies in namespace client: client/api-override wins the lookup (proxy namespace)", ""},
		{"MC4001 near miss: DR private to its own namespace", "MC4001", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}]"),
			obj("DestinationRule", "client", "api-override", "host: api.web.svc.cluster.local, exportTo: [other]")),
			0, "", ""},

		{"MC4002 later trafficPolicy dropped", "MC4002", append(web,
			obj("DestinationRule", "web", "api-a", "host: api, trafficPolicy: {loadBalancer: {simple: ROUND_ROBIN}}", at(1)),
			obj("DestinationRule", "web", "api-b", "host: api, trafficPolicy: {loadBalancer: {simple: RANDOM}}", at(2))),
			1, "the trafficPolicy of web/api-b is ignored", ""},
		{"MC4002 duplicate subset", "MC4002", append(web,
			obj("DestinationRule", "web", "api-a", "host: api, subsets: [{name: v1, labels: {version: v1}}]", at(1)),
			obj("DestinationRule", "web", "api-b", "host: api, subsets: [{name: v1, labels: {version: v9}}]", at(2))),
			1, `subset "v1" of web/api-b is ignored`, ""},
		{"MC4002 near miss: disjoint subsets, one policy", "MC4002", append(web,
			obj("DestinationRule", "web", "api-a", "host: api, subsets: [{name: v1}], trafficPolicy: {loadBalancer: {simple: RANDOM}}", at(1)),
			obj("DestinationRule", "web", "api-b", "host: api, subsets: [{name: v2}]", at(2))),
			0, "", ""},

		{"MC4003 client DR without the subset", "MC4003", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]"),
			obj("DestinationRule", "client", "api-override", "host: api.web.svc.cluster.local, subsets: [{name: v1, labels: {version: v1}}]"),
			obj("VirtualService", "web", "api", "hosts: [api], http: [{route: [{destination: {host: api, subset: v2}}]}]")),
			1, `routes to subset "v2" of api.web.svc.cluster.local, but the DestinationRule this proxy uses, client/api-override (proxy namespace), has no such subset`, "client/caller"},
		{"MC4003 a selector rule picks some proxies of the namespace", "MC4003", append(web,
			deployment("client", "other", "{app: other}"),
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]"),
			obj("DestinationRule", "client", "api-caller", "host: api.web.svc.cluster.local, workloadSelector: {matchLabels: {app: caller}}, subsets: [{name: v1, labels: {version: v1}}]"),
			obj("DestinationRule", "client", "api-all", "host: api.web.svc.cluster.local, subsets: [{name: v2, labels: {version: v2}}]"),
			obj("VirtualService", "web", "api", "hosts: [api], http: [{route: [{destination: {host: api, subset: v2}}]}]")),
			1, `routes to subset "v2" of api.web.svc.cluster.local, but the DestinationRule this proxy uses, client/api-caller`, "client/caller"},
		{"MC4003 near miss: every namespace's DR has the subset", "MC4003", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]"),
			obj("VirtualService", "web", "api", "hosts: [api], http: [{route: [{destination: {host: api, subset: v2}}]}]")),
			0, "", ""},

		{"MC5001 two VirtualServices for one host", "MC5001", append(web,
			obj("VirtualService", "web", "api-a", "hosts: [api], http: [{route: [{destination: {host: api}}], timeout: 1s}]", at(1)),
			obj("VirtualService", "client", "api-b", "hosts: [api.web.svc.cluster.local], http: [{route: [{destination: {host: api.web.svc.cluster.local}}], timeout: 2s}]", at(2))),
			1, "client/api-b and web/api-a both claim host api.web.svc.cluster.local", "client/caller"},
		{"MC5001 three VirtualServices for two hosts: one finding", "MC5001", append(web,
			obj("VirtualService", "web", "first", "hosts: [api, a.example.com], http: [{route: [{destination: {host: api}}]}]", at(1)),
			obj("VirtualService", "web", "second", "hosts: [a.example.com, api], http: [{route: [{destination: {host: api}}]}]", at(2)),
			obj("VirtualService", "web", "third", "hosts: [api, a.example.com], http: [{route: [{destination: {host: api}}]}]", at(3))),
			1, "3 VirtualServices claim hosts api.web.svc.cluster.local, a.example.com for the same proxies; sidecars never merge VirtualServices, so only web/first is used and the routes of web/second, web/third are ignored", "client/caller"},
		{"MC5001 near miss: a consumer's mesh route overrides the producer's", "MC5001", append(web,
			meshHTTPRoute("web", "producer", "api"), meshHTTPRoute("client", "consumer", "api")),
			0, "", ""},
		{"MC5001 a mesh route hides a VirtualService in its namespace, the VirtualService it elsewhere", "MC5001", append(web,
			obj("VirtualService", "web", "a-api", "hosts: [api], http: [{route: [{destination: {host: api}}]}]"),
			meshHTTPRoute("web", "producer", "api")),
			2, "web/a-api and web/web~api.web.svc.cluster.local both claim host api.web.svc.cluster.local", "web/api-v1"},
		{"MC5001 a consumer's mesh route hides a VirtualService in its namespace only", "MC5001", append(web,
			obj("VirtualService", "web", "a-api", "hosts: [api], http: [{route: [{destination: {host: api}}]}]"),
			meshHTTPRoute("client", "consumer", "api")),
			1, "web/a-api and client/client~api.web.svc.cluster.local both claim host api.web.svc.cluster.local", "client/caller"},
		{"MC5001 near miss: exportTo keeps them apart", "MC5001", append(web,
			obj("VirtualService", "web", "api-a", "hosts: [api], exportTo: ['.'], http: [{route: [{destination: {host: api}}]}]", at(1)),
			obj("VirtualService", "client", "api-b", "hosts: [api.web.svc.cluster.local], exportTo: ['.'], http: [{route: [{destination: {host: api.web.svc.cluster.local}}]}]", at(2))),
			0, "", ""},

		{"MC5002 dotted short host", "MC5002", append(web,
			obj("VirtualService", "web", "api", "hosts: [api], http: [{route: [{destination: {host: api.web}}]}]")),
			1, "routes to api.web, which these proxies cannot reach", "web/api-v1"},
		{"MC5002 hidden by exportTo", "MC5002", append(web,
			service("web", "secret"),
			obj("VirtualService", "client", "to-secret", "hosts: [secret.web.svc.cluster.local], http: [{route: [{destination: {host: secret.web.svc.cluster.local}}]}]"),
			"apiVersion: v1\nkind: Service\nmetadata: {name: hidden, namespace: web, annotations: {networking.istio.io/exportTo: '.'}}\nspec: {ports: [{port: 80, name: http}]}\n",
			obj("VirtualService", "client", "to-hidden", "hosts: [api.web.svc.cluster.local], http: [{route: [{destination: {host: hidden.web.svc.cluster.local}}]}]")),
			1, "exportTo hides them", "client/caller"},
		{"MC4003 a delegate no VirtualService names, judged from its namespace", "MC4003", append(web,
			obj("DestinationRule", "web", "api", "host: api, subsets: [{name: v1, labels: {version: v1}}]"),
			obj("VirtualService", "web", "orphan", "http: [{route: [{destination: {host: api, subset: v9}}]}]")),
			1, `web/orphan routes to subset "v9" of api.web.svc.cluster.local, but the DestinationRule its namespace uses, web/api (proxy namespace), has no such subset (it has v1)`, ""},
		{"MC5002 a delegate no VirtualService names, judged from its namespace", "MC5002", append(web,
			obj("VirtualService", "web", "orphan", "http: [{route: [{destination: {host: nowhere}}]}]")),
			1, "web/orphan routes to nowhere.web.svc.cluster.local, which its namespace cannot reach", ""},
		{"MC5002 near miss: a VirtualService for a host the namespace cannot see either", "MC5002", append(web,
			"apiVersion: v1\nkind: Service\nmetadata: {name: hidden, namespace: web, annotations: {networking.istio.io/exportTo: '.'}}\nspec: {ports: [{port: 80, name: http}]}\n",
			obj("VirtualService", "web", "to-hidden", "hosts: [hidden], http: [{route: [{destination: {host: hidden}}]}]")),
			0, "", ""},
		{"MC5002 near miss: a VirtualService for a service no namespace has", "MC5002", append(web,
			"apiVersion: v1\nkind: Service\nmetadata: {name: private, namespace: web, annotations: {networking.istio.io/exportTo: 'client'}}\nspec: {ports: [{port: 80, name: http}]}\n",
			obj("VirtualService", "client", "private", "hosts: [private], http: [{route: [{destination: {host: private.web.svc.cluster.local}}]}]")),
			0, "", ""},
		{"MC5002 near miss: hidden from namespaces that cannot be shown to call the VirtualService's host", "MC5002", []string{
			"apiVersion: v1\nkind: Service\nmetadata: {name: details, namespace: shop, annotations: {networking.istio.io/exportTo: 'team'}}\nspec: {ports: [{port: 80, name: http}]}\n",
			obj("VirtualService", "team", "details", "hosts: [details], http: [{route: [{destination: {host: details.shop.svc.cluster.local}}]}]"),
			obj("DestinationRule", "other", "x", "host: x")},
			0, "", ""},
		{"MC5002 near miss: short name expands in the VirtualService's namespace", "MC5002", append(web,
			obj("VirtualService", "web", "api", "hosts: [api], http: [{route: [{destination: {host: api}}]}]")),
			0, "", ""},

		{"MC6001 two namespace defaults", "MC6001", append(web,
			obj("Sidecar", "web", "a", "egress: [{hosts: ['./*']}]", at(1)),
			obj("Sidecar", "web", "b", "egress: [{hosts: ['*/*']}]", at(2))),
			1, "only the oldest, a, takes effect and b is ignored", ""},
		{"MC6001 near miss: one default and one with a selector", "MC6001", append(web,
			obj("Sidecar", "web", "a", "egress: [{hosts: ['./*']}]", at(1)),
			obj("Sidecar", "web", "b", "workloadSelector: {labels: {app: api}}, egress: [{hosts: ['*/*']}]", at(2))),
			0, "", ""},

		{"MC6002 two selectors match one Deployment", "MC6002", append(web,
			obj("Sidecar", "web", "by-app", "workloadSelector: {labels: {app: api}}, egress: [{hosts: ['./*']}]", at(1)),
			obj("Sidecar", "web", "by-version", "workloadSelector: {labels: {version: v1}}, egress: [{hosts: ['*/*']}]", at(2))),
			1, "both select workload web/api-v1; only the oldest, by-app, applies", "web/api-v1"},
		{"MC6002 workloads without injection are judged too", "MC6002", []string{deployment("shop", "api", "{app: api, version: v1}"),
			obj("Sidecar", "shop", "by-app", "workloadSelector: {labels: {app: api}}, egress: [{hosts: ['./*']}]", at(1)),
			obj("Sidecar", "shop", "by-version", "workloadSelector: {labels: {version: v1}}, egress: [{hosts: ['*/*']}]", at(2))},
			1, "both select workload shop/api; only the oldest, by-app, applies", "shop/api"},
		{"MC6002 near miss: a namespace the injector skips", "MC6002", []string{deployment("kube-system", "api", "{app: api, version: v1}"),
			obj("Sidecar", "kube-system", "by-app", "workloadSelector: {labels: {app: api}}, egress: [{hosts: ['./*']}]", at(1)),
			obj("Sidecar", "kube-system", "by-version", "workloadSelector: {labels: {version: v1}}, egress: [{hosts: ['*/*']}]", at(2))},
			0, "", ""},
		{"MC6002 near miss: selectors for different workloads", "MC6002", append(web,
			obj("Sidecar", "web", "by-app", "workloadSelector: {labels: {app: api}}, egress: [{hosts: ['./*']}]", at(1)),
			obj("Sidecar", "web", "by-version", "workloadSelector: {labels: {version: v2}}, egress: [{hosts: ['*/*']}]", at(2))),
			0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := firstOf(t, tt.code, tt.want, tt.docs)
			if !ok {
				return
			}
			if !strings.Contains(d.Message, tt.message) || !strings.Contains(strings.Join(d.Proxies, ","), tt.proxies) {
				t.Errorf("got:\n%s\nwant message containing %q and proxies containing %q", describe([]diag.Diagnostic{d}), tt.message, tt.proxies)
			}
			if d.Object.File != "in.yaml" || d.Object.Line == 0 || d.Object.Name == "" {
				t.Errorf("diagnostic lacks its subject's position: %+v", d.Object)
			}
		})
	}
}

// TestNoInjectedWorkloads: workloads without a sidecar anywhere are one
// info finding naming each namespace and what would inject it; any
// proxy, or no workload at all, is a near miss.
func TestNoInjectedWorkloads(t *testing.T) {
	plainNS := "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"
	revNS := "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {istio.io/rev: 1-24}}\n"
	for _, tc := range []struct {
		name string
		docs []string
		want []string // fragments of the one finding; none: no finding
	}{
		{"no label", []string{plainNS, deployment("shop", "web", "{app: web}"), deployment("shop", "db", "{app: db}")},
			[]string{"shop (2 workloads) has no injection label", "pass --inject-namespace shop"}},
		{"revision not installed", []string{revNS, deployment("prod", "web", "{app: web}")},
			[]string{"prod (1 workload) is labelled istio.io/rev=1-24, a revision not installed", "pass --revision 1-24"}},
		{"injected", []string{ns("shop"), deployment("shop", "web", "{app: web}")}, nil},
		{"no workloads", []string{plainNS, service("shop", "web")}, nil},
	} {
		got := only(run(t, Options{}, tc.docs...), "MC6006")
		if len(tc.want) == 0 {
			if len(got) > 0 {
				t.Errorf("%s: unexpected\n%s", tc.name, describe(got))
			}
			continue
		}
		if len(got) != 1 || got[0].Severity != diag.Info {
			t.Fatalf("%s: want one info finding, got\n%s", tc.name, describe(got))
		}
		for _, w := range tc.want {
			if !strings.Contains(got[0].Message, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got[0].Message, w)
			}
		}
	}
}

func TestSelect(t *testing.T) {
	got, err := Select([]string{"MC7001", "AmbiguousHost", "IST0109"})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, a := range got {
		codes = append(codes, a.Entry.Code)
	}
	if want := "MC3001 MC5001 MC7001"; strings.Join(codes, " ") != want {
		t.Errorf("Select = %v, want %s", codes, want)
	}
	for _, tt := range []struct{ code, err string }{
		{"MC9999", `no diagnostic "MC9999"`},
		{"MC1001", "MC1001 InvalidYAML is not an analyzer's"},
		{"MC8001", "MC8001 ProxyConfigTooLarge is not an analyzer's"},
	} {
		if _, err := Select([]string{tt.code}); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Select(%s): %v, want %q", tt.code, err, tt.err)
		}
	}
}

// TestTiming: with Timing set, each fact the chosen analyzers require is
// computed and timed once, before them, and each analyzer is timed; facts
// nobody chosen requires are not computed.
func TestTiming(t *testing.T) {
	docs := []string{ns("shop"), service("shop", "web"), deployment("shop", "web", "{app: web}")}
	m := resolvetest.Resolve(loadtest.Objects(t, docs...))
	for _, tt := range []struct {
		codes []string
		want  []string
	}{
		{[]string{"MC3001"}, []string{"MC3001 AmbiguousHost"}},
		{[]string{"MC7001", "MC6004"}, []string{"fact workloads", "fact selectors", "fact gateways", "fact outbound-listeners",
			"MC6004 SelectorMatchesNoWorkload", "MC7001 ListenerConflict"}},
	} {
		as, err := Select(tt.codes)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		analyze(t, m, as, Options{undeclared: undeclared(t), Timing: func(what string, d time.Duration) {
			if d < 0 {
				t.Errorf("%s took %v", what, d)
			}
			got = append(got, what)
		}})
		if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
			t.Errorf("%v timed %q, want %q", tt.codes, got, tt.want)
		}
	}
	// A cancelled run times nothing and returns the cause.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	timed := 0
	if _, err := Run(ctx, m, Analyzers(), Options{Timing: func(string, time.Duration) { timed++ }}); err == nil || timed != 0 {
		t.Errorf("cancelled: err %v, %d timed", err, timed)
	}
}

// TestReportKeys: Report keys a finding by its message's identifying
// arguments, adds the field when the message has none, and marks a
// message of another entry than the analyzer's.
func TestReportKeys(t *testing.T) {
	vs := &model.ObjectMeta{Kind: "VirtualService", Namespace: "shop", Name: "web"}
	a := &Analyzer{Entry: diag.DestinationHostNotFound, Run: func(p *Pass) {
		p.Report(vs, model.ParsePath("spec.http[0].route[0].destination.host"), diag.DestinationUnreachable, "shop/web", "api", "these proxies", "why")
		p.Report(vs, model.ParsePath("spec.hosts"), diag.SecondDefaultSidecar, "shop", "a", "b")
	}}
	ds := analyze(t, resolvetest.Resolve(nil), []*Analyzer{a}, Options{})
	want := []string{
		"MC5002/VirtualService/shop/web/host=api/field=spec.http[0].route[0].destination.host",
		"MC6001/VirtualService/shop/web/field=spec.hosts",
	}
	if got := diag.Keys(ds); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("keys %q, want %q", got, want)
	}
	if !strings.HasSuffix(ds[1].Message, "%!(WRONGENTRY MC6001)") || strings.Contains(ds[0].Message, "%!") {
		t.Errorf("messages %q, %q", ds[0].Message, ds[1].Message)
	}
}

// meshHTTPRoute is a mesh (GAMMA) HTTPRoute of ns for Service web/svc.
func meshHTTPRoute(ns, name, svc string) string {
	return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: " + name + ", namespace: " + ns + "}\n" +
		"spec: {parentRefs: [{group: '', kind: Service, name: " + svc + ", namespace: web}], rules: [{backendRefs: [{name: " + svc + ", namespace: web, port: 80}]}]}\n"
}
