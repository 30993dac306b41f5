package resolve

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/host"
)

func aliasSvc(name, ns, target string) *Service {
	return &Service{Host: host.FQDN(name, ns, "cluster.local"), Namespace: ns, Resolution: Alias, ExternalName: target}
}

func aliasNames(s *Service) []string {
	return mapSlice(s.Aliases, func(a ServiceAlias) string { return a.Namespace + "/" + string(a.Host) })
}

// TestResolveAliases: docs/semantics/registry.md §1.1 ExternalName aliases: each concrete
// service lists the aliases naming it, chains flattened, sorted by
// namespace then host; a loop or a name outside the mesh names nothing.
func TestResolveAliases(t *testing.T) {
	const concrete = "concrete.default.svc.cluster.local"
	c := svc(concrete, "default", kube)
	c2 := svc(concrete, "other", kube) // the same hostname elsewhere
	services := []*Service{
		c, c2,
		aliasSvc("b", "default", concrete),
		aliasSvc("a", "x", concrete),
		aliasSvc("a", "default", concrete),
		aliasSvc("hop", "default", "b.default.svc.cluster.local"),
		aliasSvc("loop1", "default", "loop2.default.svc.cluster.local"),
		aliasSvc("loop2", "default", "loop1.default.svc.cluster.local"),
		aliasSvc("ext", "default", "example.com"),
	}
	resolveAliases(services)
	want := []string{"default/a.default.svc.cluster.local", "default/b.default.svc.cluster.local", "default/hop.default.svc.cluster.local", "x/a.x.svc.cluster.local"}
	for _, s := range []*Service{c, c2} {
		if got := aliasNames(s); !slices.Equal(got, want) {
			t.Errorf("%s aliases = %v\nwant %v", s, got, want)
		}
	}
	for _, s := range services[2:] {
		if len(s.Aliases) > 0 {
			t.Errorf("alias %s got aliases %v", s, aliasNames(s))
		}
	}
}

// TestAliasDomainsAndServerNames: aliases add their names, in every form
// the proxy's namespace can use, after the service's own; a Sidecar keeps
// only the aliases the host class that imported the service matches.
func TestAliasDomainsAndServerNames(t *testing.T) {
	m := &Mesh{}
	m.Config.DomainSuffix = "cluster.local"
	const concrete = "concrete.default.svc.cluster.local"
	s := svc(concrete, "default", kube, ports(80))
	s.Aliases = []ServiceAlias{{"default", "alias.default.svc.cluster.local"}, {"other", "alias.other.svc.cluster.local"}}
	p := &Proxy{Namespace: "default"}
	wantNames := []string{concrete, "alias.default.svc.cluster.local", "alias.default.svc.cluster.local.", "alias", "alias.default.svc", "alias.default",
		"alias.other.svc.cluster.local", "alias.other.svc.cluster.local.", "alias.other", "alias.other.svc"}
	if got := m.ServerNames(s, p); !slices.Equal(got, wantNames) {
		t.Errorf("server names = %v\nwant %v", got, wantNames)
	}
	wantDomains := append([]string{concrete, concrete + ".", "concrete", "concrete.default.svc", "concrete.default"}, wantNames[1:]...)
	if got := m.serviceDomains(s, clientOf(p)); !slices.Equal(got, wantDomains) {
		t.Errorf("domains = %v\nwant %v", got, wantDomains)
	}

	for _, tc := range []struct {
		hosts string
		want  []string
	}{
		{`["*/*"]`, []string{"default/alias.default.svc.cluster.local", "other/alias.other.svc.cluster.local"}},
		// A class matches alias names alone, whatever their namespace.
		{`["default/*"]`, []string{"default/alias.default.svc.cluster.local", "other/alias.other.svc.cluster.local"}},
		{`["*/concrete.default.svc.cluster.local"]`, []string{}},
		{`["default/concrete.default.svc.cluster.local", "default/alias.other.svc.cluster.local"]`, []string{"other/alias.other.svc.cluster.local"}},
	} {
		sc := scopeFor(t, "default", fmt.Sprintf("{egress: [{hosts: %s}]}", tc.hosts), s)
		got := []string{}
		for _, l := range sc.Listeners {
			for _, t := range l.Services {
				got = aliasNames(t)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("hosts %s: aliases %v, want %v", tc.hosts, got, tc.want)
		}
	}
}
