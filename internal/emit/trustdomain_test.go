package emit

import (
	"slices"
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestTrustDomainAliases: testdata/fidelity/trust-domain-aliases, a mesh
// with trustDomain example.org and aliases given unsorted and repeated.
// A cluster's SANs name each SPIFFE identity in the trust domain and in
// every alias (a ServiceEntry's too; its other names and a DestinationRule's
// own SANs stay as written); inbound mutual TLS accepts the trust domain,
// the aliases sorted, then the caCertificates' trust domains, each once.
// As istiod's generator builds the fixture (checked with meshc-fidelity).
func TestTrustDomainAliases(t *testing.T) {
	m := resolvetest.Mesh(t, fidelityFixture(t, "trust-domain-aliases"))
	v, ok := m.View("app", "client")
	if !ok {
		t.Fatal("no proxy app/client")
	}
	cfg := New(m, Options{Format: XDS}).Build(v)
	for _, tc := range []struct {
		cluster string
		sans    []string
	}{
		{"outbound|9080||api.app.svc.cluster.local", []string{"spiffe://cluster.local/ns/app/sa/api-sa", "spiffe://example.org/ns/app/sa/api-sa", "spiffe://old.example.net/ns/app/sa/api-sa"}},
		{"outbound|7001||auto.legacy.internal", []string{"db.legacy.internal", "spiffe://cluster.local/ns/legacy/sa/db", "spiffe://example.org/not/an/identity", "spiffe://example.org/ns/legacy/sa/db", "spiffe://old.example.net/ns/legacy/sa/db"}},
		{"outbound|7000||legacy.internal", []string{"spiffe://example.org/ns/legacy/sa/pinned"}},
	} {
		c := clusterNamed(cfg, tc.cluster)
		ts := c.GetTransportSocket()
		if ms := c.GetTransportSocketMatches(); len(ms) > 0 {
			ts = ms[0].GetTransportSocket()
		}
		var ctx tlsv3.UpstreamTlsContext
		if err := ts.GetTypedConfig().UnmarshalTo(&ctx); err != nil {
			t.Fatalf("%s: %v", tc.cluster, err)
		}
		if got := matched(ctx.GetCommonTlsContext()); !slices.Equal(got, tc.sans) {
			t.Errorf("%s: SANs %v, want %v", tc.cluster, got, tc.sans)
		}
	}
	want := []string{"spiffe://example.org/", "spiffe://cluster.local/", "spiffe://old.example.net/", "spiffe://partner.example.com/"}
	tlsChains := 0
	for _, fc := range listenerNamed(cfg, "virtualInbound").GetFilterChains() {
		if fc.GetTransportSocket() == nil {
			continue
		}
		tlsChains++
		var ctx tlsv3.DownstreamTlsContext
		if err := fc.GetTransportSocket().GetTypedConfig().UnmarshalTo(&ctx); err != nil {
			t.Fatalf("%s: %v", fc.GetName(), err)
		}
		if got := matched(ctx.GetCommonTlsContext()); !slices.Equal(got, want) {
			t.Errorf("inbound chain %s accepts %v, want %v", fc.GetName(), got, want)
		}
	}
	if tlsChains == 0 {
		t.Error("virtualInbound has no mutual TLS chain")
	}
}

// matched lists the SAN matchers of a TLS context's validation, exact
// names and prefixes alike.
func matched(common *tlsv3.CommonTlsContext) []string {
	var out []string
	for _, m := range common.GetCombinedValidationContext().GetDefaultValidationContext().GetMatchSubjectAltNames() { //nolint:staticcheck // the field istiod sets
		switch p := m.GetMatchPattern().(type) {
		case *matcherv3.StringMatcher_Exact:
			out = append(out, p.Exact)
		case *matcherv3.StringMatcher_Prefix:
			out = append(out, p.Prefix)
		}
	}
	return out
}
