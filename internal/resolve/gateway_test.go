package resolve

import (
	"reflect"
	"testing"
)

func TestGatewayBinding(t *testing.T) {
	m := mesh(t, "",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: gw}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ingress, namespace: gw}\nspec:\n  selector: {matchLabels: {istio: ingress}}\n  template:\n    metadata: {labels: {istio: ingress, sidecar.istio.io/inject: 'true'}, annotations: {inject.istio.io/templates: gateway}}\n    spec: {containers: [{name: istio-proxy, image: auto}]}",
		"apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: public, namespace: gw}\nspec: {selector: {istio: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['ns1/*.a.com', '*/b.com']}]}",
		"apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: other, namespace: gw}\nspec: {selector: {istio: other}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}",
		vsYAML("ns1", "a", "hosts: [x.a.com], gateways: [gw/public], http: [{route: [{destination: {host: x}}]}]"),
		vsYAML("ns2", "a-elsewhere", "hosts: [x.a.com], gateways: [gw/public], http: [{route: [{destination: {host: x}}]}]"),
		vsYAML("ns2", "b", "hosts: [b.com], gateways: [gw/public], http: [{route: [{destination: {host: x}}]}]"),
		vsYAML("ns2", "mesh-only", "hosts: [b.com], http: [{route: [{destination: {host: x}}]}]"),
	)
	v, ok := m.View("gw", "ingress")
	if !ok || v.Proxy.Type != RouterProxy {
		t.Fatalf("gateway proxy missing or not a router: %+v", v)
	}
	if len(v.Gateways) != 1 || v.Gateways[0].Gateway.Name != "public" {
		t.Fatalf("gateways = %+v", v.Gateways)
	}
	var got []string
	for _, r := range v.Gateways[0].Routes {
		got = append(got, r.VirtualService.Object.Name+":"+string(r.Hosts[0]))
	}
	if want := []string{"a:x.a.com", "b:b.com"}; !reflect.DeepEqual(got, want) {
		t.Errorf("routes = %v, want %v", got, want)
	}
}
