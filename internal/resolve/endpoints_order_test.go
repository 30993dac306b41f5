package resolve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/model"
)

// TestSortEndpoints: endpoints come by address (IPv4 numerically, then
// IPv6, then names and socket paths; none first), port and workload,
// whatever order they are given in.
func TestSortEndpoints(t *testing.T) {
	pod := func(name string) *model.ObjectMeta { return &model.ObjectMeta{Kind: "Pod", Namespace: "a", Name: name} }
	want := []Endpoint{
		{Address: "10.0.0.9", Port: 80, Workload: pod("x")},
		{Address: "10.0.0.10", Port: 80},
		{Address: "10.0.0.10", Port: 80, Workload: pod("y")},
		{Address: "10.0.0.10", Port: 80, Workload: &model.ObjectMeta{Kind: "WorkloadEntry", Namespace: "a", Name: "b"}},
		{Address: "10.0.0.10", Port: 8080, Workload: pod("a")},
		{Address: "192.168.0.1", Port: 1},
		{Address: "fd00::2", Port: 80}, // before fd00::10, numerically
		{Address: "fd00::10", Port: 80},
		{Port: 80, Workload: pod("template")},
		{Address: "a.example.com", Port: 443},
		{Address: "b.example.com", Port: 80},
		{Address: "unix:///var/run/a.sock"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		in := slices.Clone(want)
		r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		if got := endpointNames(sortEndpoints(in)); !slices.Equal(got, endpointNames(want)) {
			t.Fatalf("shuffle %d:\ngot  %v\nwant %v", i, got, endpointNames(want))
		}
	}
}

func endpointNames(eps []Endpoint) []string {
	var out []string
	for _, e := range eps {
		w := ""
		if e.Workload != nil {
			w = e.Workload.Kind + "/" + e.Workload.Name
		}
		out = append(out, fmt.Sprintf("%s:%d %s", e.Address, e.Port, w))
	}
	return out
}
