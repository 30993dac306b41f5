// Package fidelity compares meshc's Envoy configuration with istiod's,
// resource by resource and field by field, so that differences are found
// on meshes nobody hand-picked. istiod's side is the JSON a program built
// from Istio's own generator prints (beside the project, never a
// dependency of its tests); meshc's is an xds build with whole per-proxy
// files. What meshc leaves out on purpose is the audited list Exclusions,
// applied to both sides before comparing.
package fidelity

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/testing/protocmp"
)

// Proxy is one proxy's resources by "Type/name".
type Proxy struct {
	ID        string
	Resources map[string]proto.Message
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
		p := Proxy{ID: proxyID(op.Proxy), Resources: map[string]proto.Message{}}
		for _, set := range []struct {
			raw []json.RawMessage
			new func() proto.Message
		}{
			{op.Clusters, func() proto.Message { return &clusterv3.Cluster{} }},
			{op.Listeners, func() proto.Message { return &listenerv3.Listener{} }},
			{op.Routes, func() proto.Message { return &routev3.RouteConfiguration{} }},
			{op.Endpoints, func() proto.Message { return &endpointv3.ClusterLoadAssignment{} }},
		} {
			for _, raw := range set.raw {
				m := set.new()
				if err := unmarshal(raw, m); err != nil {
					return nil, fmt.Errorf("oracle proxy %s: %w", op.Proxy, err)
				}
				p.Resources[Key(m)] = m
			}
		}
		out = append(out, p)
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
		p := Proxy{ID: e.Namespace + "/" + e.Name, Resources: map[string]proto.Message{}}
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
					return nil, err
				}
				p.Resources[Key(m)] = m
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Key names a resource by its type and name.
func Key(m proto.Message) string {
	name := ""
	switch r := m.(type) {
	case *endpointv3.ClusterLoadAssignment:
		name = r.GetClusterName()
	case interface{ GetName() string }:
		name = r.GetName()
	}
	return string(m.ProtoReflect().Descriptor().Name()) + "/" + name
}

// Report is the comparison of one proxy.
type Report struct {
	ID              string
	Equal           int
	Missing, Extra  []string // in istiod's output only, in meshc's only
	Differ          []Difference
	ExcludedOnlyHas map[string]int
}

// Difference is one resource both sides have, unequal.
type Difference struct {
	Key, Diff string
}

// Compare compares one proxy, istiod's (want) with meshc's (got), after
// the exclusions.
func Compare(want, got Proxy, exclusions []Exclusion) Report {
	r := Report{ID: want.ID}
	keys := map[string]bool{}
	for k := range want.Resources {
		keys[k] = true
	}
	for k := range got.Resources {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, wok := want.Resources[k]
		g, gok := got.Resources[k]
		if excluded(k, exclusions) {
			continue
		}
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
			if d := cmp.Diff(w, g, protocmp.Transform()); d != "" {
				r.Differ = append(r.Differ, Difference{Key: k, Diff: d})
			} else {
				r.Equal++
			}
		}
	}
	return r
}

func excluded(key string, exclusions []Exclusion) bool {
	return slices.ContainsFunc(exclusions, func(e Exclusion) bool { return e.Skip != nil && e.Skip(key) })
}
