package resolve

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
)

// dr writes a DestinationRule; extra is more spec in YAML flow form.
func dr(ns, name, h string, exportTo []string, subsets []string, extra string) string {
	var subs []string
	for _, s := range subsets {
		subs = append(subs, fmt.Sprintf("{name: %s}", s))
	}
	spec := fmt.Sprintf("host: %q, subsets: [%s]", h, strings.Join(subs, ", "))
	if exportTo != nil {
		spec += fmt.Sprintf(", exportTo: [%s]", quoteAll(exportTo))
	}
	if extra != "" {
		spec += ", " + extra
	}
	return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: %s, namespace: %s}\nspec: {%s}\n", name, ns, spec)
}

func quoteAll(ss []string) string {
	var q []string
	for _, s := range ss {
		q = append(q, fmt.Sprintf("%q", s))
	}
	return strings.Join(q, ", ")
}

func loadDRs(t *testing.T, docs ...string) []*model.DestinationRule {
	t.Helper()
	var out []*model.DestinationRule
	for _, o := range objects(t, docs...) {
		out = append(out, o.(*model.DestinationRule))
	}
	return out
}

func subsetNames(r *Rule) string {
	if r == nil {
		return "none"
	}
	var n []string
	for _, s := range r.Subsets {
		n = append(n, s.GetName())
	}
	return strings.Join(n, ",")
}

func proxyIn(ns string, labels ...string) *Proxy {
	p := &Proxy{Namespace: ns, Name: "p", Labels: map[string]string{}}
	for i := 0; i+1 < len(labels); i += 2 {
		p.Labels[labels[i]] = labels[i+1]
	}
	return p
}

func TestC31DestinationRuleLookupMatrix(t *testing.T) {
	drs := loadDRs(t,
		dr("test1", "rule1", "httpbin.org", []string{".", "ns1"}, []string{"s1", "s2"}, ""),
		dr("test2", "rule2", "httpbin.org", []string{"test2", "ns1", "test1", "newNS"}, []string{"s3", "s4"}, ""),
		dr("test3", "rule3", "httpbin.org", []string{"test1", "test2", "*"}, []string{"s5", "s6"}, ""),
		dr("test4", "rule4-local", "httpbin.org", []string{"test4"}, []string{"s15", "s16"}, ""),
		dr("istio-system", "rule4", "httpbin.org", nil, []string{"s7", "s8"}, ""),
		dr("istio-system", "rule1", "httpbin.org", []string{"."}, []string{"s9", "s10"}, ""),
		dr("istio-system", "rule2", "*.org", []string{"."}, []string{"s11", "s12"}, ""),
		dr("istio-system", "rule3", "*.app.org", []string{"."}, []string{"s13", "s14"}, ""),
		dr("test5", "rule5", "api.test.com", []string{"istio-system"}, []string{"5-0", "5-1"}, ""),
		dr("test6", "rule6", "api.test.com", []string{"istio-system"}, []string{"6-0", "6-1"}, ""),
	)
	idx := buildDRIndexes(drs, "istio-system", "cluster.local", []string{"*"})
	tests := []struct {
		proxyNs, svcNs, host, want string
	}{
		{"test1", "test1", "", "s1,s2"},
		{"test1", "test2", "", "s1,s2"},
		{"test2", "test1", "", "s3,s4"},
		{"newNS", "test2", "", "s3,s4"},
		{"test3", "test1", "", "s5,s6"},
		{"test5", "test4", "", "s7,s8"},
		{"ns1", "test1", "", "s1,s2"},
		{"ns1", "random", "", "s7,s8"},
		{"random", "random", "", "s7,s8"},
		{"test3", "random", "", "s5,s6"},
		{"istio-system", "random", "", "s9,s10"},
		{"istio-system", "istio-system", "", "s9,s10"},
		{"istio-system", "istio-system", "foo.app.org", "s13,s14"},
		{"istio-system", "test5", "api.test.com", "5-0,5-1"},
		{"istio-system", "test6", "api.test.com", "6-0,6-1"},
		{"istio-system", "test7", "api.test.com", "none"},
	}
	for _, tt := range tests {
		h := tt.host
		if h == "" {
			h = "httpbin.org"
		}
		t.Run(tt.proxyNs+"/"+tt.svcNs+"/"+h, func(t *testing.T) {
			l := idx.lookup(tt.proxyNs, host.Name(h), tt.svcNs)
			if got := subsetNames(l.RuleFor(proxyIn(tt.proxyNs))); got != tt.want {
				t.Errorf("subsets %s (step %s), want %s", got, l.Step, tt.want)
			}
		})
	}
}

func ruleNames(rules []*Rule) []string {
	return mapSlice(rules, func(r *Rule) string {
		return r.First().Name + "(" + strings.Join(mapSlice(r.From, func(d *model.DestinationRule) string { return d.Name }), ",") + ")"
	})
}

func TestC32SelectorDRsMerge(t *testing.T) {
	drs := loadDRs(t,
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: ns-rule1, namespace: test, creationTimestamp: '2024-01-01T00:00:01Z'}\nspec: {host: httpbin.org, workloadSelector: {matchLabels: {app: app1}}}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: ns-rule2, namespace: test, creationTimestamp: '2024-01-01T00:00:02Z'}\nspec: {host: httpbin.org, workloadSelector: {matchLabels: {app: app2}}}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: ns-rule3, namespace: test, creationTimestamp: '2024-01-01T00:00:02Z'}\nspec: {host: httpbin.org, workloadSelector: {matchLabels: {app: app2}}}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: ns-rule4, namespace: test, creationTimestamp: '2024-01-01T00:00:00Z'}\nspec: {host: httpbin.org, exportTo: ['.', test2]}\n",
	)
	idx := buildDRIndexes(drs, "istio-system", "cluster.local", []string{"*"})
	want := []string{"ns-rule1(ns-rule1,ns-rule4)", "ns-rule2(ns-rule2,ns-rule3,ns-rule4)", "ns-rule4(ns-rule4)"}
	if got := ruleNames(idx.local["test"].rules["httpbin.org"]); !reflect.DeepEqual(got, want) {
		t.Errorf("Local[test] = %v, want %v", got, want)
	}
	l := idx.lookup("test2", "httpbin.org", "test")
	if got := ruleNames(l.Rules); !reflect.DeepEqual(got, []string{"ns-rule4(ns-rule4)"}) {
		t.Errorf("proxy in test2 gets %v", got)
	}
}

func TestC33SameNamespaceMergeVsExportTo(t *testing.T) {
	drs := loadDRs(t,
		dr("test", "rule1", "httpbin.org", nil, []string{"s1", "s2"}, ""),
		dr("test", "rule2", "httpbin.org", nil, []string{"s3", "s4"}, ""),
		dr("test", "rule3", "httpbin.org", []string{"istio-system"}, []string{"s5", "s6"}, ""),
	)
	idx := buildDRIndexes(drs, "istio-system", "cluster.local", []string{"*"})
	if got := ruleNames(idx.local["test"].rules["httpbin.org"]); !reflect.DeepEqual(got, []string{"rule1(rule1,rule2)"}) {
		t.Errorf("Local[test] = %v", got)
	}
	exported := idx.exported["test"].rules["httpbin.org"]
	if got := ruleNames(exported); !reflect.DeepEqual(got, []string{"rule1(rule1,rule2)", "rule3(rule3)"}) {
		t.Errorf("Exported[test] = %v", got)
	}
	if got := subsetNames(exported[0]); got != "s1,s2,s3,s4" {
		t.Errorf("merged subsets = %s", got)
	}
	// (derived) the last entry is the catch-all.
	if got := subsetNames(idx.lookup("istio-system", "httpbin.org", "test").RuleFor(proxyIn("istio-system"))); got != "s5,s6" {
		t.Errorf("proxy in istio-system gets %s, want s5,s6", got)
	}
	if got := subsetNames(idx.lookup("other", "httpbin.org", "test").RuleFor(proxyIn("other"))); got != "s1,s2,s3,s4" {
		t.Errorf("proxy elsewhere gets %s", got)
	}
}

func TestC34PerWorkloadDRChoice(t *testing.T) {
	drs := loadDRs(t,
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: dr-rule1, namespace: mynamespace}\nspec: {host: httpbin.org, workloadSelector: {matchLabels: {app: app1}}, trafficPolicy: {connectionPool: {http: {maxRetries: 33}, tcp: {connectTimeout: 33s}}}}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: dr-rule2, namespace: mynamespace}\nspec: {host: httpbin.org, workloadSelector: {matchLabels: {app: app2}}, trafficPolicy: {connectionPool: {http: {maxRetries: 1}}, outlierDetection: {consecutive5xxErrors: 3}}}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: dr-rule3, namespace: mynamespace}\nspec: {host: httpbin.org, workloadSelector: {matchLabels: {app: app1}}, subsets: [{name: subset1}, {name: subset2}]}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: plain, namespace: mynamespace}\nspec: {host: httpbin.org, trafficPolicy: {connectionPool: {http: {maxRetries: 2}}}}\n",
	)
	idx := buildDRIndexes(drs, "istio-system", "cluster.local", []string{"*"})
	l := idx.lookup("mynamespace", "httpbin.org", "other")
	for app, want := range map[string]string{"app2": "dr-rule2", "app5": "plain", "app1": "dr-rule1"} {
		r := l.RuleFor(proxyIn("mynamespace", "app", app))
		if r == nil || r.First().Name != want {
			t.Errorf("app=%s gets %v, want %s", app, r, want)
		}
	}
	r := l.RuleFor(proxyIn("mynamespace", "app", "app1"))
	if subsetNames(r) != "subset1,subset2" || r.TrafficPolicy.GetConnectionPool().GetHttp().GetMaxRetries() != 33 || r.PolicyFrom.Name != "dr-rule1" {
		t.Errorf("app1 rule: subsets %s, policy from %s", subsetNames(r), r.PolicyFrom.Name)
	}
}

func TestC35ProxyNamespaceWildcardWins(t *testing.T) {
	drs := loadDRs(t,
		dr("client", "wild", "*.svc.cluster.local", nil, []string{"a"}, ""),
		dr("server", "exact", "api.server.svc.cluster.local", nil, []string{"b"}, ""),
	)
	idx := buildDRIndexes(drs, "istio-system", "cluster.local", []string{"*"})
	if l := idx.lookup("client", "api.server.svc.cluster.local", "server"); subsetNames(l.RuleFor(proxyIn("client"))) != "a" || l.Step != StepProxyNs {
		t.Errorf("client gets %s at step %s", subsetNames(l.RuleFor(proxyIn("client"))), l.Step)
	}
	if l := idx.lookup("third", "api.server.svc.cluster.local", "server"); subsetNames(l.RuleFor(proxyIn("third"))) != "b" || l.Step != StepServiceNs {
		t.Errorf("third gets %s at step %s", subsetNames(l.RuleFor(proxyIn("third"))), l.Step)
	}
}

func TestC36PlainDRSwallowedBySelectorDR(t *testing.T) {
	const h = "api.web.svc.cluster.local"
	sel := "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: sel, namespace: web, creationTimestamp: '2024-01-01T00:00:00Z'}\nspec: {host: " + h + ", workloadSelector: {matchLabels: {app: canary}}, subsets: [{name: canary, labels: {v: c}}]}\n"
	plain := func(exportTo string) string {
		return "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: plain, namespace: web, creationTimestamp: '2024-01-01T00:00:01Z'}\nspec: {host: " + h + ", exportTo: " + exportTo + ", subsets: [{name: v1}, {name: v2}], trafficPolicy: {connectionPool: {tcp: {maxConnections: 7}}}}\n"
	}
	idx := buildDRIndexes(loadDRs(t, sel, plain(`["."]`)), "istio-system", "cluster.local", []string{"*"})
	if got := ruleNames(idx.local["web"].rules[h]); !reflect.DeepEqual(got, []string{"sel(sel,plain)"}) {
		t.Errorf("Local[web] = %v", got)
	}
	l := idx.lookup("web", h, "web")
	if got := subsetNames(l.RuleFor(proxyIn("web", "app", "canary"))); got != "canary,v1,v2" {
		t.Errorf("canary gets %s", got)
	}
	if r := l.RuleFor(proxyIn("web", "app", "other")); r != nil {
		t.Errorf("app=other should get no DR, got %s", r.First().Name)
	}
	if got := l.RuleFor(proxyIn("web", "app", "canary")).TrafficPolicy.GetConnectionPool().GetTcp().GetMaxConnections(); got != 7 {
		t.Errorf("sel has no policy of its own, so plain's applies; got %d", got)
	}
	idx = buildDRIndexes(loadDRs(t, sel, plain(`[".", "x"]`)), "istio-system", "cluster.local", []string{"*"})
	l = idx.lookup("web", h, "web")
	if r := l.RuleFor(proxyIn("web", "app", "other")); r == nil || r.First().Name != "plain" {
		t.Errorf("with exportTo [., x] app=other should get plain, got %v", r)
	}
}

// TestDestinationRuleOf: a VirtualService destination's decision and
// service are the ones its hostname gives, numbered or not, for a host no
// service has too.
func TestDestinationRuleOf(t *testing.T) {
	m := mesh(t, "",
		"apiVersion: v1\nkind: Service\nmetadata: {name: reviews, namespace: shop}\nspec: {ports: [{name: http, port: 80}]}\n",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: reviews, namespace: shop}\nspec: {host: reviews, subsets: [{name: v1, labels: {version: v1}}]}\n",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: reviews, namespace: shop}\nspec: {hosts: [reviews], http: [{route: [{destination: {host: reviews, subset: v1}}, {destination: {host: gone.example.com}}]}]}\n",
	)
	var checked, found int
	for _, sc := range m.Scopes {
		sc.RoutedDestinations(func(d *Destination) {
			unnumbered := *d
			unnumbered.hostID = 0
			want, wantOK := sc.DestinationRule(d.Host)
			for _, dest := range []*Destination{d, &unnumbered} {
				got, ok := sc.DestinationRuleOf(dest)
				if ok != wantOK || got.Rule != want.Rule || got.Service != want.Service {
					t.Errorf("scope %s, %s (host ID %d): DestinationRuleOf = %v, %v; DestinationRule = %v, %v", sc.Namespace, d.Host, dest.hostID, got.Rule, ok, want.Rule, wantOK)
				}
				svc, svcOK := sc.Service(d.Host)
				if got, ok := sc.ServiceOf(dest); ok != svcOK || got != svc {
					t.Errorf("scope %s, %s (host ID %d): ServiceOf = %v, %v; Service = %v, %v", sc.Namespace, d.Host, dest.hostID, got, ok, svc, svcOK)
				}
			}
			checked++
			if wantOK && want.Rule != nil {
				found++
			}
		})
	}
	if checked < 2 || found == 0 {
		t.Fatalf("checked %d destinations, %d with a rule: the mesh routes nothing to check", checked, found)
	}
}
