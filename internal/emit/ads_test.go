package emit

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestADSClientAcceptsOutput serves one proxy's compiled resources with
// go-control-plane's ADS server and fetches them as Envoy would, on one
// stream: CDS and LDS by wildcard, then EDS and RDS by the names they
// reference. Each response is unpacked and validated, extension configs
// included, and ACKed. A deliberately broken listener must be NACKed.
func TestADSClientAcceptsOutput(t *testing.T) {
	m := loadMesh(t, bookinfoObjects(t))
	v, ok := m.View("default", "productpage-v1")
	if !ok {
		t.Fatal("no productpage-v1")
	}
	cfg := New(m, Options{Format: XDS}).Build(v)
	if len(cfg.Problems) > 0 {
		t.Fatal(cfg.Problems)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const nodeID = "sidecar~10.0.0.1~productpage-v1.default~default.svc.cluster.local"
	cache := cachev3.NewSnapshotCache(true, cachev3.IDHash{}, nil)
	setSnapshot(t, ctx, cache, nodeID, "v1", cfg)
	acks := &ackLog{}
	srv := serverv3.NewServer(ctx, cache, serverv3.CallbackFuncs{StreamRequestFunc: acks.record})
	gs := grpc.NewServer()
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(gs, srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &adsClient{t: t, stream: stream, node: &corev3.Node{Id: nodeID}}

	c.request(resourcev3.ClusterType, nil, "", "")
	c.request(resourcev3.ListenerType, nil, "", "")
	got := map[string]int{}
	var edsNames, rdsNames []string
	for len(got) < 4 {
		resp := c.receive()
		if err := validateResources(resp.GetResources()); err != nil {
			t.Fatalf("%s v%s: %v", resp.GetTypeUrl(), resp.GetVersionInfo(), err)
		}
		got[resp.GetTypeUrl()] = len(resp.GetResources())
		c.request(resp.GetTypeUrl(), namesFor(resp.GetTypeUrl(), edsNames, rdsNames), resp.GetVersionInfo(), resp.GetNonce())
		switch resp.GetTypeUrl() {
		case resourcev3.ClusterType:
			edsNames = edsServiceNames(t, resp)
			c.request(resourcev3.EndpointType, edsNames, "", "")
		case resourcev3.ListenerType:
			rdsNames = rdsRouteNames(t, resp)
			c.request(resourcev3.RouteType, rdsNames, "", "")
		}
	}
	want := map[string]int{resourcev3.ClusterType: len(cfg.Clusters), resourcev3.ListenerType: len(cfg.Listeners),
		resourcev3.EndpointType: len(cfg.Endpoints), resourcev3.RouteType: len(cfg.Routes)}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%s: received %d resources, want %d", typ, got[typ], n)
		}
	}
	acks.wait(t, ctx, func(l *ackLog) bool { return len(l.acked) >= 4 })

	// A listener whose connection manager has no stat prefix: only a
	// check inside the Any can see it, and the client must refuse it.
	broken := proto.Clone(cfg.Listeners[0]).(*listenerv3.Listener)
	hcm := &hcmv3.HttpConnectionManager{}
	tc := broken.GetFilterChains()[0].GetFilters()[0].GetTypedConfig()
	if err := tc.UnmarshalTo(hcm); err != nil {
		t.Fatal(err)
	}
	hcm.StatPrefix = ""
	packed, _ := anypb.New(hcm)
	broken.GetFilterChains()[0].GetFilters()[0].ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: packed}
	bad := *cfg
	bad.Listeners = append([]*listenerv3.Listener{broken}, cfg.Listeners[1:]...)
	setSnapshot(t, ctx, cache, nodeID, "v2", &bad)
	for {
		resp := c.receive()
		err := validateResources(resp.GetResources())
		if resp.GetTypeUrl() != resourcev3.ListenerType {
			c.request(resp.GetTypeUrl(), namesFor(resp.GetTypeUrl(), edsNames, rdsNames), resp.GetVersionInfo(), resp.GetNonce())
			continue
		}
		if err == nil {
			t.Fatal("the broken listener passed validation")
		}
		c.nack(resp, err)
		break
	}
	acks.wait(t, ctx, func(l *ackLog) bool { return l.nacked[resourcev3.ListenerType] })
}

func setSnapshot(t *testing.T, ctx context.Context, cache cachev3.SnapshotCache, node, version string, cfg *Config) {
	t.Helper()
	res := func(ms []proto.Message) []types.Resource {
		out := make([]types.Resource, len(ms))
		for i, m := range ms {
			out[i] = m
		}
		return out
	}
	snap, err := cachev3.NewSnapshot(version, map[resourcev3.Type][]types.Resource{
		resourcev3.ClusterType:  res(messages(cfg.Clusters)),
		resourcev3.ListenerType: res(messages(cfg.Listeners)),
		resourcev3.EndpointType: res(messages(cfg.Endpoints)),
		resourcev3.RouteType:    res(messages(cfg.Routes)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.SetSnapshot(ctx, node, snap); err != nil {
		t.Fatal(err)
	}
}

// ackLog records what the server heard: ACKs and NACKs by type.
type ackLog struct {
	mu     sync.Mutex
	acked  []string
	nacked map[string]bool
}

func (l *ackLog) record(_ int64, req *discoveryv3.DiscoveryRequest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case req.GetErrorDetail() != nil:
		if l.nacked == nil {
			l.nacked = map[string]bool{}
		}
		l.nacked[req.GetTypeUrl()] = true
	case req.GetResponseNonce() != "":
		l.acked = append(l.acked, req.GetTypeUrl())
	}
	return nil
}

func (l *ackLog) wait(t *testing.T, ctx context.Context, done func(*ackLog) bool) {
	t.Helper()
	for {
		l.mu.Lock()
		ok := done(l)
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("server did not see the expected ACK/NACK: acked %v, nacked %v", l.acked, l.nacked)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// adsClient speaks the state-of-the-world ADS protocol as Envoy does.
type adsClient struct {
	t      *testing.T
	stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	node   *corev3.Node
}

func (c *adsClient) request(typeURL string, names []string, version, nonce string) {
	c.t.Helper()
	if err := c.stream.Send(&discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: typeURL, ResourceNames: names, VersionInfo: version, ResponseNonce: nonce}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *adsClient) nack(resp *discoveryv3.DiscoveryResponse, err error) {
	c.t.Helper()
	if err := c.stream.Send(&discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce(),
		ErrorDetail: &status.Status{Code: 3, Message: err.Error()}}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *adsClient) receive() *discoveryv3.DiscoveryResponse {
	c.t.Helper()
	resp, err := c.stream.Recv()
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func namesFor(typeURL string, eds, rds []string) []string {
	switch typeURL {
	case resourcev3.EndpointType:
		return eds
	case resourcev3.RouteType:
		return rds
	}
	return nil
}

// validateResources unpacks each resource and validates it and every
// extension config packed inside, as Envoy does on receipt.
func validateResources(rs []*anypb.Any) error {
	for _, a := range rs {
		m, err := a.UnmarshalNew()
		if err != nil {
			return err
		}
		if err := deepValidate(m); err != nil {
			return err
		}
	}
	return nil
}

func deepValidate(m proto.Message) error {
	if v, ok := m.(validator); ok {
		if err := v.ValidateAll(); err != nil {
			return err
		}
	}
	var err error
	walkAnys(m.ProtoReflect(), func(a *anypb.Any) {
		if err != nil {
			return
		}
		inner, uerr := a.UnmarshalNew()
		if uerr != nil {
			err = uerr
			return
		}
		if derr := deepValidate(inner); derr != nil {
			err = fmt.Errorf("%s: %w", a.GetTypeUrl(), derr)
		}
	})
	return err
}

func edsServiceNames(t *testing.T, resp *discoveryv3.DiscoveryResponse) []string {
	var out []string
	for _, c := range unpackAll[*clusterMsg](t, resp) {
		if n := c.GetEdsClusterConfig().GetServiceName(); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func rdsRouteNames(t *testing.T, resp *discoveryv3.DiscoveryResponse) []string {
	var out []string
	for _, l := range unpackAll[*listenerv3.Listener](t, resp) {
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				h := &hcmv3.HttpConnectionManager{}
				if f.GetTypedConfig().UnmarshalTo(h) == nil && h.GetRds() != nil {
					out = append(out, h.GetRds().GetRouteConfigName())
				}
			}
		}
	}
	return out
}

type clusterMsg = clusterv3.Cluster

func unpackAll[M proto.Message](t *testing.T, resp *discoveryv3.DiscoveryResponse) []M {
	t.Helper()
	var out []M
	for _, a := range resp.GetResources() {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.(M))
	}
	return out
}

// walkAnys calls f on every Any inside m.
func walkAnys(m protoreflect.Message, f func(*anypb.Any)) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		f(a)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				walkAnys(v.List().Get(i).Message(), f)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				walkAnys(mv.Message(), f)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			walkAnys(v.Message(), f)
		}
		return true
	})
}
