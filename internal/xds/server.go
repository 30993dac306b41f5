// Package xds serves compiled Envoy configuration over xDS: one snapshot
// per proxy in go-control-plane's snapshot cache, keyed by the Envoy node
// id, replaced when a recompile changes that proxy's resources; ACKs and
// NACKs are tracked per node and type for /debug/syncz.
package xds

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/envoycfg"
)

// Server is an xDS server of compiled configuration. Publish gives it a
// compile's configs; Serve answers Envoys on a listener.
type Server struct {
	log     *slog.Logger
	cache   cache.SnapshotCache
	grpc    *grpc.Server
	metrics *metrics
	// cancel ends every stream (go-control-plane's handlers return when
	// the context they were made with ends).
	cancel context.CancelFunc

	// built is the last published build, which the next one reuses;
	// only Run reads and writes it.
	built *compile.ConfigSet

	mu sync.Mutex
	// result and configs are the last good compile; nil before one.
	result  *compile.Result
	configs map[string]*envoycfg.Config
	// digests hash the current configs' resources; snaps are the
	// snapshots made from them, by proxy ID.
	digests *digester
	snaps   map[string]*snapshot
	nodes   map[string]*node
	// streams maps an open stream to its node's key, "" until the
	// stream's first request names the node.
	streams map[int64]string
}

// node is one Envoy node (all its streams: ADS, or one per type).
type node struct {
	id      string
	proxy   string // the proxy ID it matched, "" while unknown
	streams int
	// set is the snapshot the cache holds for it; warned says that it
	// was logged as unknown.
	set    *snapshot
	setAt  time.Time
	warned bool
	types  map[string]*TypeStatus
}

// TypeStatus is what one node was sent and acknowledged of one type.
type TypeStatus struct {
	Sent  string `json:"sent,omitempty"`
	Acked string `json:"acked,omitempty"`
	// NACKs counts rejections; LastNACK is Envoy's error detail of the
	// last one.
	NACKs    int    `json:"nacks,omitempty"`
	LastNACK string `json:"lastNack,omitempty"`
	nonce    string
}

// NodeStatus is one node's line in /debug/syncz.
type NodeStatus struct {
	Node    string                `json:"node"`
	Proxy   string                `json:"proxy,omitempty"`
	Streams int                   `json:"streams"`
	Types   map[string]TypeStatus `json:"types"`
}

// New makes a server that logs to log.
func New(log *slog.Logger) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		log:     log,
		metrics: newMetrics(),
		cancel:  cancel,
		nodes:   map[string]*node{},
		streams: map[int64]string{},
		snaps:   map[string]*snapshot{},
	}
	// ADS mode: a request naming routes or endpoints is answered only
	// when it names all the snapshot holds, so Envoy never sees a
	// listener before its routes.
	s.cache = cache.NewSnapshotCache(true, NodeHash{}, cacheLogger{log})
	xs := serverv3.NewServer(ctx, s.cache, s.callbacks())
	s.grpc = grpc.NewServer(
		// Envoy pings idle ADS streams; istiod allows it every 15 s.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 15 * time.Second, PermitWithoutStream: true}),
		grpc.MaxRecvMsgSize(compile.DefaultMaxProxyBytes),
	)
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(s.grpc, xs)
	clusterservice.RegisterClusterDiscoveryServiceServer(s.grpc, xs)
	endpointservice.RegisterEndpointDiscoveryServiceServer(s.grpc, xs)
	listenerservice.RegisterListenerDiscoveryServiceServer(s.grpc, xs)
	routeservice.RegisterRouteDiscoveryServiceServer(s.grpc, xs)
	return s
}

// Serve answers xDS on lis until Shutdown.
func (s *Server) Serve(lis net.Listener) error { return s.grpc.Serve(lis) }

// Shutdown stops accepting, ends the open streams and waits up to grace
// for their handlers to return, then closes what is left.
func (s *Server) Shutdown(grace time.Duration) {
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	s.cancel()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.log.Warn("streams did not drain in time; closing them", "grace", grace)
		s.grpc.Stop()
		<-done
	}
}

// Ready reports whether a compile has been published.
func (s *Server) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result != nil
}

// Publish makes r's configs (Configs of r.Mesh.Views, in that order) the
// served ones: each connected node whose proxy's resources changed gets a
// new snapshot, a new version for each changed type; the others are not
// touched. A node that matched no proxy is matched again. One Publish at
// a time: the server's Run is the caller.
func (s *Server) Publish(r *compile.Result, configs []*envoycfg.Config) error {
	if len(configs) != len(r.Mesh.Views) {
		return fmt.Errorf("publish: %d configs for %d proxies", len(configs), len(r.Mesh.Views))
	}
	byID := make(map[string]*envoycfg.Config, len(configs))
	for i, v := range r.Mesh.Views {
		byID[v.Proxy.ID()] = configs[i]
	}
	// Hashing is the costly part: it is done before taking the lock, for
	// the nodes connected now, so streams are answered and ACKs recorded
	// meanwhile. A node that connects in between is hashed under it.
	s.mu.Lock()
	ids := make([]string, 0, len(s.nodes))
	for _, n := range s.nodes {
		ids = append(ids, n.id)
	}
	d, snaps := newDigester(s.digests), map[string]*snapshot{}
	s.mu.Unlock()
	defer d.forget()
	for _, id := range ids {
		name, err := ParseNodeID(id)
		if err != nil {
			continue
		}
		proxy, ok := match(r, name)
		if _, done := snaps[proxy]; !ok || done {
			continue
		}
		if snaps[proxy], err = d.snapshot(byID[proxy]); err != nil {
			return fmt.Errorf("snapshot of %s: %w", proxy, err)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.result, s.configs, s.digests, s.snaps = r, byID, d, snaps
	changed := 0
	for _, key := range slices.Sorted(maps.Keys(s.nodes)) {
		n := s.nodes[key]
		before := n.set
		if err := s.bind(key, n); err != nil {
			return err
		}
		if n.set != before {
			changed++
		}
	}
	s.metrics.snapshotBytes.Set(float64(s.digests.totalBytes()))
	s.log.Info("configuration published", "proxies", len(configs), "nodes", len(s.nodes), "updated", changed, "hashed", d.hashedCount())
	return nil
}

// bind matches a node to its proxy in the current compile and gives the
// cache that proxy's snapshot unless it holds one of the same versions,
// which then reads the current publish's hashes.
// A node whose proxy left the inputs keeps what it has.
func (s *Server) bind(key string, n *node) error {
	if s.result == nil {
		return nil // the first publish binds it
	}
	name, err := ParseNodeID(n.id)
	if err != nil {
		if !n.warned {
			s.log.Warn("malformed node id: it gets no configuration", "node", n.id, "error", err)
			n.warned = true
		}
		return nil
	}
	proxy, ok := match(s.result, name)
	if !ok {
		if !n.warned {
			_, why := s.result.Proxy(name.Namespace, name.Name)
			msg := "unknown node: it gets no configuration until its proxy is in the inputs"
			if n.set != nil {
				msg = "node's proxy left the inputs: it keeps its last configuration"
			}
			s.log.Warn(msg, "node", n.id, "reason", why.Error())
			n.warned = true
		}
		return nil
	}
	if n.warned || n.proxy != proxy {
		s.log.Info("node matched", "node", n.id, "proxy", proxy)
	}
	n.proxy, n.warned = proxy, false
	snap, err := s.snapshot(proxy)
	if err != nil {
		return err
	}
	if n.set != nil && sameVersions(n.set, snap) {
		n.set.rebase(s.digests)
		return nil
	}
	n.set, n.setAt = snap, time.Now()
	return s.cache.SetSnapshot(context.Background(), key, snap)
}

// snapshot is a proxy's snapshot from the current configs, made once.
func (s *Server) snapshot(proxy string) (*snapshot, error) {
	if snap, ok := s.snaps[proxy]; ok {
		return snap, nil
	}
	snap, err := s.digests.snapshot(s.configs[proxy])
	if err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", proxy, err)
	}
	s.snaps[proxy] = snap
	s.metrics.snapshotBytes.Set(float64(s.digests.totalBytes()))
	return snap, nil
}

// Syncz is every connected node's sync status, by node key.
func (s *Server) Syncz() []NodeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]NodeStatus, 0, len(s.nodes))
	for _, key := range slices.Sorted(maps.Keys(s.nodes)) {
		n := s.nodes[key]
		st := NodeStatus{Node: n.id, Proxy: n.proxy, Streams: n.streams, Types: map[string]TypeStatus{}}
		for t, ts := range n.types {
			st.Types[t] = *ts
		}
		out = append(out, st)
	}
	return out
}

func (s *Server) callbacks() serverv3.Callbacks {
	return serverv3.CallbackFuncs{
		StreamOpenFunc:        s.opened,
		DeltaStreamOpenFunc:   s.opened,
		StreamClosedFunc:      s.closed,
		DeltaStreamClosedFunc: s.closed,
		StreamRequestFunc: func(id int64, req *discoveryv3.DiscoveryRequest) error {
			return s.request(id, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), req.GetVersionInfo(), req.GetErrorDetail())
		},
		StreamDeltaRequestFunc: func(id int64, req *discoveryv3.DeltaDiscoveryRequest) error {
			// A delta request carries no version: an ACK acknowledges
			// the version its nonce was sent with.
			return s.request(id, req.GetNode(), req.GetTypeUrl(), req.GetResponseNonce(), "", req.GetErrorDetail())
		},
		StreamResponseFunc: func(_ context.Context, id int64, _ *discoveryv3.DiscoveryRequest, resp *discoveryv3.DiscoveryResponse) {
			s.sent(id, resp.GetTypeUrl(), resp.GetVersionInfo(), resp.GetNonce())
		},
		StreamDeltaResponseFunc: func(id int64, _ *discoveryv3.DeltaDiscoveryRequest, resp *discoveryv3.DeltaDiscoveryResponse) {
			s.sent(id, resp.GetTypeUrl(), resp.GetSystemVersionInfo(), resp.GetNonce())
		},
	}
}

func (s *Server) opened(_ context.Context, id int64, typeURL string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams[id] = ""
	s.log.Debug("stream opened", "stream", id, "type", typeName(typeURL))
	return nil
}

func (s *Server) closed(id int64, _ *corev3.Node) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, ok := s.streams[id]
	delete(s.streams, id)
	n := s.nodes[key]
	if !ok || n == nil {
		return
	}
	s.log.Debug("stream closed", "stream", id, "node", n.id)
	if n.streams--; n.streams > 0 {
		return
	}
	delete(s.nodes, key)
	s.cache.ClearSnapshot(key)
	s.metrics.connected.Set(float64(len(s.nodes)))
	s.log.Info("node disconnected", "node", n.id, "proxy", n.proxy)
}

// request records an ACK or NACK; a stream's first request attaches it
// to its node, which is bound to its proxy before the cache answers.
func (s *Server) request(id int64, nd *corev3.Node, typeURL, nonce, version string, nack *status.Status) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := s.streams[id]
	if key == "" {
		if nd.GetId() == "" {
			return fmt.Errorf("stream %d: the first request names no node", id)
		}
		key = NodeHash{}.ID(nd)
		s.streams[id] = key
		n := s.nodes[key]
		if n == nil {
			n = &node{id: nd.GetId(), types: map[string]*TypeStatus{}}
			s.nodes[key] = n
			s.metrics.connected.Set(float64(len(s.nodes)))
			s.log.Info("node connected", "node", n.id)
		}
		n.streams++
		if err := s.bind(key, n); err != nil {
			return err
		}
	}
	n := s.nodes[key]
	t := typeName(typeURL)
	if t == typeURL {
		s.log.Warn("request for a type meshc does not serve; it gets nothing", "node", n.id, "type", typeURL)
	}
	st := n.status(t)
	switch {
	case nack != nil:
		st.NACKs++
		st.LastNACK = nack.GetMessage()
		s.metrics.nacks.WithLabelValues(t).Inc()
		s.log.Warn("NACK: Envoy rejected the configuration and keeps its previous version",
			"node", n.id, "proxy", n.proxy, "type", t, "rejected", st.Sent, "kept", version, "detail", nack.GetMessage())
	case nonce != "" && nonce == st.nonce:
		acked := cmp.Or(version, st.Sent)
		if acked != st.Acked {
			s.metrics.pushLatency.WithLabelValues(t).Observe(time.Since(n.setAt).Seconds())
		}
		st.Acked = acked
	}
	return nil
}

func (s *Server) sent(id int64, typeURL, version, nonce string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[s.streams[id]]
	if n == nil {
		return
	}
	t := typeName(typeURL)
	st := n.status(t)
	st.Sent, st.nonce = version, nonce
	s.metrics.pushes.WithLabelValues(t).Inc()
}

func (n *node) status(t string) *TypeStatus {
	st := n.types[t]
	if st == nil {
		st = &TypeStatus{}
		n.types[t] = st
	}
	return st
}

// cacheLogger sends the snapshot cache's logs to slog, its info lowered
// to debug: the cache logs every request.
type cacheLogger struct{ log *slog.Logger }

func (l cacheLogger) logf(level slog.Level, format string, args []any) {
	if l.log.Enabled(context.Background(), level) {
		l.log.Log(context.Background(), level, fmt.Sprintf(format, args...))
	}
}

func (l cacheLogger) Debugf(format string, args ...any) { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Infof(format string, args ...any)  { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Warnf(format string, args ...any)  { l.logf(slog.LevelWarn, format, args) }
func (l cacheLogger) Errorf(format string, args ...any) { l.logf(slog.LevelError, format, args) }
