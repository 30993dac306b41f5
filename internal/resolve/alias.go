package resolve

import (
	"cmp"
	"slices"

	"github.com/meshc/meshc/internal/host"
)

// ServiceAlias is an ExternalName service that names another service of
// the mesh (docs/semantics/registry.md §1.1): no clusters or listeners of its own, but its
// names reach the concrete service.
type ServiceAlias struct {
	Namespace string
	Host      host.Name
}

// resolveAliases gives every service the ExternalName services that name
// its hostname, directly or through other ExternalName services, sorted by
// namespace then hostname. A chain that loops names nothing; an
// ExternalName outside the mesh has no effect.
func resolveAliases(services []*Service) {
	target := map[ServiceAlias]host.Name{}
	// ExternalName is not namespaced: chains follow hostnames.
	next := map[host.Name]host.Name{}
	for _, s := range services {
		if s.Resolution == Alias {
			target[ServiceAlias{s.Namespace, s.Host}] = host.Name(s.ExternalName)
			next[s.Host] = host.Name(s.ExternalName)
		}
	}
	if len(target) == 0 {
		return
	}
	byConcrete := map[host.Name][]ServiceAlias{}
	for a, t := range target {
		seen := map[host.Name]bool{a.Host: true, t: true}
		for {
			n, isAlias := next[t]
			if !isAlias {
				byConcrete[t] = append(byConcrete[t], a)
				break
			}
			if seen[n] {
				break
			}
			seen[n] = true
			t = n
		}
	}
	for _, as := range byConcrete {
		slices.SortFunc(as, func(x, y ServiceAlias) int {
			return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Host, y.Host))
		})
	}
	for _, s := range services {
		if as, ok := byConcrete[s.Host]; ok {
			s.Aliases = as
		}
	}
}

// aliasesImported keeps the aliases of s an egress host class imports,
// copying s only when some are dropped.
func aliasesImported(s *Service, c *hostClass) *Service {
	if len(s.Aliases) == 0 {
		return s
	}
	kept := slices.DeleteFunc(slices.Clone(s.Aliases), func(a ServiceAlias) bool {
		_, ok := c.matches(a.Host)
		return !ok
	})
	if len(kept) == len(s.Aliases) {
		return s
	}
	t := *s
	t.Aliases = kept
	return &t
}

// Concrete is the host a route destination naming s reaches: an
// ExternalName service sends to the name it holds (one hop, as istiod).
func (s *Service) Concrete() host.Name {
	if s.ExternalName != "" {
		return host.Name(s.ExternalName)
	}
	return s.Host
}

// named says whether d is the service's hostname or an alias's.
func (s *Service) named(d string) bool {
	return d == string(s.Host) || slices.ContainsFunc(s.Aliases, func(a ServiceAlias) bool { return string(a.Host) == d })
}

// ServerNames are the SNI names a TLS chain of s matches when its
// listener cannot tell services apart by address (docs/semantics/envoy-output.md §7.4): the
// hostname, then each alias with the names a client in the proxy's
// namespace may use for it.
func (m *Mesh) ServerNames(s *Service, p *Proxy) []string {
	return m.appendAliasNames([]string{string(s.Host)}, s, p.Namespace)
}

// appendAliasNames appends each alias of s with the names a client in
// namespace ns may use for it.
func (m *Mesh) appendAliasNames(out []string, s *Service, ns string) []string {
	for _, a := range s.Aliases {
		out = append(out, string(a.Host), string(a.Host)+".")
		out = append(out, shortForms(string(a.Host), ns, m.Config.DomainSuffix)...)
	}
	return out
}
