package istiodcompare

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/envoycfg"
)

// oracleJSON is a proxy as the oracle prints it: camelCase, an Istio
// extension filter, tracing on the connection manager, an endpoint.
const oracleJSON = `{"proxy": "web.shop",
 "clusters": [{"name": "outbound|80||a.shop.svc.cluster.local", "type": "EDS", "connectTimeout": "10s",
   "filters": [{"name": "istio.metadata_exchange", "typedConfig": {"@type": "type.googleapis.com/io.istio.whatever.Config", "protocol": "istio-peer-exchange"}}]},
  {"name": "only-istiod", "type": "STATIC"}],
 "listeners": [{"name": "0.0.0.0_80", "filterChains": [{"filters": [{"name": "envoy.filters.network.http_connection_manager",
   "typedConfig": {"@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
     "statPrefix": "outbound_0.0.0.0_80", "tracing": {"clientSampling": {"value": 100}},
     "httpFilters": [{"name": "istio.alpn", "typedConfig": {"@type": "type.googleapis.com/istio.envoy.config.filter.http.alpn.v2alpha1.FilterConfig"}},
                     {"name": "envoy.filters.http.router", "typedConfig": {"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}]}}]}]}],
 "routes": [], "endpoints": [{"clusterName": "outbound|80||a.shop.svc.cluster.local"}]}`

func TestLoadOracleAndCompare(t *testing.T) {
	want, err := LoadOracle([]byte(oracleJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 1 || want[0].ID != "shop/web" || len(want[0].Config.Resources()) != 4 {
		t.Fatalf("loaded %+v", want)
	}
	// meshc's side: the same without Istio's extensions and tracing, one
	// cluster of its own, the endpoint with another cluster name inside.
	mine, err := LoadOracle([]byte(strings.NewReplacer(
		`"filters": [{"name": "istio.metadata_exchange", "typedConfig": {"@type": "type.googleapis.com/io.istio.whatever.Config", "protocol": "istio-peer-exchange"}}]`, `"filters": []`,
		`"tracing": {"clientSampling": {"value": 100}},`, ``,
		`{"name": "istio.alpn", "typedConfig": {"@type": "type.googleapis.com/istio.envoy.config.filter.http.alpn.v2alpha1.FilterConfig"}},`, ``,
		`{"name": "only-istiod", "type": "STATIC"}`, `{"name": "only-meshc", "type": "STATIC"}`,
		`"connectTimeout": "10s"`, `"connectTimeout": "5s"`,
	).Replace(oracleJSON)))
	if err != nil {
		t.Fatal(err)
	}
	r := Compare(want[0], mine[0], Exclusions)
	only := func(name string) []envoycfg.Key { return []envoycfg.Key{{Type: envoycfg.Cluster, Name: name}} }
	if r.Equal != 2 || len(r.Differ) != 1 || len(r.Differ[0].Changes) != 1 ||
		r.Differ[0].Changes[0].String() != "~ cluster outbound|80||a.shop.svc.cluster.local › connect_timeout: 10s → 5s" ||
		!slices.Equal(r.Missing, only("only-istiod")) || !slices.Equal(r.Extra, only("only-meshc")) {
		t.Errorf("report %+v", r)
	}
	// Without the exclusions, the listener differs too.
	if r := Compare(want[0], mine[0], nil); len(r.Differ) != 2 {
		t.Errorf("without exclusions: %d resources differ, want 2 (the cluster, the listener)", len(r.Differ))
	}
}

// TestCompareIgnoresEndpointOrder: one assignment with its endpoints and
// localities in two orders is equal after the exclusions, and only then.
func TestCompareIgnoresEndpointOrder(t *testing.T) {
	const proxy = `{"proxy": "web.shop", "endpoints": [{"clusterName": "c", "endpoints": [%s]}]}`
	a := `{"locality": {"zone": "a"}, "lbEndpoints": [{"endpoint": {"address": {"socketAddress": {"address": "10.0.0.9", "portValue": 80}}}}, {"endpoint": {"address": {"socketAddress": {"address": "10.0.0.10", "portValue": 80}}}}]}`
	b := `{"locality": {"zone": "b"}, "lbEndpoints": [{"endpoint": {"address": {"pipe": {"path": "/s"}}}}, {"endpoint": {"address": {"socketAddress": {"address": "10.0.0.1", "portValue": 80}}}}]}`
	aSwapped := `{"locality": {"zone": "a"}, "lbEndpoints": [{"endpoint": {"address": {"socketAddress": {"address": "10.0.0.10", "portValue": 80}}}}, {"endpoint": {"address": {"socketAddress": {"address": "10.0.0.9", "portValue": 80}}}}]}`
	want, err := LoadOracle([]byte(fmt.Sprintf(proxy, a+", "+b)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadOracle([]byte(fmt.Sprintf(proxy, b+", "+aSwapped)))
	if err != nil {
		t.Fatal(err)
	}
	if r := Compare(want[0], got[0], Exclusions); r.Equal != 1 || len(r.Differ) != 0 {
		t.Errorf("with the exclusions: %+v", r)
	}
	if r := Compare(want[0], got[0], nil); len(r.Differ) != 1 {
		t.Errorf("without the exclusions: %+v, want the assignment to differ", r)
	}
}
