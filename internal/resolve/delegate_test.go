package resolve

import (
	"reflect"
	"strings"
	"testing"
	"time"

	networking "istio.io/api/networking/v1alpha3"
)

func TestC39Delegation(t *testing.T) {
	root := vsYAML("default", "root", `hosts: [productpage], http: [{name: root, timeout: 10s,
		headers: {request: {add: {istio: test}, remove: [trace-id]}},
		delegate: {name: delegate, namespace: default}}]`)
	leaf := vsYAML("default", "delegate", `http: [
		{name: v1, match: [{uri: {prefix: /productpage/v1}, headers: {version: {exact: v1}}}], route: [{destination: {host: productpage, subset: v1}}]},
		{name: v2, match: [{uri: {prefix: /productpage/v2}, headers: {version: {exact: v2}}}, {headers: {version: {exact: v2}}, queryParams: {version: {exact: v2}}}], route: [{destination: {host: productpage, subset: v2}}]}]`)
	x := newVSIndex(loadVSs(t, []string{"*"}, root, leaf), "cluster.local", []string{"*"})
	var r *VirtualService
	for _, vs := range x.all {
		if vs.Object.Name == "root" {
			r = vs
		}
	}
	if len(r.Routes) != 2 {
		t.Fatalf("routes = %d, want 2", len(r.Routes))
	}
	for i, want := range []struct {
		name    string
		matches int
		subset  string
	}{{"root-v1", 1, "v1"}, {"root-v2", 2, "v2"}} {
		got := r.Routes[i]
		if got.GetName() != want.name || len(got.GetMatch()) != want.matches || got.GetRoute()[0].GetDestination().GetSubset() != want.subset {
			t.Errorf("route %d = %s with %d matches to %s", i, got.GetName(), len(got.GetMatch()), got.GetRoute()[0].GetDestination().GetSubset())
		}
		if got.GetTimeout().AsDuration() != 10*time.Second || got.GetHeaders().GetRequest().GetAdd()["istio"] != "test" ||
			!reflect.DeepEqual(got.GetHeaders().GetRequest().GetRemove(), []string{"trace-id"}) {
			t.Errorf("route %d did not inherit timeout and headers: %v", i, got)
		}
		if got.From.Object.Name != "delegate" {
			t.Errorf("route %d written by %s", i, got.From.Object.Name)
		}
	}
	if got := r.Routes[0].GetMatch()[0].GetUri().GetPrefix(); got != "/productpage/v1" {
		t.Errorf("delegate match changed: %q", got)
	}
	if d := r.Destinations[0]; d.Host != "productpage.default.svc.cluster.local" || d.In.Object.Name != "delegate" || d.Path.String() != "spec.http[0].route[0].destination" {
		t.Errorf("destination %+v", d)
	}
}

func TestC39MatchMerge(t *testing.T) {
	exact := func(s string) *networking.StringMatch {
		return &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: s}}
	}
	prefix := func(s string) *networking.StringMatch {
		return &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: s}}
	}
	regex := func(s string) *networking.StringMatch {
		return &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: s}}
	}
	uri := func(m *networking.StringMatch) *networking.HTTPMatchRequest {
		return &networking.HTTPMatchRequest{Uri: m}
	}
	describe := func(ms []*networking.HTTPMatchRequest) string {
		var out []string
		for _, m := range ms {
			out = append(out, m.GetUri().String())
		}
		return strings.Join(out, "; ")
	}
	tests := []struct {
		name       string
		root, leaf []*networking.HTTPMatchRequest
		ok         bool
		want       []*networking.StringMatch
	}{
		{"prefix root, exact leaf", []*networking.HTTPMatchRequest{uri(prefix("/productpage"))}, []*networking.HTTPMatchRequest{uri(exact("/productpage/v1"))}, true, []*networking.StringMatch{exact("/productpage/v1")}},
		{"prefix root, unrelated exact leaf", []*networking.HTTPMatchRequest{uri(prefix("/productpage"))}, []*networking.HTTPMatchRequest{uri(exact("/reviews"))}, false, nil},
		{"regex root, empty leaf match", []*networking.HTTPMatchRequest{uri(regex("^/productpage"))}, []*networking.HTTPMatchRequest{{}}, true, []*networking.StringMatch{regex("^/productpage")}},
		{"regex root, prefix leaf", []*networking.HTTPMatchRequest{uri(regex("^/productpage"))}, []*networking.HTTPMatchRequest{uri(prefix("/productpage"))}, false, nil},
		{"two roots, two leaves", []*networking.HTTPMatchRequest{uri(prefix("/productpage")), uri(prefix("/reviews"))},
			[]*networking.HTTPMatchRequest{uri(exact("/productpage/v1")), uri(exact("/reviews/v1"))}, true,
			[]*networking.StringMatch{exact("/productpage/v1"), exact("/reviews/v1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mergeMatches(tt.root, tt.leaf)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%s)", ok, tt.ok, describe(got))
			}
			var want []*networking.HTTPMatchRequest
			for _, w := range tt.want {
				want = append(want, uri(w))
			}
			if ok && describe(got) != describe(want) {
				t.Errorf("merged %s, want %s", describe(got), describe(want))
			}
		})
	}
}

func TestDelegateProblems(t *testing.T) {
	root := vsYAML("a", "root", "hosts: [x], http: [{delegate: {name: missing}}, {delegate: {name: hosted}}, {delegate: {name: private, namespace: b}}]")
	hosted := vsYAML("a", "hosted", "hosts: [yy], http: [{route: [{destination: {host: yy}}]}]")
	private := vsYAML("b", "private", "exportTo: ['.'], http: [{route: [{destination: {host: yy}}]}]")
	x := newVSIndex(loadVSs(t, []string{"*"}, root, hosted, private), "cluster.local", []string{"*"})
	var whys []string
	for _, p := range x.delegateProblems {
		whys = append(whys, p.Why)
	}
	want := []string{"delegate a/missing does not exist", "delegate a/hosted has hosts, so it is not a delegate", "delegate b/private is not exported to a"}
	if !reflect.DeepEqual(whys, want) {
		t.Errorf("problems = %v", whys)
	}
}
