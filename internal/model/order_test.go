package model

import (
	"slices"
	"testing"
)

func TestOrderByID(t *testing.T) {
	obj := func(apiVersion, kind, ns, name string) Object {
		return &Unknown{ObjectMeta: ObjectMeta{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}}
	}
	tests := []struct {
		name string
		objs []Object
		want []int
	}{
		{"empty", nil, []int{}},
		{"kinds in order, each in order: nothing moves within a kind", []Object{
			obj("v1", "Service", "a", "x"), obj("v1", "ConfigMap", "a", "x"), obj("v1", "Service", "b", "x"), obj("v1", "ConfigMap", "b", "x"),
		}, []int{1, 3, 0, 2}},
		{"a kind out of order is sorted by namespace and name", []Object{
			obj("v1", "Service", "b", "x"), obj("v1", "Service", "a", "y"), obj("v1", "Service", "a", "x"),
		}, []int{2, 1, 0}},
		{"groups before kinds: the core group first", []Object{
			obj("networking.istio.io/v1", "Gateway", "a", "x"), obj("v1", "Service", "a", "x"), obj("apps/v1", "Deployment", "a", "x"),
		}, []int{1, 2, 0}},
		{"equal identities in input order", []Object{
			obj("v1", "Service", "a", "x"), obj("v1", "Operator", "", ""), obj("v1", "Service", "a", "x"), obj("v1", "Operator", "", ""),
		}, []int{1, 3, 0, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			order, ids := OrderByID(tt.objs)
			if !slices.Equal(order, tt.want) {
				t.Errorf("order %v, want %v", order, tt.want)
			}
			for i, o := range tt.objs {
				if ids[i] != o.Meta().ID() {
					t.Errorf("ids[%d] = %v, want %v", i, ids[i], o.Meta().ID())
				}
			}
			for k := 1; k < len(order); k++ {
				if ids[order[k-1]].Compare(ids[order[k]]) > 0 {
					t.Errorf("%v before %v", ids[order[k-1]], ids[order[k]])
				}
			}
		})
	}
}
