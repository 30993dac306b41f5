package resolve

import (
	"fmt"
	"slices"
	"testing"
)

func endpointsOf(m *Mesh, host string) []string {
	var out []string
	for _, s := range m.Services {
		if string(s.Host) != host {
			continue
		}
		for _, e := range s.Endpoints {
			out = append(out, fmt.Sprintf("%s:%d->%d %s %s", e.Address, e.ServicePort, e.Port, e.TLSMode, e.Workload.Name))
		}
	}
	slices.Sort(out)
	return out
}

func TestKubernetesEndpoints(t *testing.T) {
	m := mesh(t, "",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {selector: {app: web}, ports: [{port: 80, name: http, targetPort: http-web}, {port: 9090, name: grpc, targetPort: 9091}, {port: 7000, name: tcp-missing, targetPort: nope}]}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: none, namespace: shop}\nspec: {ports: [{port: 80, name: http}]}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, ports: [{containerPort: 8080, name: http-web}]}]}\nstatus: {podIP: 10.0.0.1}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web-2, namespace: shop, labels: {app: web}, annotations: {sidecar.istio.io/inject: 'false'}}\nspec: {containers: [{name: c, ports: [{containerPort: 8081, name: http-web}]}]}\nstatus: {podIP: 10.0.0.2}",
		"apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: vm, namespace: shop}\nspec: {address: 10.9.0.1, labels: {app: web}, ports: {http-web: 18080}, serviceAccount: vm}",
	)
	want := []string{
		"10.0.0.1:80->8080 istio web-1", "10.0.0.1:9090->9091 istio web-1",
		"10.0.0.2:80->8081 disabled web-2", "10.0.0.2:9090->9091 disabled web-2",
		"10.9.0.1:80->18080 istio vm", "10.9.0.1:9090->9091 istio vm",
	}
	if got := endpointsOf(m, "web.shop.svc.cluster.local"); !slices.Equal(got, want) {
		t.Errorf("endpoints\n%q\nwant\n%q", got, want)
	}
	if got := endpointsOf(m, "none.shop.svc.cluster.local"); len(got) != 0 {
		t.Errorf("a service without selector has no endpoints: %v", got)
	}
}

// TestServiceEntryEndpoints: an entry's inline endpoints are workloads
// named after the entry and their index, as istiod names them.
func TestServiceEntryEndpoints(t *testing.T) {
	m := mesh(t, "",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: static, namespace: ext}\nspec: {hosts: [db.example.com], ports: [{number: 5432, name: tcp, protocol: TCP, targetPort: 15432}], resolution: STATIC, endpoints: [{address: 10.1.0.1}, {address: 10.1.0.2, ports: {tcp: 6543}}]}",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: dns, namespace: ext}\nspec: {hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: rr, namespace: ext}\nspec: {hosts: [rr.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS_ROUND_ROBIN, endpoints: [{address: a.example.com}, {address: b.example.com}]}",
	)
	if got, want := endpointsOf(m, "db.example.com"), []string{"10.1.0.1:5432->15432 disabled static-0", "10.1.0.2:5432->6543 disabled static-1"}; !slices.Equal(got, want) {
		t.Errorf("static: %q", got)
	}
	if got, want := endpointsOf(m, "api.example.com"), []string{"api.example.com:443->443 disabled dns"}; !slices.Equal(got, want) {
		t.Errorf("dns: %q", got)
	}
	if got, want := endpointsOf(m, "rr.example.com"), []string{"a.example.com:80->80 disabled rr-0"}; !slices.Equal(got, want) {
		t.Errorf("round robin keeps the first endpoint per port: %q", got)
	}
}
