package xds

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/testfiles"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is a server of a temporary copy of examples/bookinfo on a
// loopback port.
type harness struct {
	t      *testing.T
	dir    string
	srv    *Server
	addr   string
	logs   *testfiles.Buffer
	reload chan struct{}
	// patience bounds every wait.
	patience time.Duration
}

// debounceAfter is short so edits reach the clients quickly.
const debounceAfter = 20 * time.Millisecond

func start(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(bookinfoDir)); err != nil {
		t.Fatal(err)
	}
	return startIn(t, dir, 10*time.Second)
}

// startIn serves the inputs in dir; waits end after patience.
func startIn(t *testing.T, dir string, patience time.Duration) *harness {
	t.Helper()
	h := &harness{t: t, dir: dir, logs: &testfiles.Buffer{}, reload: make(chan struct{}), patience: patience}
	h.srv = New(slogTo(h.logs))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = lis.Addr().String()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = h.srv.Serve(lis)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		err := h.srv.Run(ctx, Source{
			Watch: []string{dir},
			Compile: func(ctx context.Context) (*compile.Result, error) {
				return compile.Run(ctx, compile.Inputs{Paths: []string{dir}}, compile.Options{})
			},
			DebounceAfter: debounceAfter, DebounceMax: 10 * debounceAfter,
			Reload: h.reload,
		})
		if err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-ran
		h.srv.Shutdown(5 * time.Second)
		<-served
	})
	h.eventually("the first compile", h.srv.Ready)
	return h
}

// eventually waits for ok.
func (h *harness) eventually(what string, ok func() bool) {
	h.t.Helper()
	for deadline := time.Now().Add(h.patience); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; log:\n%s", what, h.logs)
		}
	}
}

// edit replaces old with new in one input file, as an editor saves it.
func (h *harness) edit(file, old, new string) {
	h.t.Helper()
	p := filepath.Join(h.dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		h.t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		h.t.Fatalf("%s has no %q", file, old)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// status is the node's syncz line, or the zero value.
func (h *harness) status(node string) NodeStatus {
	for _, st := range h.srv.Syncz() {
		if st.Node == node {
			return st
		}
	}
	return NodeStatus{}
}

// client is an Envoy's side of one ADS stream.
type client struct {
	t      *testing.T
	node   *corev3.Node
	stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	got    chan *discoveryv3.DiscoveryResponse
}

// conn is a client connection to the server, closed after the test.
func (h *harness) conn() *grpc.ClientConn {
	h.t.Helper()
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close() })
	return conn
}

// dial opens an ADS stream as nodeID on a connection of its own.
func (h *harness) dial(nodeID string) *client { return h.stream(h.conn(), nodeID) }

// stream opens an ADS stream as nodeID on conn.
func (h *harness) stream(conn *grpc.ClientConn, nodeID string) *client {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	c := &client{t: h.t, node: &corev3.Node{Id: nodeID}, stream: stream, got: make(chan *discoveryv3.DiscoveryResponse, 16)}
	received := make(chan struct{})
	go func() {
		defer close(received)
		defer close(c.got)
		for {
			resp, err := stream.Recv()
			if err != nil {
				return
			}
			c.got <- resp
		}
	}()
	// Cleanups run last first: the stream ends before its connection.
	h.t.Cleanup(func() {
		cancel()
		<-received
	})
	return c
}

// send sends a request; the node rides on every one, as Envoy's default.
func (c *client) send(typeURL string, names []string, version, nonce string, nack *status.Status) {
	c.t.Helper()
	err := c.stream.Send(&discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: typeURL, ResourceNames: names,
		VersionInfo: version, ResponseNonce: nonce, ErrorDetail: nack})
	if err != nil {
		c.t.Fatal(err)
	}
}

// recv waits for the next response.
func (c *client) recv() *discoveryv3.DiscoveryResponse {
	c.t.Helper()
	select {
	case r, ok := <-c.got:
		if !ok {
			c.t.Fatalf("%s: stream closed", c.node.Id)
		}
		return r
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: no response", c.node.Id)
		return nil
	}
}

// quiet fails when a response arrives within d.
func (c *client) quiet(d time.Duration) {
	c.t.Helper()
	select {
	case r, ok := <-c.got:
		if !ok {
			c.t.Fatalf("%s: stream closed", c.node.Id)
		}
		c.t.Fatalf("%s: unexpected %s response, version %s", c.node.Id, typeName(r.GetTypeUrl()), r.GetVersionInfo())
	case <-time.After(d):
	}
}

// ack acknowledges a response with the names to watch next.
func (c *client) ack(r *discoveryv3.DiscoveryResponse, names []string) {
	c.send(r.GetTypeUrl(), names, r.GetVersionInfo(), r.GetNonce(), nil)
}

// subscribe fetches and ACKs all four types in Envoy's order (clusters,
// their endpoints, listeners, their routes); it returns the responses
// by type.
func (c *client) subscribe(h *harness) map[string]*discoveryv3.DiscoveryResponse {
	c.t.Helper()
	out := map[string]*discoveryv3.DiscoveryResponse{}
	for _, typeURL := range []string{resource.ClusterType, resource.EndpointType, resource.ListenerType, resource.RouteType} {
		// The names an Envoy derives from clusters and listeners are
		// what its snapshot holds.
		var names []string
		if typeURL == resource.EndpointType || typeURL == resource.RouteType {
			names = h.names(c.node.Id, typeURL)
		}
		c.send(typeURL, names, "", "", nil)
		r := c.recv()
		if r.GetTypeUrl() != typeURL {
			c.t.Fatalf("%s: asked for %s, got %s", c.node.Id, typeURL, r.GetTypeUrl())
		}
		c.ack(r, names)
		out[typeURL] = r
	}
	return out
}

// names are the resources of a type the server holds for a node.
func (h *harness) names(nodeID, typeURL string) []string {
	h.t.Helper()
	key := NodeHash{}.ID(&corev3.Node{Id: nodeID})
	snap, err := h.srv.cache.GetSnapshot(key)
	if err != nil {
		h.t.Fatalf("%s: %v", nodeID, err)
	}
	var names []string
	for name := range snap.GetResources(typeURL) {
		names = append(names, name)
	}
	return names
}

func (h *harness) logged(s string) bool { return strings.Contains(h.logs.String(), s) }

func slogTo(w *testfiles.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
