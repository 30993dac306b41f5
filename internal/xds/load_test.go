//go:build loadtest

package xds

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"

	"github.com/meshc/meshc/internal/meshgen"
)

// The load test is bounded: --loadtest.namespaces of the generated mesh
// (20 services each, about 30 proxies per namespace) on loopback, one
// edit, and ten minutes at most.
var (
	loadNamespaces = flag.Int("loadtest.namespaces", 34, "namespaces of the generated mesh (about 30 proxies each)")
	loadSidecarNth = flag.Int("loadtest.sidecar-every", 1, "a namespace Sidecar in every Nth namespace (meshgen.Options.SidecarEveryNth)")
	loadHeapProf   = flag.String("loadtest.heapprofile", "", "write a heap profile to this `file` once every proxy is connected")
)

// TestLoad connects every proxy of a generated mesh, each an Envoy that
// ACKs what it gets, then edits one VirtualService and measures, for
// every proxy the edit reaches, the time from the write to its ACK.
//
//	go test -tags loadtest -run TestLoad -v ./internal/xds
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

	heapBefore := heap()
	// Envoys of one host share few connections; streams are what count.
	conns := make([]*grpc.ClientConn, 16)
	for i := range conns {
		conns[i] = h.conn()
	}
	var (
		mu   sync.Mutex
		last = map[string]time.Time{}
		wg   sync.WaitGroup
	)
	start = time.Now()
	for i, id := range ids {
		c := h.stream(conns[i%len(conns)], id)
		c.subscribe(h)
		names := map[string][]string{
			resource.EndpointType: h.names(id, resource.EndpointType),
			resource.RouteType:    h.names(id, resource.RouteType),
		}
		// From now on the Envoy ACKs whatever it gets, at once.
		wg.Go(func() {
			for r := range c.got {
				if err := c.stream.Send(ackOf(c, r, names[r.GetTypeUrl()])); err != nil {
					return
				}
				mu.Lock()
				last[id] = time.Now()
				mu.Unlock()
			}
		})
	}
	t.Logf("%d proxies connected, each ACKed CDS, EDS, LDS and RDS: %s", len(ids), time.Since(start).Round(time.Millisecond))
	heapAfter := heap()
	if *loadHeapProf != "" {
		writeHeapProfile(t, *loadHeapProf)
	}
	t.Logf("heap: %.1f MB with configs, %.1f MB with every proxy connected: %.1f KB per connected proxy (client side included)",
		mb(heapBefore), mb(heapAfter), float64(heapAfter-heapBefore)/float64(len(ids))/1024)

	cpu := cpuTime()
	written := time.Now()
	h.edit(filepath.Join("ns-001", "virtual-services.yaml"), `timeout: "5s"`, `timeout: "7s"`)
	h.eventually("the edit to be published", func() bool { return strings.Count(h.logs.String(), `msg="configuration published"`) == 2 })
	published := regexp.MustCompile(`msg="configuration published" .* updated=(\d+)`).FindAllStringSubmatch(h.logs.String(), -1)
	updated, _ := strconv.Atoi(published[len(published)-1][1])
	h.eventually("every updated proxy to ACK", func() bool {
		mu.Lock()
		n := 0
		for _, at := range last {
			if at.After(written) {
				n++
			}
		}
		mu.Unlock()
		if n < updated {
			return false
		}
		for _, st := range h.srv.Syncz() {
			for _, ts := range st.Types {
				if ts.Sent != ts.Acked {
					return false
				}
			}
		}
		return true
	})
	cpu = cpuTime() - cpu
	t.Logf("recompile: %s", regexp.MustCompile(`msg=compiled .*`).FindAllString(h.logs.String(), -1)[1])
	mu.Lock()
	var lat []time.Duration
	for _, at := range last {
		if at.After(written) {
			lat = append(lat, at.Sub(written))
		}
	}
	mu.Unlock()
	if len(lat) == 0 {
		t.Fatal("the edit reached no proxy")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("one VirtualService edit reached %d of %d proxies; write to ACK p50 %s, p99 %s, max %s (debounce %s); CPU %s",
		len(lat), len(ids), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond),
		lat[len(lat)-1].Round(time.Millisecond), debounceAfter, cpu.Round(time.Millisecond))
}

func ackOf(c *client, r *discoveryv3.DiscoveryResponse, names []string) *discoveryv3.DiscoveryRequest {
	return &discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: r.GetTypeUrl(), ResourceNames: names,
		VersionInfo: r.GetVersionInfo(), ResponseNonce: r.GetNonce()}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
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

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
