//go:build loadtest

package xds

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/testfiles"
)

// The load test is bounded: --loadtest.namespaces of the generated mesh
// (20 services each, about 30 proxies per namespace) on loopback, one
// edit, and ten minutes at most.
var (
	loadNamespaces = flag.Int("loadtest.namespaces", 34, "namespaces of the generated mesh (about 30 proxies each)")
	loadSidecarNth = flag.Int("loadtest.sidecar-every", 1, "a namespace Sidecar in every Nth namespace (meshgen.Options.SidecarEveryNth)")
	loadHeapProf   = flag.String("loadtest.heapprofile", "", "write a heap profile to this `file` once every proxy is connected")
)

// The clients' process is told the server and its nodes by environment.
const (
	envLoadServer = "MESHC_LOADTEST_SERVER"
	envLoadNodes  = "MESHC_LOADTEST_NODES"
)

// TestLoad connects every proxy of a generated mesh, each an Envoy that
// ACKs what it gets, then edits one VirtualService and measures, for
// every proxy the edit reaches, the time from the write to its ACK. The
// Envoys run in a process of their own (TestLoadClients), so the heap
// and CPU measured here are the server's alone.
//
//	go test -tags loadtest -run 'TestLoad$' -v ./internal/xds
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := meshgen.Write(dir, meshgen.Options{Namespaces: *loadNamespaces, SidecarEveryNth: *loadSidecarNth}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h := startIn(t, dir, 10*time.Minute)
	t.Logf("first compile and publish: %s", time.Since(start).Round(time.Millisecond))
	h.srv.mu.Lock()
	ids := slices.Sorted(maps.Keys(h.srv.configs))
	h.srv.mu.Unlock()
	nodes := filepath.Join(t.TempDir(), "nodes")
	if err := os.WriteFile(nodes, []byte(strings.Join(ids, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	before, stackBefore := heap()
	cpu := testfiles.CPUTime()
	start = time.Now()
	clients := startClients(t, h.addr, nodes)
	clients.wait(t, "connected")
	h.eventually("every node's ACKs", func() bool { return allAcked(h, len(ids)) })
	connectCPU := testfiles.CPUTime() - cpu
	t.Logf("%d proxies connected, each ACKed CDS, EDS, LDS and RDS: %s; server CPU %s, %.2f ms per proxy",
		len(ids), time.Since(start).Round(time.Millisecond), connectCPU.Round(time.Millisecond), float64(connectCPU.Microseconds())/1000/float64(len(ids)))
	after, stackAfter := heap()
	if *loadHeapProf != "" {
		writeHeapProfile(t, *loadHeapProf)
	}
	t.Logf("server heap: %.1f MB with configs, %.1f MB with every proxy connected: %.1f KB per connected proxy; goroutine stacks %.1f KB per proxy",
		mb(before), mb(after), float64(after-before)/float64(len(ids))/1024, float64(stackAfter-stackBefore)/float64(len(ids))/1024)

	cpu = testfiles.CPUTime()
	written := time.Now()
	h.edit(filepath.Join("ns-001", "virtual-services.yaml"), `timeout: "5s"`, `timeout: "7s"`)
	h.eventually("the edit to be published", func() bool { return strings.Count(h.logs.String(), `msg="configuration published"`) == 2 })
	published := regexp.MustCompile(`msg="configuration published" .* updated=(\d+)`).FindAllStringSubmatch(h.logs.String(), -1)
	updated, _ := strconv.Atoi(published[len(published)-1][1])
	h.eventually("every updated proxy to ACK", func() bool {
		return len(clients.acksAfter(written)) >= updated && allAcked(h, len(ids))
	})
	cpu = testfiles.CPUTime() - cpu
	t.Logf("recompile: %s", regexp.MustCompile(`msg=compiled .*`).FindAllString(h.logs.String(), -1)[1])
	lat := slices.Sorted(maps.Values(clients.acksAfter(written)))
	if len(lat) == 0 {
		t.Fatal("the edit reached no proxy")
	}
	t.Logf("one VirtualService edit reached %d of %d proxies; write to last ACK p50 %s, p99 %s, max %s (debounce %s); server CPU %s",
		len(lat), len(ids), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond),
		lat[len(lat)-1].Round(time.Millisecond), debounceAfter, cpu.Round(time.Millisecond))
}

// allAcked says whether n nodes are connected and each acknowledged
// what it was last sent, of every type.
func allAcked(h *harness, n int) bool {
	sz := h.srv.Syncz()
	if len(sz) < n {
		return false
	}
	for _, st := range sz {
		if len(st.Types) < len(typeURLs) {
			return false
		}
		for _, ts := range st.Types {
			if ts.Sent == "" || ts.Sent != ts.Acked {
				return false
			}
		}
	}
	return true
}

// clients is TestLoadClients running: what it said, and when each node
// last ACKed.
type clients struct {
	mu    sync.Mutex
	lines chan string
	last  map[string]time.Time
}

// startClients starts the Envoys' process; it ends with the test.
func startClients(t *testing.T, addr, nodes string) *clients {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadClients$")
	cmd.Env = append(os.Environ(), envLoadServer+"="+addr, envLoadNodes+"="+nodes)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &clients{lines: make(chan string, 16), last: map[string]time.Time{}}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 3 && f[0] == "ack" {
				ns, _ := strconv.ParseInt(f[2], 10, 64)
				c.mu.Lock()
				c.last[f[1]] = time.Unix(0, ns)
				c.mu.Unlock()
				continue
			}
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
	}()
	// Closing its stdin ends the clients' process.
	t.Cleanup(func() {
		stdin.Close()
		<-read
		_ = cmd.Wait()
	})
	return c
}

// wait waits for the clients to say line.
func (c *clients) wait(t *testing.T, line string) {
	t.Helper()
	timeout := time.After(10 * time.Minute)
	for {
		select {
		case l := <-c.lines:
			if l == line {
				return
			}
		case <-timeout:
			t.Fatalf("the clients never said %q", line)
		}
	}
}

// acksAfter are the nodes whose last ACK came after t, with how long after.
func (c *clients) acksAfter(t time.Time) map[string]time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]time.Duration{}
	for id, at := range c.last {
		if at.After(t) {
			out[id] = at.Sub(t)
		}
	}
	return out
}

// TestLoadClients is TestLoad's Envoys: one ADS stream per node (16
// connections, as Envoys of one host share few), each fetching its types
// in Envoy's order, subscribing to the endpoints and routes its clusters
// and listeners name, and ACKing everything at once. It says "connected"
// when every node has its first configuration, then "ack NODE UNIXNANO"
// for each later ACK, and ends when its standard input closes.
func TestLoadClients(t *testing.T) {
	addr := os.Getenv(envLoadServer)
	if addr == "" {
		t.Skip("TestLoad runs it")
	}
	data, err := os.ReadFile(os.Getenv(envLoadNodes))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conns := make([]*grpc.ClientConn, 16)
	for i := range conns {
		if conns[i], err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i, id := range strings.Fields(string(data)) {
		stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conns[i%len(conns)]).StreamAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		e := &envoy{node: &corev3.Node{Id: id}, stream: stream, names: map[string][]string{}}
		for _, typeURL := range []string{resource.ClusterType, resource.EndpointType, resource.ListenerType, resource.RouteType} {
			if err := e.request(typeURL, "", ""); err != nil {
				t.Fatal(err)
			}
			r, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if err := e.ack(r); err != nil {
				t.Fatal(err)
			}
		}
		wg.Go(func() {
			for {
				r, err := stream.Recv()
				if err != nil || e.ack(r) != nil {
					return
				}
				say("ack %s %d", id, time.Now().UnixNano())
			}
		})
	}
	say("connected")
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
}

// envoy is one node's ADS stream and the endpoint and route names its
// clusters and listeners subscribe it to.
type envoy struct {
	node   *corev3.Node
	stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	names  map[string][]string
}

func (e *envoy) request(typeURL, version, nonce string) error {
	return e.stream.Send(&discoveryv3.DiscoveryRequest{Node: e.node, TypeUrl: typeURL, ResourceNames: e.names[typeURL],
		VersionInfo: version, ResponseNonce: nonce})
}

// ack acknowledges r; clusters and listeners first update what the node
// subscribes to, as Envoy does.
func (e *envoy) ack(r *discoveryv3.DiscoveryResponse) error {
	next := map[string]string{resource.ClusterType: resource.EndpointType, resource.ListenerType: resource.RouteType}[r.GetTypeUrl()]
	if next != "" {
		ms := make([]proto.Message, 0, len(r.GetResources()))
		for _, a := range r.GetResources() {
			m, err := a.UnmarshalNew()
			if err != nil {
				return err
			}
			ms = append(ms, m)
		}
		names, err := subscriptions(ms)
		if err != nil {
			return err
		}
		e.names[next] = names
	}
	return e.request(r.GetTypeUrl(), r.GetVersionInfo(), r.GetNonce())
}

// writeHeapProfile writes the live heap (after a GC) to path, for
// go tool pprof -sample_index=inuse_space.
func writeHeapProfile(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

// heap is the live heap after a GC, and the goroutine stacks in use.
func heap() (live, stacks uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }
