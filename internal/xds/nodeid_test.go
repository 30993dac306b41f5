package xds

import (
	"context"
	"path/filepath"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/meshc/meshc/internal/compile"
)

func TestParseNodeID(t *testing.T) {
	tests := []struct {
		id, key string // key "" means an error
	}{
		{"sidecar~10.1.2.3~reviews-v1-abc.default~default.svc.cluster.local", "default/reviews-v1-abc"},
		{"router~10.1.2.3~istio-ingressgateway-5d8f7c9b4-x2x7q.istio-system~istio-system.svc.cluster.local", "istio-system/istio-ingressgateway-5d8f7c9b4-x2x7q"},
		{"sidecar~10.1.2.3~my.dotted.pod.shop~shop.svc.cluster.local", "shop/my.dotted.pod"},
		{"default/productpage-v1", "default/productpage-v1"},
		{"waypoint~10.1.2.3~w.default~default.svc.cluster.local", ""},
		{"sidecar~10.1.2.3~nonamespace~default.svc.cluster.local", ""},
		{"sidecar~10.1.2.3~trailing.~default.svc.cluster.local", ""},
		{"productpage-v1", ""},
		{"/productpage-v1", ""},
		{"default/", ""},
		{"a/b/c", ""},
		{"", ""},
	}
	for _, tt := range tests {
		n, err := ParseNodeID(tt.id)
		switch {
		case tt.key == "" && err == nil:
			t.Errorf("ParseNodeID(%q) = %v, want an error", tt.id, n)
		case tt.key != "" && (err != nil || n.Key() != tt.key):
			t.Errorf("ParseNodeID(%q) = %v, %v, want %s", tt.id, n, err, tt.key)
		}
		// The cache key of a malformed id is the id: it matches nothing.
		want := tt.key
		if want == "" {
			want = tt.id
		}
		if got := (NodeHash{}).ID(&corev3.Node{Id: tt.id}); got != want {
			t.Errorf("NodeHash(%q) = %q, want %q", tt.id, got, want)
		}
	}
}

func TestMatch(t *testing.T) {
	r, err := compile.Run(context.Background(), compile.Inputs{Paths: []string{filepath.Join("..", "..", "examples", "bookinfo")}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		node  NodeName
		proxy string // "" when none matches
	}{
		{NodeName{"default", "productpage-v1"}, "default/productpage-v1"},
		{NodeName{"default", "reviews-v2-7d79d8c6b5-q8zkp"}, "default/reviews-v2"}, // Deployment pod
		{NodeName{"default", "reviews-v2-q8zkp"}, "default/reviews-v2"},            // ReplicaSet-style suffix
		{NodeName{"default", "reviews-v9-7d79d8c6b5-q8zkp"}, ""},
		{NodeName{"other", "productpage-v1"}, ""},
		{NodeName{"default", "productpage"}, ""},
	}
	for _, tt := range tests {
		got, ok := match(r, tt.node)
		if got != tt.proxy || ok != (tt.proxy != "") {
			t.Errorf("match(%v) = %q, %v, want %q", tt.node, got, ok, tt.proxy)
		}
	}
}
