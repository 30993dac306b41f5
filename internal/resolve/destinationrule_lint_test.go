package resolve

import (
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/load/loadtest"
)

func TestServicesCovering(t *testing.T) {
	m := Resolve(loadtest.Objects(t,
		"apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: web}\nspec: {ports: [{port: 80, name: http}]}\n",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: ext, namespace: egress}\nspec: {hosts: [api.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}\n",
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: wild, namespace: egress}\nspec: {hosts: ['*.example.net'], ports: [{number: 443, name: tls, protocol: TLS}], resolution: NONE}\n",
	), Options{})
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
