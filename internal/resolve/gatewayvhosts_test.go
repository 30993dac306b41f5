package resolve

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	networking "istio.io/api/networking/v1alpha3"
)

// TestGatewayRouteConfig: the virtual hosts of a gateway's HTTP route
// configuration, as "name [domains] routes", "tls" when they require
// TLS: hosts with the same routes share one, named by the most specific;
// several VirtualServices' routes for one host concatenate, catch-alls
// last; an httpsRedirect server's hosts without routes share one named
// after the first; nothing routed is a blackhole.
func TestGatewayRouteConfig(t *testing.T) {
	const vsAB = "hosts: [d.example.com, b.example.com, a.example.com], gateways: [gw/edge], http: [{name: old, match: [{uri: {prefix: /old}}], redirect: {uri: /new}}, {name: all, route: [{destination: {host: web}}]}]"
	const vsC = "hosts: ['*.c.example.com', c.example.com, a.example.com], gateways: [gw/edge], http: [{name: c, match: [{uri: {prefix: /c}}], route: [{destination: {host: web}}]}]"
	for _, tc := range []struct {
		name, hosts, tls string
		vss              []string
		want             []string
	}{
		{"merged hosts and VirtualServices", "[a.example.com, b.example.com, c.example.com, d.example.com, '*.c.example.com']", "",
			[]string{vsYAML("gw", "ab", vsAB), vsYAML("gw", "c", vsC)},
			[]string{"a.example.com:80 [a.example.com] old,c,all", "b.example.com:80 [b.example.com d.example.com] old,all", "c.example.com:80 [c.example.com *.c.example.com] c"}},
		{"redirect hosts without HTTP routes", "[b.example.com, a.example.com]", "{httpsRedirect: true}",
			[]string{vsYAML("gw", "a", "hosts: [a.example.com], gateways: [gw/edge], tcp: [{route: [{destination: {host: web, port: {number: 9000}}}]}]")},
			[]string{"a.example.com:80 [a.example.com b.example.com]  tls"}},
		{"redirect beside routes", "[b.example.com, a.example.com]", "{httpsRedirect: true}",
			[]string{vsYAML("gw", "ab", vsAB)},
			[]string{"a.example.com:80 [a.example.com b.example.com] old,all tls"}},
		{"nothing routed", "[a.example.com]", "", nil,
			[]string{"blackhole:80 [*] "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tls := ""
			if tc.tls != "" {
				tls = ", tls: " + tc.tls
			}
			docs := append([]string{
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: gw}",
				"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ingress, namespace: gw}\nspec:\n  selector: {matchLabels: {istio: edge}}\n  template:\n    metadata: {labels: {istio: edge, sidecar.istio.io/inject: 'true'}, annotations: {inject.istio.io/templates: gateway}}\n    spec: {containers: [{name: istio-proxy, image: auto}]}",
				"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: gw}\nspec: {clusterIP: 10.0.0.8, ports: [{name: http, port: 80}]}",
				fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: edge, namespace: gw}\nspec: {selector: {istio: edge}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: %s%s}]}", tc.hosts, tls),
			}, tc.vss...)
			m := mesh(t, "", docs...)
			v, ok := m.View("gw", "ingress")
			if !ok {
				t.Fatal("no gateway proxy")
			}
			rc := m.GatewayRouteConfig(v, GatewayRoutes{"http.80", v.Gateways})
			var got []string
			for _, vh := range rc.VirtualHosts {
				var routes []string
				for _, r := range vh.Routes {
					routes = append(routes, r.Name)
					if r.Root == nil || r.TLS != (tc.tls != "") {
						t.Errorf("route %s: root %v, TLS %v", r.Name, r.Root, r.TLS)
					}
				}
				s := fmt.Sprintf("%s [%s] %s", vh.Name, strings.Join(vh.Domains, " "), strings.Join(routes, ","))
				if vh.RequireTLS {
					s += " tls"
				}
				got = append(got, s)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("virtual hosts =\n%q\nwant\n%q", got, tc.want)
			}
			if last := rc.VirtualHosts[len(rc.VirtualHosts)-1]; (last.CatchAll == BlackholeCatchAll) != (tc.vss == nil) {
				t.Errorf("catch-all = %q", last.CatchAll)
			}
		})
	}
}

// TestMatchesEverything: a route goes last on a gateway's virtual host
// when Envoy's rendering of its match takes every request.
func TestMatchesEverything(t *testing.T) {
	prefix := func(p string) *networking.StringMatch {
		return &networking.StringMatch{MatchType: &networking.StringMatch_Prefix{Prefix: p}}
	}
	for _, tc := range []struct {
		name  string
		match *networking.HTTPMatchRequest
		gwAPI bool
		want  bool
	}{
		{"no match", nil, false, true},
		{"root prefix", &networking.HTTPMatchRequest{Uri: prefix("/")}, false, true},
		{"other prefix", &networking.HTTPMatchRequest{Uri: prefix("/a")}, false, false},
		{"any regex", &networking.HTTPMatchRequest{Uri: &networking.StringMatch{MatchType: &networking.StringMatch_Regex{Regex: ".*"}}}, false, true},
		{"exact root", &networking.HTTPMatchRequest{Uri: &networking.StringMatch{MatchType: &networking.StringMatch_Exact{Exact: "/"}}}, false, false},
		{"root with a header", &networking.HTTPMatchRequest{Uri: prefix("/"), Headers: map[string]*networking.StringMatch{"x": prefix("y")}}, false, false},
		{"port only", &networking.HTTPMatchRequest{Port: 80}, false, true},
		{"double slash", &networking.HTTPMatchRequest{Uri: prefix("//")}, false, false},
		{"generated double slash is segment /", &networking.HTTPMatchRequest{Uri: prefix("//")}, true, true},
		{"generated double slash with a method", &networking.HTTPMatchRequest{Uri: prefix("//"), Method: prefix("G")}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &HTTPRoute{Match: tc.match, Root: &VirtualService{GatewayAPI: tc.gwAPI}}
			if got := matchesEverything(r); got != tc.want {
				t.Errorf("matchesEverything = %v, want %v", got, tc.want)
			}
		})
	}
}
