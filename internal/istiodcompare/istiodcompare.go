// Package istiodcompare compares meshc's Envoy configuration with istiod's on
// files: it reads istiod's side from the JSON a program built from
// Istio's own generator prints (beside the project, never a dependency of
// its tests) and meshc's from an xds build with whole per-proxy files,
// then compares them with internal/envdiff, resource by resource and
// field by field. What meshc leaves out on purpose is the audited list
// Exclusions, applied to both sides before comparing.
package istiodcompare

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/meshc/meshc/internal/envdiff"
	"github.com/meshc/meshc/internal/envoycfg"
)

// Proxy is one proxy's configuration as read from files.
type Proxy struct {
	ID     string
	Config *envoycfg.Config
}

// oracleProxy is one proxy as the oracle prints it.
type oracleProxy struct {
	Proxy     string            `json:"proxy"`
	Clusters  []json.RawMessage `json:"clusters"`
	Listeners []json.RawMessage `json:"listeners"`
	Routes    []json.RawMessage `json:"routes"`
	Endpoints []json.RawMessage `json:"endpoints"`
}

// LoadOracle reads the oracle's output: one proxy object, or an array.
func LoadOracle(data []byte) ([]Proxy, error) {
	var many []oracleProxy
	if err := json.Unmarshal(data, &many); err != nil {
		var one oracleProxy
		if err := json.Unmarshal(data, &one); err != nil {
			return nil, fmt.Errorf("oracle output: %w", err)
		}
		many = []oracleProxy{one}
	}
	var out []Proxy
	for _, op := range many {
		ls, err := decodeAll[listenerv3.Listener](op.Listeners)
		if err != nil {
			return nil, fmt.Errorf("oracle proxy %s: %w", op.Proxy, err)
		}
		cs, err := decodeAll[clusterv3.Cluster](op.Clusters)
		if err != nil {
			return nil, fmt.Errorf("oracle proxy %s: %w", op.Proxy, err)
		}
		rs, err := decodeAll[routev3.RouteConfiguration](op.Routes)
		if err != nil {
			return nil, fmt.Errorf("oracle proxy %s: %w", op.Proxy, err)
		}
		eps, err := decodeAll[endpointv3.ClusterLoadAssignment](op.Endpoints)
		if err != nil {
			return nil, fmt.Errorf("oracle proxy %s: %w", op.Proxy, err)
		}
		cfg, err := envoycfg.New(ls, cs, rs, eps, nil)
		if err != nil {
			return nil, fmt.Errorf("oracle proxy %s: %w", op.Proxy, err)
		}
		out = append(out, Proxy{ID: proxyID(op.Proxy), Config: cfg})
	}
	return out, nil
}

// decodeAll decodes JSON resources of one type.
func decodeAll[T any, PT interface {
	*T
	proto.Message
}](raws []json.RawMessage) ([]PT, error) {
	out := make([]PT, 0, len(raws))
	for _, raw := range raws {
		m := PT(new(T))
		if err := unmarshal(raw, m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// proxyID turns the oracle's "name.namespace" into "namespace/name".
func proxyID(s string) string {
	if i := strings.LastIndexByte(s, '.'); i > 0 && !strings.Contains(s, "/") {
		return s[i+1:] + "/" + s[:i]
	}
	return s
}

// unmarshal decodes JSON into m; an Any of a type go-control-plane does
// not know (Istio's own extensions) becomes a Struct holding its fields.
func unmarshal(raw []byte, m proto.Message) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	fixed, err := json.Marshal(replaceUnknownAnys(v))
	if err != nil {
		return err
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(fixed, m)
}

func replaceUnknownAnys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = replaceUnknownAnys(e)
		}
		if t, ok := x["@type"].(string); ok {
			if _, err := protoregistry.GlobalTypes.FindMessageByURL(t); err != nil {
				delete(x, "@type")
				return map[string]any{"@type": "type.googleapis.com/google.protobuf.Struct", "value": map[string]any{"unknownType": t, "fields": x}}
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = replaceUnknownAnys(e)
		}
	}
	return v
}

// LoadBuild reads a meshc xds build with whole per-proxy files: every
// proxy of its index.json.
func LoadBuild(dir string) ([]Proxy, error) {
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, err
	}
	var index struct {
		Proxies []struct{ Namespace, Name, Path string }
	}
	if err := json.Unmarshal(data, &index); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var out []Proxy
	for _, e := range index.Proxies {
		var (
			ls  []*listenerv3.Listener
			cs  []*clusterv3.Cluster
			rs  []*routev3.RouteConfiguration
			eps []*endpointv3.ClusterLoadAssignment
		)
		for _, f := range []string{"clusters.json", "endpoints.json", "listeners.json", "routes.json"} {
			data, err := os.ReadFile(filepath.Join(dir, e.Path, f))
			if err != nil {
				return nil, fmt.Errorf("%s (an xds build with --self-contained?): %w", e.Path, err)
			}
			var resp discoveryv3.DiscoveryResponse
			if err := protojson.Unmarshal(data, &resp); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", e.Path, f, err)
			}
			for _, a := range resp.GetResources() {
				m, err := a.UnmarshalNew()
				if err != nil {
					return nil, fmt.Errorf("%s/%s: %w", e.Path, f, err)
				}
				switch r := m.(type) {
				case *listenerv3.Listener:
					ls = append(ls, r)
				case *clusterv3.Cluster:
					cs = append(cs, r)
				case *routev3.RouteConfiguration:
					rs = append(rs, r)
				case *endpointv3.ClusterLoadAssignment:
					eps = append(eps, r)
				default:
					return nil, fmt.Errorf("%s/%s: unexpected resource %s", e.Path, f, a.GetTypeUrl())
				}
			}
		}
		cfg, err := envoycfg.New(ls, cs, rs, eps, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Path, err)
		}
		out = append(out, Proxy{ID: e.Namespace + "/" + e.Name, Config: cfg})
	}
	return out, nil
}

// Report is the comparison of one proxy.
type Report struct {
	ID             string
	Equal          int
	Missing, Extra []envoycfg.Key // in istiod's output only, in meshc's only
	Differ         []Difference
}

// Difference is one resource both sides have, unequal.
type Difference struct {
	Key     envoycfg.Key
	Changes []envdiff.Change
}

// Compare compares one proxy, istiod's (want) with meshc's (got), after
// the exclusions: istiod's side is the old one of each change.
func Compare(want, got Proxy, exclusions []Exclusion) Report {
	r := Report{ID: want.ID}
	keys := map[envoycfg.Key]bool{}
	for _, cfg := range []*envoycfg.Config{want.Config, got.Config} {
		for _, m := range cfg.Resources() {
			k, _ := envoycfg.KeyOf(m)
			keys[k] = true
		}
	}
	sorted := make([]envoycfg.Key, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b envoycfg.Key) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range sorted {
		if excluded(k, exclusions) {
			continue
		}
		w, wok := want.Config.Get(k)
		g, gok := got.Config.Get(k)
		switch {
		case !gok:
			r.Missing = append(r.Missing, k)
		case !wok:
			r.Extra = append(r.Extra, k)
		default:
			w, g = proto.Clone(w), proto.Clone(g)
			for _, e := range exclusions {
				if e.Normalize != nil {
					e.Normalize(w)
					e.Normalize(g)
				}
			}
			if cs := envdiff.Resources(k, w, g); len(cs) > 0 {
				r.Differ = append(r.Differ, Difference{Key: k, Changes: cs})
			} else {
				r.Equal++
			}
		}
	}
	return r
}

func excluded(key envoycfg.Key, exclusions []Exclusion) bool {
	return slices.ContainsFunc(exclusions, func(e Exclusion) bool { return e.Skip != nil && e.Skip(key) })
}
