// Package host holds hostnames as Istio matches them: exact and wildcard
// names, overlap and containment, the "most specific" order, short-name
// expansion and gateway references.
package host

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
)

// Name is a hostname: exact ("reviews.default.svc.cluster.local") or
// wildcard ("*.example.com", "*"). Matching is case-sensitive, as in
// istiod.
type Name string

// IsWildcard reports whether the name starts with "*".
func (n Name) IsWildcard() bool { return len(n) > 0 && n[0] == '*' }

// suffix is the part after a leading "*"; the whole name otherwise.
func (n Name) suffix() string {
	if n.IsWildcard() {
		return string(n[1:])
	}
	return string(n)
}

// Matches reports whether two names overlap: some hostname satisfies both.
func (n Name) Matches(o Name) bool {
	switch nw, ow := n.IsWildcard(), o.IsWildcard(); {
	case !nw && !ow:
		return n == o
	case nw && !ow:
		return strings.HasSuffix(string(o), n.suffix())
	case !nw && ow:
		return strings.HasSuffix(string(n), o.suffix())
	}
	if len(n) < len(o) {
		return strings.HasSuffix(o.suffix(), n.suffix())
	}
	return strings.HasSuffix(n.suffix(), o.suffix())
}

// SubsetOf reports whether every hostname n covers is covered by o.
func (n Name) SubsetOf(o Name) bool {
	switch nw, ow := n.IsWildcard(), o.IsWildcard(); {
	case !nw && !ow:
		return n == o
	case nw && !ow:
		return false
	case !nw && ow:
		return strings.HasSuffix(string(n), o.suffix())
	}
	return len(n) >= len(o) && strings.HasSuffix(n.suffix(), o.suffix())
}

// Compare orders names most specific first: exact names before wildcards,
// then longer before shorter, then lexicographically.
func Compare(a, b Name) int {
	aw, bw := a.IsWildcard(), b.IsWildcard()
	if aw != bw {
		if aw {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b))
}

// Sort orders names with Compare.
func Sort(names []Name) { slices.SortFunc(names, Compare) }

// Intersection keeps, for each pair of a and b that is nested, the more
// specific name, without duplicates, in order of first appearance.
func Intersection(a, b []Name) []Name {
	var out []Name
	add := func(n Name) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, x := range a {
		for _, y := range b {
			switch {
			case x.SubsetOf(y):
				add(x)
			case y.SubsetOf(x):
				add(y)
			}
		}
	}
	return out
}

// NamesForNamespace reads Gateway server hosts ("ns/host", or a bare host)
// as seen by VirtualServices of namespace ns.
func NamesForNamespace(hosts []string, ns string) []Name {
	var out []Name
	for _, h := range hosts {
		if x, name, ok := strings.Cut(h, "/"); ok {
			if x == ns || x == "*" {
				out = append(out, Name(name))
			}
			continue
		}
		out = append(out, Name(h))
	}
	return out
}

// FQDN expands a short name the way Istio expands config hosts: "*", IP
// literals and names with a dot stay as they are; "foo" in namespace ns
// becomes foo.ns.svc.<domain>.
func FQDN(h, ns, domain string) Name {
	if h == "*" || strings.Contains(h, ".") {
		return Name(h)
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return Name(h)
	}
	switch {
	case domain == "":
		return Name(h + "." + ns)
	case ns == "":
		return Name(h + ".svc." + domain)
	}
	return Name(h + "." + ns + ".svc." + domain)
}

// GatewayRef resolves a VirtualService's gateway reference to
// "namespace/name"; "mesh" stays "mesh".
func GatewayRef(ref, vsNs string) string {
	if ref == "mesh" {
		return ref
	}
	if ns, name, ok := strings.Cut(ref, "/"); ok {
		if ns == "." {
			return vsNs + "/" + name
		}
		return ref
	}
	// Legacy form name.namespace[.anything].
	if name, rest, ok := strings.Cut(ref, "."); ok {
		ns, _, _ := strings.Cut(rest, ".")
		return ns + "/" + name
	}
	return vsNs + "/" + ref
}

// Index finds the most specific key matching a name, as istiod's
// MostSpecificHostMatch does for DestinationRule and VirtualService hosts.
// Exact keys are a map lookup; wildcard keys are scanned in most-specific
// order, so a lookup costs one map probe plus the wildcard keys.
type Index struct {
	exact     map[Name]bool
	wildcards []Name // most specific first
}

// NewIndex indexes keys.
func NewIndex(keys []Name) *Index {
	x := &Index{exact: map[Name]bool{}}
	for _, k := range keys {
		if k.IsWildcard() {
			x.wildcards = append(x.wildcards, k)
		} else {
			x.exact[k] = true
		}
	}
	Sort(x.wildcards)
	x.wildcards = slices.Compact(x.wildcards)
	return x
}

// Lookup returns the most specific key for needle: an equal key, else the
// most specific wildcard key covering it. Exact keys never match a
// wildcard needle.
func (x *Index) Lookup(needle Name) (Name, bool) {
	if !needle.IsWildcard() {
		if x.exact[needle] {
			return needle, true
		}
		for _, w := range x.wildcards {
			if strings.HasSuffix(string(needle), w.suffix()) {
				return w, true
			}
		}
		return "", false
	}
	for _, w := range x.wildcards {
		if w == needle {
			return w, true
		}
	}
	for _, w := range x.wildcards {
		if strings.HasSuffix(needle.suffix(), w.suffix()) {
			return w, true
		}
	}
	return "", false
}
