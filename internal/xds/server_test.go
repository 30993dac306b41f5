package xds

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/genproto/googleapis/rpc/status"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/testfiles"
)

const (
	gatewayNode     = "router~10.0.0.9~istio-ingressgateway-5d8f7c9b4-x2x7q.istio-system~istio-system.svc.cluster.local"
	productpageNode = "default/productpage-v1"
)

func TestServeAndAck(t *testing.T) {
	h := start(t)
	gw, pp := h.dial(gatewayNode), h.dial(productpageNode)
	for _, c := range []*client{gw, pp} {
		got := c.subscribe(h)
		if len(got[resource.ClusterType].GetResources()) == 0 || len(got[resource.ListenerType].GetResources()) == 0 {
			t.Errorf("%s: no clusters or listeners", c.node.Id)
		}
		h.eventually(c.node.Id+" ACKs every type", func() bool {
			st := h.status(c.node.Id)
			for _, r := range got {
				ts := st.Types[typeName(r.GetTypeUrl())]
				if ts.Acked == "" || ts.Acked != r.GetVersionInfo() || ts.Sent != ts.Acked {
					return false
				}
			}
			return true
		})
	}
	if p := h.status(gatewayNode).Proxy; p != "istio-system/istio-ingressgateway" {
		t.Errorf("gateway node matched %q, want istio-system/istio-ingressgateway (pod-template-hash tolerated)", p)
	}

	web := httptest.NewServer(h.srv.Handler())
	defer web.Close()
	for _, tt := range []struct{ path, want string }{
		{"/healthz", "ok"},
		{"/readyz", "ok"},
		{"/debug/syncz", `"proxy": "default/productpage-v1"`},
		{"/metrics", "meshc_xds_connected_proxies 2"},
		{"/metrics", `meshc_xds_pushes_total{type="route"} 2`},
		{"/metrics", `meshc_xds_push_latency_seconds_count{type="cluster"} 2`},
		{"/metrics", `meshc_compiles_total{result="served"} 1`},
	} {
		path, want := tt.path, tt.want
		resp, err := http.Get(web.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, want %q in\n%s", path, resp.StatusCode, want, b)
		}
	}
}

// An edit to the gateway's VirtualService changes the gateway's routes
// and nothing of the sidecar's, and only the gateway is rebuilt.
func TestEditReachesOnlyAffectedProxy(t *testing.T) {
	h := start(t)
	gw, pp := h.dial(gatewayNode), h.dial(productpageNode)
	before := gw.subscribe(h)
	ppBefore := pp.subscribe(h)
	h.edit("virtual-services.yaml", "prefix: /static", "prefix: /assets")
	r := gw.recv()
	if r.GetTypeUrl() != resource.RouteType {
		t.Fatalf("gateway got %s after a route edit, want routes only", typeName(r.GetTypeUrl()))
	}
	if r.GetVersionInfo() == before[resource.RouteType].GetVersionInfo() {
		t.Errorf("gateway's routes kept version %s", r.GetVersionInfo())
	}
	if !strings.Contains(r.String(), "/assets") {
		t.Errorf("gateway's new routes lack the edit")
	}
	gw.ack(r, h.names(gatewayNode, resource.RouteType))
	gw.quiet(10 * debounceAfter)
	pp.quiet(10 * debounceAfter)
	// The recompile rebuilt the gateway alone: no sidecar reads a
	// VirtualService bound to gateways only.
	if !h.logged("msg=compiled proxies=7 rebuilt=1 ") {
		t.Errorf("the recompile did not rebuild the gateway alone:\n%s", h.logs)
	}
	for typ, ts := range h.status(productpageNode).Types {
		if ts.Sent != ppBefore[typeURLOf(typ)].GetVersionInfo() {
			t.Errorf("productpage's %s moved to %s", typ, ts.Sent)
		}
	}
}

func typeURLOf(name string) string {
	for _, t := range typeURLs {
		if string(t.name) == name {
			return t.url
		}
	}
	return name
}

// Input with error diagnostics is logged and not served; fixing it
// serves the fix.
func TestBrokenEditNotServed(t *testing.T) {
	h := start(t)
	gw := h.dial(gatewayNode)
	gw.subscribe(h)
	h.edit("virtual-services.yaml", "  hosts:\n    - \"*\"", "  hosts: [\"*\"\n")
	h.eventually("the broken input to be rejected", func() bool { return h.logged("input has errors") })
	gw.quiet(10 * debounceAfter)
	h.edit("virtual-services.yaml", "  hosts: [\"*\"\n", "  hosts: [\"bookinfo.example\"]\n")
	h.eventually("the fix to be served", func() bool { return strings.Count(h.logs.String(), "msg=compiled") == 2 })
	if r := gw.recv(); r.GetTypeUrl() != resource.RouteType || !strings.Contains(r.String(), "bookinfo.example") {
		t.Errorf("after the fix the gateway got %s without the new host", typeName(r.GetTypeUrl()))
	}
}

// A NACK is logged with Envoy's detail and counted; the version Envoy
// keeps stays the acked one.
func TestNACK(t *testing.T) {
	h := start(t)
	gw := h.dial(gatewayNode)
	before := gw.subscribe(h)[resource.RouteType]
	h.edit("virtual-services.yaml", "prefix: /static", "prefix: /assets")
	r := gw.recv()
	gw.send(resource.RouteType, h.names(gatewayNode, resource.RouteType), before.GetVersionInfo(), r.GetNonce(),
		&status.Status{Code: 3, Message: "route: invalid prefix"})
	h.eventually("the NACK in syncz", func() bool { return h.status(gatewayNode).Types["route"].NACKs == 1 })
	ts := h.status(gatewayNode).Types["route"]
	if ts.Acked != before.GetVersionInfo() || ts.Sent != r.GetVersionInfo() || ts.LastNACK != "route: invalid prefix" {
		t.Errorf("syncz route = %+v, want acked %s, sent %s and the NACK's detail", ts, before.GetVersionInfo(), r.GetVersionInfo())
	}
	if !h.logged("invalid prefix") {
		t.Errorf("NACK detail not logged:\n%s", h.logs)
	}
}

// A node that matches no proxy gets nothing and is logged with the
// nearest names, until its proxy appears in the inputs.
func TestUnknownNode(t *testing.T) {
	h := start(t)
	c := h.dial("sidecar~10.0.0.7~productpage-v9.default~default.svc.cluster.local")
	c.send(resource.ClusterType, nil, "", "", nil)
	c.quiet(10 * debounceAfter)
	if !h.logged("unknown node") || !h.logged("default/productpage-v1") {
		t.Errorf("unknown node not logged with the nearest proxy:\n%s", h.logs)
	}
	h.edit("deployments.yaml", "name: productpage-v1", "name: productpage-v9")
	if r := c.recv(); r.GetTypeUrl() != resource.ClusterType || len(r.GetResources()) == 0 {
		t.Errorf("once in the inputs, the node got %s with %d resources", typeName(r.GetTypeUrl()), len(r.GetResources()))
	}
}

// SIGHUP recompiles without any file change; equal output pushes nothing.
func TestReloadPushesNothingUnchanged(t *testing.T) {
	h := start(t)
	gw := h.dial(gatewayNode)
	gw.subscribe(h)
	h.reload <- struct{}{}
	h.eventually("the second compile", func() bool { return strings.Count(h.logs.String(), "msg=compiled") == 2 })
	gw.quiet(10 * debounceAfter)
	// Nothing rebuilt, and the resources kept are not hashed again.
	if !h.logged("msg=compiled proxies=7 rebuilt=0 ") || !strings.Contains(h.logs.String(), "nodes=1 updated=0 hashed=0") {
		t.Errorf("a recompile of unchanged inputs rebuilt or hashed again:\n%s", h.logs)
	}
	// The snapshot the node keeps reads the new publish's hashes, so the
	// old publish's can be freed.
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	if n := h.srv.nodes[NodeHash{}.ID(gw.node)]; n == nil || n.set.d.Load() != h.srv.digests {
		t.Errorf("the gateway's snapshot still reads the first publish's hashes")
	}
}

func TestShutdownDrains(t *testing.T) {
	h := start(t)
	c := h.dial(productpageNode)
	c.subscribe(h)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.srv.Shutdown(5 * time.Second)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	select {
	case _, open := <-c.got:
		if open {
			t.Error("a response after Shutdown")
		}
	case <-time.After(5 * time.Second):
		t.Error("stream still open after Shutdown")
	}
}

func TestNotReadyBeforeFirstCompile(t *testing.T) {
	srv := New(slogTo(&testfiles.Buffer{}))
	defer srv.Shutdown(time.Second)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before any compile: %d, want 503", rec.Code)
	}
}

// A node whose proxy leaves the inputs keeps what it has.
func TestProxyLeavesInputs(t *testing.T) {
	h := start(t)
	pp := h.dial(productpageNode)
	pp.subscribe(h)
	h.edit("deployments.yaml", "name: productpage-v1", "name: productpage-v9")
	h.eventually("the departure logged", func() bool { return h.logged("left the inputs") })
	pp.quiet(10 * debounceAfter)
	if st := h.status(productpageNode); st.Proxy != "default/productpage-v1" || st.Types["cluster"].Acked == "" {
		t.Errorf("syncz after the proxy left: %+v", st)
	}
}

// TestPhaseBracketsEachRecompile: Phase begins before each compile and
// ends after it, served, rejected or failed alike.
func TestPhaseBracketsEachRecompile(t *testing.T) {
	var events []string
	src := Source{Phase: func() func() {
		events = append(events, "begin")
		return func() { events = append(events, "end") }
	}}
	srv := New(slogTo(&testfiles.Buffer{}))
	good := func(ctx context.Context) (*compile.Result, error) {
		events = append(events, "compile")
		return compile.Run(ctx, compile.Inputs{Paths: []string{bookinfoDir}}, compile.Options{})
	}
	failed := func(context.Context) (*compile.Result, error) {
		events = append(events, "compile")
		return nil, errors.New("unreadable")
	}
	srv.refresh(context.Background(), src, good)
	srv.refresh(context.Background(), src, failed)
	if want := "begin compile end begin compile end"; strings.Join(events, " ") != want {
		t.Errorf("events %q, want %q", strings.Join(events, " "), want)
	}
	if !srv.Ready() {
		t.Error("the good compile was not served")
	}
}
