package routecheck

import (
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/request"
)

// TestCheck: each expectation compares one part of the report and says
// what it wanted and what it got.
func TestCheck(t *testing.T) {
	split := &request.Report{RouteConfiguration: "80", Action: &request.Action{Kind: "forward", Path: "/v2/x", Authority: "api", HeadersToAdd: []string{"x-via: mesh"}},
		WeightedClusters: []request.WeightedTarget{{Name: "outbound|80|v1|web.shop.svc.cluster.local", Weight: 90}, {Name: "outbound|80|v2|web.shop.svc.cluster.local", Weight: 10}},
		RouteRule:        &request.Object{Kind: "VirtualService", Namespace: "shop", Name: "web", Rule: "spec.http[1]"}}
	single := &request.Report{Cluster: "outbound|8080|blue|api.shop.svc.cluster.local", Action: &request.Action{Kind: "forward"}}
	stopped := &request.Report{StoppedAt: "virtualHost", Reason: "no virtual host"}
	s := func(v string) *string { return &v }
	u := func(v uint32) *uint32 { return &v }
	b := func(v bool) *bool { return &v }
	for _, tc := range []struct {
		name string
		e    Expect
		rep  *request.Report
		want []string // fragments, one per failure
	}{
		{"split holds", Expect{VirtualService: s("shop/web"), Rule: s("http[1]"), Weighted: []WeightedExpect{{Subset: "v1", Weight: 90}, {Cluster: "outbound|80|v2|web.shop.svc.cluster.local", Weight: 10}},
			Path: s("/v2/x"), Authority: s("api"), HeadersAdded: map[string]string{"x-via": "mesh"}, NoRoute: b(false)}, split, nil},
		{"split differs", Expect{Rule: s("spec.http[0]"), Weighted: []WeightedExpect{{Subset: "v1", Weight: 50}, {Subset: "v2", Weight: 50}},
			HeadersAdded: map[string]string{"x-other": "1"}, RouteConfiguration: s("8080")},
			split, []string{"headersAdded: want \"x-other: 1\"", "routeConfiguration: want \"8080\", got \"80\"", "rule: want \"http[0]\", got \"http[1]\"", "weighted: want [ v1 50,  v2 50]"}},
		{"destination holds", Expect{Host: s("api.shop.svc.cluster.local"), Subset: s("blue"), Port: u(8080)}, single, nil},
		{"destination differs", Expect{Subset: s("green"), Port: u(80), Redirect: u(301), Weighted: []WeightedExpect{{Subset: "blue", Weight: 100}}}, single,
			[]string{"port: want 80, got 8080", "redirect: want 301, got forward", "subset: want \"green\", got \"blue\"", "weighted: want [ blue 100], got []"}},
		{"no route wanted", Expect{NoRoute: b(true)}, single, []string{"noRoute: want no route, got forward to outbound|8080|blue|api"}},
		{"route wanted", Expect{NoRoute: b(false), StoppedAt: s("route"), DirectResponse: u(503)}, stopped,
			[]string{"directResponse: want 503, got no action", "noRoute: want a route, got none: stopped at virtualHost", "stoppedAt: want \"route\", got \"virtualHost\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := check(tc.e, tc.rep)
			if len(got) != len(tc.want) {
				t.Fatalf("failures %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("failure %d: %q, want %q in it", i, got[i], w)
				}
			}
		})
	}
}
