package load

import (
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/model"
)

// TestServiceEntryStatusAddresses: a ServiceEntry keeps the host and value
// of each status.addresses entry; entries without either, of the wrong
// shape, or on another kind are dropped without a finding, as the API
// server does not check status on create.
func TestServiceEntryStatusAddresses(t *testing.T) {
	in := `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: app}
spec: {hosts: [db.example.com], resolution: DNS, ports: [{number: 5432, name: tcp, protocol: TCP}]}
status:
  addresses:
  - {host: db.example.com, value: 240.240.0.1}
  - {host: db.example.com}
  - {value: 240.240.0.3}
  - 7
  - {host: db.example.com, value: "2001:2::1"}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: odd, namespace: app}
spec: {hosts: [odd.example.com], resolution: DNS, ports: [{number: 80, name: http}]}
status: {addresses: nope}
`
	objs, ds := Bytes("se.yaml", []byte(in))
	if len(ds) > 0 {
		t.Fatalf("load: %s", dump(ds))
	}
	want := map[string][]model.HostAddress{
		"db":  {{Host: "db.example.com", Value: "240.240.0.1"}, {Host: "db.example.com", Value: "2001:2::1"}},
		"odd": nil,
	}
	for _, o := range objs {
		se := o.(*model.ServiceEntry)
		if !slices.Equal(se.StatusAddresses, want[se.Name]) {
			t.Errorf("%s: status addresses %v, want %v", se.Name, se.StatusAddresses, want[se.Name])
		}
	}
}
