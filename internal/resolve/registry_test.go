package resolve

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/hierarchy"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/load/loadtest"
)

func TestServicesCovering(t *testing.T) {
	m := resolveObjects(t, loadtest.Objects(t,
		"apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: web}\nspec: {ports: [{port: 80, name: http}]}\n",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: ext, namespace: egress}\nspec: {hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}\n",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: wild, namespace: egress}\nspec: {hosts: ['*.example.net'], ports: [{number: 443, name: tls, protocol: TLS}], resolution: NONE}\n",
	), hierarchy.Options{}, Options{})
	for _, tt := range []struct {
		host host.Name
		want []string // hosts of the services, in order
	}{
		{"api.web.svc.cluster.local", []string{"api.web.svc.cluster.local"}},
		{"api.other.svc.cluster.local", nil},
		{"*.web.svc.cluster.local", []string{"api.web.svc.cluster.local"}},
		{"*.svc.cluster.local", []string{"api.web.svc.cluster.local"}},
		{"a.example.net", []string{"*.example.net"}}, // under a wildcard entry
		{"*.a.example.net", nil},                     // the broader entry is not under the narrower rule host
		{"*.example.com", []string{"api.example.com"}},
		{"*", []string{"api.web.svc.cluster.local", "api.example.com", "*.example.net"}},
	} {
		var got []string
		for _, s := range m.ServicesCovering(tt.host) {
			got = append(got, string(s.Host))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("ServicesCovering(%s) = %v, want %v", tt.host, got, want)
		}
	}
}

func TestProxyPort(t *testing.T) {
	px := &Proxy{ContainerPorts: []corev1.ContainerPort{{Name: "web", ContainerPort: 8080}}}
	for _, tt := range []struct {
		port Port
		want uint32
		ok   bool
	}{
		{Port{Number: 80}, 80, true},
		{Port{Number: 80, TargetPort: 9090}, 9090, true},
		{Port{Number: 80, TargetPortName: "web"}, 8080, true},
		{Port{Number: 80, TargetPortName: "admin"}, 0, false},
	} {
		if got, ok := ProxyPort(tt.port, px); got != tt.want || ok != tt.ok {
			t.Errorf("ProxyPort(%+v) = %d, %v, want %d, %v", tt.port, got, ok, tt.want, tt.ok)
		}
	}
}
