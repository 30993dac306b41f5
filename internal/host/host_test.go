package host

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestC01Matches pins docs/semantics/cases.md C01 plus the partial-wildcard rule of
// §3.2. Every row is also checked with the operands swapped, since Matches
// is symmetric.
func TestC01Matches(t *testing.T) {
	tests := []struct {
		a, b Name
		want bool
	}{
		{"", "", true},
		{"a.facebook.com", "*.facebook.COM", false}, // case-sensitive
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
		// Additional: partial wildcards are plain suffixes (§3.2).
		{"*foo.com", "barfoo.com", true},
		{"*foo.com", "foo.com", true},
		{"*foo.com", "*.foo.com", true},
		{"*foo.com", "bar.com", false},
		{"*.foo.com", "*.bar.com", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q~%q", tt.a, tt.b), func(t *testing.T) {
			if got := tt.a.Matches(tt.b); got != tt.want {
				t.Errorf("%q.Matches(%q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := tt.b.Matches(tt.a); got != tt.want {
				t.Errorf("%q.Matches(%q) = %v, want %v (symmetry)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

// TestC02SubsetOf pins docs/semantics/cases.md C02.
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
		{"*.com", "*.foo.com", false}, // the reverse of Matches
		{"*.foo.com", "foo.com", false},
		{"*.foo.bar.baz", "baz", false},
		{"foo.bar.baz", "*.baz", true},
		{"", "", true},
		{"", "foo.com", false},
		// Additional.
		{"*", "*.com", false},
		{"barfoo.com", "*foo.com", true},
		{"foo.com", "*foo.com", true},
		{"*.foo.com", "*foo.com", true},
		{"*foo.com", "*.foo.com", false},
		{"foo.com", "Foo.com", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q<=%q", tt.a, tt.b), func(t *testing.T) {
			if got := tt.a.SubsetOf(tt.b); got != tt.want {
				t.Errorf("%q.SubsetOf(%q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// TestC03Sort pins docs/semantics/cases.md C03: sort order, Intersection and
// NamesForNamespace.
func TestC03Sort(t *testing.T) {
	t.Run("Sort", func(t *testing.T) {
		for _, tt := range []struct{ in, want []Name }{
			{[]Name{"b", "a", "aa"}, []Name{"aa", "a", "b"}},
			{[]Name{"foo.com", "bar.com", "foo.bar.com"}, []Name{"foo.bar.com", "bar.com", "foo.com"}},
			{[]Name{"a", "*", "z"}, []Name{"a", "z", "*"}},
			{
				[]Name{"foo.com", "bar.com", "*.com", "*.foo.com", "*", "baz.bar.com"},
				[]Name{"baz.bar.com", "bar.com", "foo.com", "*.foo.com", "*.com", "*"},
			},
		} {
			got := slices.Clone(tt.in)
			Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Sort(%q) = %q, want %q", tt.in, got, tt.want)
			}
		}
	})
	t.Run("Intersection", func(t *testing.T) {
		for _, tt := range []struct{ a, b, want []Name }{
			{[]Name{"foo.com", "*.net"}, []Name{"*.com", "bar.net"}, []Name{"foo.com", "bar.net"}},
			{[]Name{"foo.com", "*.net"}, []Name{"*.bar.net"}, []Name{"*.bar.net"}},
			{[]Name{"*", "foo.com"}, []Name{"foo.com"}, []Name{"foo.com"}},
			{[]Name{"foo.com"}, []Name{"Foo.com"}, []Name{}},
			// Additional: equal wildcards, and no empty results for
			// overlapping-but-not-nested wildcards.
			{[]Name{"*.com"}, []Name{"*.com", "*.foo.com"}, []Name{"*.com", "*.foo.com"}},
			{[]Name{"*foo.com"}, []Name{"*.bar.com"}, []Name{}},
		} {
			if got := Intersection(tt.a, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("Intersection(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
			}
		}
	})
	t.Run("NamesForNamespace", func(t *testing.T) {
		for _, tt := range []struct {
			hosts []string
			ns    string
			want  []Name
		}{
			{[]string{"ns1/foo.com", "*/bar.com"}, "ns3", []Name{"bar.com"}},
			{[]string{"foo.com", "ns2/bar.com"}, "ns3", []Name{"foo.com"}},
			// Additional.
			{[]string{"ns3/*.foo.com", "./bar.com", "*/*"}, "ns3", []Name{"*.foo.com", "*"}},
		} {
			if got := NamesForNamespace(tt.hosts, tt.ns); !slices.Equal(got, tt.want) {
				t.Errorf("NamesForNamespace(%q, %q) = %q, want %q", tt.hosts, tt.ns, got, tt.want)
			}
		}
	})
}

// TestC04MostSpecificHostMatch pins docs/semantics/cases.md C04 for both
// MostSpecificMatch and Index.
func TestC04MostSpecificHostMatch(t *testing.T) {
	tests := []struct {
		keys   []Name
		needle Name
		want   Name
		ok     bool
	}{
		{[]Name{"*.foo.com", "*.com"}, "bar.foo.com", "*.foo.com", true},
		{[]Name{"*.foo.com", "*.com"}, "foo.com", "*.com", true},
		{[]Name{"foo.com", "*.com"}, "*.foo.com", "*.com", true},
		{[]Name{"*.foo.com", "foo.com"}, "foo.com", "foo.com", true},
		{[]Name{"*.foo.com", "foo.com"}, "*.foo.com", "*.foo.com", true},
		{[]Name{"bar.com", "foo.com"}, "*.com", "", false},
		{[]Name{"*.bar.com", "foo.bar.com"}, "foo.bar.com", "foo.bar.com", true},
		{[]Name{"bar.foo.com", "foo.bar.com"}, "*.foo.com", "", false},
		// Additional.
		{nil, "foo.com", "", false},
		{[]Name{"*"}, "", "*", true},
		{[]Name{""}, "", "", true},                             // "" is an exact key equal to the needle
		{[]Name{"*", "*.com", "*m"}, "foo.com", "*.com", true}, // longest suffix wins
		{[]Name{"*foo.com", "*.com"}, "barfoo.com", "*foo.com", true},
		{[]Name{"*.com", "*"}, "*", "*", true},
		{[]Name{"*.com"}, "*", "", false}, // a narrower wildcard never covers a wider needle
		{[]Name{"*.foo.com", "*.com", "*.bar.foo.com"}, "*.bar.foo.com", "*.bar.foo.com", true},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%q@%q", tt.needle, tt.keys)
		t.Run(name, func(t *testing.T) {
			got, ok := MostSpecificMatch(tt.needle, tt.keys)
			if got != tt.want || ok != tt.ok {
				t.Errorf("MostSpecificMatch = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
			got, ok = NewIndex(tt.keys).Lookup(tt.needle)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Index.Lookup = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestC05ShortNames pins docs/semantics/cases.md C05.
func TestC05ShortNames(t *testing.T) {
	tests := []struct{ h, ns, domain, want string }{
		{"foo", "default", "cluster.local", "foo.default.svc.cluster.local"},
		{"foo.bar", "default", "cluster.local", "foo.bar"},
		{"*", "default", "cluster.local", "*"},
		{"42.185.131.210", "default", "cluster.local", "42.185.131.210"},
		{"2a00:4000::614", "default", "cluster.local", "2a00:4000::614"},
		{"foo", "", "cluster.local", "foo.svc.cluster.local"},
		{"foo", "default", "", "foo.default"},
		// Additional.
		{"reviews.default", "default", "cluster.local", "reviews.default"}, // the §3.1 trap
		{"*.foo", "default", "cluster.local", "*.foo"},
		{"foo", "", "", "foo"},
		{"", "default", "cluster.local", ""},
		{"::1", "default", "cluster.local", "::1"},
		{"fe80::1%eth0", "default", "cluster.local", "fe80::1%eth0"},
		{"2a00", "default", "cluster.local", "2a00.default.svc.cluster.local"},
		{"a:b", "default", "cluster.local", "a:b.default.svc.cluster.local"}, // a colon alone is no address
	}
	for _, tt := range tests {
		if got := FQDN(tt.h, tt.ns, tt.domain); string(got) != tt.want {
			t.Errorf("FQDN(%q, %q, %q) = %q, want %q", tt.h, tt.ns, tt.domain, got, tt.want)
		}
	}
}

// TestC06GatewayReferences pins docs/semantics/cases.md C06.
func TestC06GatewayReferences(t *testing.T) {
	tests := []struct{ ref, ns, want string }{
		{"./gateway", "default", "default/gateway"},
		{"gateway", "default", "default/gateway"},
		{"default/gateway", "foo", "default/gateway"},
		{"gateway.default", "foo", "default/gateway"},
		{"private.ingress.svc.cluster.local", "foo", "ingress/private"},
		// Additional (§3.1).
		{"mesh", "foo", "mesh"},
		{"*/gateway", "foo", "*/gateway"},
		{"gateway.default.svc", "foo", "default/gateway"},
	}
	for _, tt := range tests {
		if got := GatewayRef(tt.ref, tt.ns); got != tt.want {
			t.Errorf("GatewayRef(%q, %q) = %q, want %q", tt.ref, tt.ns, got, tt.want)
		}
	}
}

func TestIsWildcard(t *testing.T) {
	for n, want := range map[Name]bool{"*": true, "*.a": true, "*a": true, "": false, "a.*": false, "a": false} {
		if got := n.IsWildcard(); got != want {
			t.Errorf("%q.IsWildcard() = %v, want %v", n, got, want)
		}
	}
}

// names is a small universe of exact, wildcard and partial-wildcard names
// over a two-label alphabet, dense enough that many pairs overlap.
func names() []Name {
	out := []Name{"", "*"}
	labels := []string{"a", "b", "ab"}
	var build func(suffix string, depth int)
	build = func(suffix string, depth int) {
		for _, l := range labels {
			n := l + suffix
			out = append(out, Name(n), Name("*."+n), Name("*"+n))
			if depth > 1 {
				build("."+n, depth-1)
			}
		}
	}
	build("", 3)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestRelations checks algebraic properties of the relations over names():
// SubsetOf implies Matches, mutual SubsetOf means equality, and Compare is
// a total order.
func TestRelations(t *testing.T) {
	all := names()
	for _, a := range all {
		if !a.SubsetOf(a) || !a.Matches(a) || Compare(a, a) != 0 {
			t.Errorf("%q is not reflexive", a)
		}
		for _, b := range all {
			if a.SubsetOf(b) && !a.Matches(b) {
				t.Errorf("%q SubsetOf %q but does not match it", a, b)
			}
			if a != b && a.SubsetOf(b) && b.SubsetOf(a) {
				t.Errorf("%q and %q are mutual subsets", a, b)
			}
			if ab, ba := Compare(a, b), Compare(b, a); (ab < 0) != (ba > 0) || (ab == 0) != (a == b) {
				t.Errorf("Compare(%q, %q) = %d but Compare(%q, %q) = %d", a, b, ab, b, a, ba)
			}
		}
	}
}

// istiodMostSpecific restates istiod's lookup literally: exact map probe,
// then a scan keeping the MoreSpecific matching wildcard.
func istiodMostSpecific(needle Name, keys []Name) (Name, bool) {
	specific, wildcard := map[Name]bool{}, map[Name]bool{}
	for _, k := range keys {
		if k.IsWildcard() {
			wildcard[k] = true
		} else {
			specific[k] = true
		}
	}
	s := string(needle)
	if needle.IsWildcard() {
		if wildcard[needle] {
			return needle, true
		}
		s = s[1:]
	} else if specific[needle] {
		return needle, true
	}
	var best Name
	found := false
	for w := range wildcard {
		if strings.HasSuffix(s, string(w[1:])) && (!found || Compare(w, best) < 0) {
			best, found = w, true
		}
	}
	return best, found
}

// TestMostSpecificMatchAgrees checks MostSpecificMatch and Index against
// istiodMostSpecific on random key sets drawn from names().
func TestMostSpecificMatchAgrees(t *testing.T) {
	all := names()
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		var keys []Name
		for range r.IntN(12) {
			keys = append(keys, all[r.IntN(len(all))])
		}
		x := NewIndex(keys)
		for _, needle := range all {
			want, wantOK := istiodMostSpecific(needle, keys)
			if got, ok := MostSpecificMatch(needle, keys); got != want || ok != wantOK {
				t.Fatalf("MostSpecificMatch(%q, %q) = %q, %v; want %q, %v", needle, keys, got, ok, want, wantOK)
			}
			if got, ok := x.Lookup(needle); got != want || ok != wantOK {
				t.Fatalf("Index(%q).Lookup(%q) = %q, %v; want %q, %v", keys, needle, got, ok, want, wantOK)
			}
		}
	}
}

func TestZeroIndex(t *testing.T) {
	var x Index
	if got, ok := x.Lookup("foo.com"); ok || got != "" {
		t.Errorf("zero Index Lookup = %q, %v", got, ok)
	}
}

// benchKeys is a registry-sized key set: 3,600 service FQDNs across 180
// namespaces, 400 wildcards at several depths, and needles that hit exact
// keys, hit only a wildcard, or miss.
func benchKeys() (keys, needles []Name) {
	for i := range 3600 {
		keys = append(keys, Name(fmt.Sprintf("svc-%d.ns-%d.svc.cluster.local", i%20, i/20)))
	}
	for i := range 200 {
		keys = append(keys, Name(fmt.Sprintf("*.ns-%d.svc.cluster.local", i)))
		keys = append(keys, Name(fmt.Sprintf("*.api-%d.example.com", i)))
	}
	keys = append(keys, "*.svc.cluster.local", "*.example.com")
	needles = []Name{
		"svc-3.ns-17.svc.cluster.local",  // exact key
		"other.ns-150.svc.cluster.local", // namespace wildcard
		"v1.api-42.example.com",          // api wildcard
		"a.b.example.com",                // *.example.com
		"www.example.org",                // miss
		"*.api-42.example.com",           // wildcard needle
	}
	return keys, needles
}

func BenchmarkMostSpecificMatch(b *testing.B) {
	keys, needles := benchKeys()
	for _, needle := range needles {
		b.Run(string(needle), func(b *testing.B) {
			for b.Loop() {
				MostSpecificMatch(needle, keys)
			}
		})
	}
}

func BenchmarkIndexLookup(b *testing.B) {
	keys, needles := benchKeys()
	x := NewIndex(keys)
	for _, needle := range needles {
		b.Run(string(needle), func(b *testing.B) {
			for b.Loop() {
				x.Lookup(needle)
			}
		})
	}
}

func BenchmarkNewIndex(b *testing.B) {
	keys, _ := benchKeys()
	for b.Loop() {
		NewIndex(keys)
	}
}
