package host

import (
	"fmt"
	"reflect"
	"testing"
)

func TestC01Matches(t *testing.T) {
	tests := []struct {
		a, b Name
		want bool
	}{
		{"", "", true},
		{"a.facebook.com", "*.facebook.COM", false},
		{"", "foo.com", false},
		{"foo.com", "foo.com", true},
		{"bar.com", "foo.com", false},
		{"bar.foo.com", "foo.com", false},
		{"*.com", "foo.com", true},
		{"*.foo.com", "bar.foo.com", true},
		{"*", "foo.com", true},
		{"*", "*.com", true},
		{"*", "com", true},
		{"*", "*", true},
		{"*", "", true},
		{"*.com", "*.foo.com", true},
		{"foo.com", "*.foo.com", false},
		{"*.foo.com", "foo.com", false},
		{"*.foo.bar.baz", "baz", false},
		{"*.foo.bar.baz", "*.baz", true},
		{"foo.bar.baz", "*.baz", true},
		// Partial wildcards are plain suffixes (istio.md §3.2).
		{"*foo.com", "barfoo.com", true},
		{"*foo.com", "foo.com", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/%q", tt.a, tt.b), func(t *testing.T) {
			if got := tt.a.Matches(tt.b); got != tt.want {
				t.Errorf("Matches = %v", got)
			}
			if got := tt.b.Matches(tt.a); got != tt.want {
				t.Errorf("Matches is not symmetric")
			}
		})
	}
}

func TestC02SubsetOf(t *testing.T) {
	tests := []struct {
		a, b Name
		want bool
	}{
		{"foo.com", "*.com", true},
		{"bar.foo.com", "*.foo.com", true},
		{"foo.com", "*", true},
		{"*.com", "*", true},
		{"com", "*", true},
		{"*", "*", true},
		{"", "*", true},
		{"*.foo.com", "*.com", true},
		{"*.com", "*.foo.com", false},
		{"*.foo.com", "foo.com", false},
		{"*.foo.bar.baz", "baz", false},
		{"foo.bar.baz", "*.baz", true},
		{"", "", true},
		{"", "foo.com", false},
	}
	for _, tt := range tests {
		if got := tt.a.SubsetOf(tt.b); got != tt.want {
			t.Errorf("%q SubsetOf %q = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestC03Sort(t *testing.T) {
	for _, tt := range []struct{ in, want []Name }{
		{[]Name{"b", "a", "aa"}, []Name{"aa", "a", "b"}},
		{[]Name{"foo.com", "bar.com", "foo.bar.com"}, []Name{"foo.bar.com", "bar.com", "foo.com"}},
		{[]Name{"a", "*", "z"}, []Name{"a", "z", "*"}},
		{[]Name{"foo.com", "bar.com", "*.com", "*.foo.com", "*", "baz.bar.com"}, []Name{"baz.bar.com", "bar.com", "foo.com", "*.foo.com", "*.com", "*"}},
	} {
		got := append([]Name(nil), tt.in...)
		Sort(got)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Sort(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ a, b, want []Name }{
		{[]Name{"foo.com", "*.net"}, []Name{"*.com", "bar.net"}, []Name{"foo.com", "bar.net"}},
		{[]Name{"foo.com", "*.net"}, []Name{"*.bar.net"}, []Name{"*.bar.net"}},
		{[]Name{"*", "foo.com"}, []Name{"foo.com"}, []Name{"foo.com"}},
		{[]Name{"foo.com"}, []Name{"Foo.com"}, nil},
	} {
		if got := Intersection(tt.a, tt.b); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Intersection(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if got := NamesForNamespace([]string{"ns1/foo.com", "*/bar.com"}, "ns3"); !reflect.DeepEqual(got, []Name{"bar.com"}) {
		t.Errorf("NamesForNamespace = %v", got)
	}
	if got := NamesForNamespace([]string{"foo.com", "ns2/bar.com"}, "ns3"); !reflect.DeepEqual(got, []Name{"foo.com"}) {
		t.Errorf("NamesForNamespace = %v", got)
	}
}

func TestC04MostSpecificHostMatch(t *testing.T) {
	tests := []struct {
		keys   []Name
		needle Name
		want   Name // "" for no match
	}{
		{[]Name{"*.foo.com", "*.com"}, "bar.foo.com", "*.foo.com"},
		{[]Name{"*.foo.com", "*.com"}, "foo.com", "*.com"},
		{[]Name{"foo.com", "*.com"}, "*.foo.com", "*.com"},
		{[]Name{"*.foo.com", "foo.com"}, "foo.com", "foo.com"},
		{[]Name{"*.foo.com", "foo.com"}, "*.foo.com", "*.foo.com"},
		{[]Name{"bar.com", "foo.com"}, "*.com", ""},
		{[]Name{"*.bar.com", "foo.bar.com"}, "foo.bar.com", "foo.bar.com"},
		{[]Name{"bar.foo.com", "foo.bar.com"}, "*.foo.com", ""},
	}
	for _, tt := range tests {
		got, ok := NewIndex(tt.keys).Lookup(tt.needle)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("keys %v needle %q = %q, %v; want %q", tt.keys, tt.needle, got, ok, tt.want)
		}
	}
}

func TestC05ShortNames(t *testing.T) {
	tests := []struct{ h, ns, domain, want string }{
		{"foo", "default", "cluster.local", "foo.default.svc.cluster.local"},
		{"foo.bar", "default", "cluster.local", "foo.bar"},
		{"*", "default", "cluster.local", "*"},
		{"42.185.131.210", "default", "cluster.local", "42.185.131.210"},
		{"2a00:4000::614", "default", "cluster.local", "2a00:4000::614"},
		{"foo", "", "cluster.local", "foo.svc.cluster.local"},
		{"foo", "default", "", "foo.default"},
	}
	for _, tt := range tests {
		if got := FQDN(tt.h, tt.ns, tt.domain); string(got) != tt.want {
			t.Errorf("FQDN(%q, %q, %q) = %q, want %q", tt.h, tt.ns, tt.domain, got, tt.want)
		}
	}
}

func TestC06GatewayReferences(t *testing.T) {
	tests := []struct{ ref, ns, want string }{
		{"./gateway", "default", "default/gateway"},
		{"gateway", "default", "default/gateway"},
		{"default/gateway", "foo", "default/gateway"},
		{"gateway.default", "foo", "default/gateway"},
		{"private.ingress.svc.cluster.local", "foo", "ingress/private"},
		{"mesh", "foo", "mesh"},
	}
	for _, tt := range tests {
		if got := GatewayRef(tt.ref, tt.ns); got != tt.want {
			t.Errorf("GatewayRef(%q, %q) = %q, want %q", tt.ref, tt.ns, got, tt.want)
		}
	}
}

func BenchmarkIndexLookup(b *testing.B) {
	var keys []Name
	for i := range 4000 {
		keys = append(keys, Name(fmt.Sprintf("svc-%d.ns-%d.svc.cluster.local", i%20, i/20)))
	}
	keys = append(keys, "*.ns-7.svc.cluster.local", "*.svc.cluster.local", "*.example.com")
	x := NewIndex(keys)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		x.Lookup(keys[i%len(keys)])
		x.Lookup("api.other.example.com")
	}
}
