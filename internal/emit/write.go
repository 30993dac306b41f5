package emit

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshc/meshc/internal/resolve"
)

// Type URLs of the xDS resource types.
const (
	ClusterType  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	ListenerType = "type.googleapis.com/envoy.config.listener.v3.Listener"
	RouteType    = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	EndpointType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
)

// sdsSocket is where istio-agent serves the workload's certificates.
const sdsSocket = "./var/run/secrets/workload-spiffe-uds/socket"

// File is one output file, relative to the output directory.
type File struct {
	Path string
	Data []byte
	// Shared files are content-addressed: written once, whoever needs
	// them first.
	Shared bool
}

// Output is one proxy's files and its index entry.
type Output struct {
	Entry IndexEntry
	Files []File
	// bufs hold the files' bytes; Release returns them for reuse.
	bufs []*bytes.Buffer
}

// buffer lends a buffer for a document of o.
func (e *Emitter) buffer(o *Output) *bytes.Buffer {
	b, _ := e.bufs.Get().(*bytes.Buffer)
	if b == nil {
		b = new(bytes.Buffer)
	}
	b.Reset()
	o.bufs = append(o.bufs, b)
	return b
}

// Release lets the next proxy reuse the memory of o's files, which must
// not be read afterwards.
func (e *Emitter) Release(o Output) {
	for _, b := range o.bufs {
		e.bufs.Put(b)
	}
}

// IndexEntry describes one proxy's output in index.json.
type IndexEntry struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Kind      string            `json:"kind"`
	Type      string            `json:"type"`
	Labels    map[string]string `json:"labels,omitempty"`
	// Sidecar is the Sidecar resource used, "namespace/name", or empty.
	Sidecar  string `json:"sidecar,omitempty"`
	Path     string `json:"path"`
	Counts   Counts `json:"counts"`
	Bytes    int    `json:"bytes"`
	SHA256   string `json:"sha256"`
	Problems int    `json:"problems,omitempty"`
	// Shared are the content-addressed files the bootstrap names (Dedup).
	Shared []string `json:"shared,omitempty"`
	// WireBytes is the size of the resources as xDS would send them in
	// protobuf, which istiod's push size limit applies to.
	WireBytes int `json:"wireBytes"`
}

// Counts are a proxy's resources by type.
type Counts struct {
	Clusters  int `json:"clusters"`
	Listeners int `json:"listeners"`
	Routes    int `json:"routes"`
	Endpoints int `json:"endpoints"`
}

// Render compiles one proxy and lays it out as files in the chosen format.
// An error means the proxy's names cannot become a path or a resource
// cannot be serialised; validation problems are in cfg.Problems instead.
func (e *Emitter) Render(v *resolve.ProxyView) (*Config, Output, error) {
	base, err := e.paths.of(v.Proxy)
	if err != nil {
		return nil, Output{}, err
	}
	cfg := e.Build(v)
	if cfg.part != nil {
		defer e.parts.done(cfg.key)
	}
	r, err := e.rendering(cfg)
	if err != nil {
		return nil, Output{}, fmt.Errorf("proxy %s: %w", v.Proxy.ID(), err)
	}
	out := Output{Entry: IndexEntry{
		Namespace: v.Proxy.Namespace, Name: v.Proxy.Name, Kind: v.Proxy.Kind, Type: string(v.Proxy.Type),
		Labels: v.Proxy.Labels, Problems: len(cfg.Problems), WireBytes: r.wire,
		Counts: Counts{len(cfg.Clusters), len(cfg.Listeners), len(cfg.Routes), len(cfg.Endpoints)},
	}}
	if sc := v.Choice.Sidecar; sc != nil {
		out.Entry.Sidecar = sc.Namespace + "/" + sc.Name
	}
	dir := filepath.FromSlash(base)
	if e.opts.Format == XDS {
		out.Files = []File{
			{Path: filepath.Join(dir, "clusters.json"), Data: responseDocument(e.buffer(&out), ClusterType, r.clusters)},
			{Path: filepath.Join(dir, "endpoints.json"), Data: responseDocument(e.buffer(&out), EndpointType, r.endpoints)},
			{Path: filepath.Join(dir, "listeners.json"), Data: responseDocument(e.buffer(&out), ListenerType, r.listeners)},
			{Path: filepath.Join(dir, "routes.json"), Data: responseDocument(e.buffer(&out), RouteType, r.routes)},
		}
		out.Entry.Path = filepath.ToSlash(dir)
	} else {
		files, err := e.bootstrap(&out, v.Proxy, r, dir+".json")
		if err != nil {
			return nil, Output{}, fmt.Errorf("proxy %s: %w", v.Proxy.ID(), err)
		}
		out.Files = files
		out.Entry.Path = filepath.ToSlash(dir) + ".json"
	}
	h := sha256.New()
	for _, f := range out.Files {
		if f.Shared {
			out.Entry.Shared = append(out.Entry.Shared, filepath.ToSlash(f.Path))
		}
		out.Entry.Bytes += len(f.Data)
		h.Write([]byte(f.Path))
		h.Write(f.Data)
	}
	out.Entry.SHA256 = hex.EncodeToString(h.Sum(nil))
	return cfg, out, nil
}

// rendering renders a proxy's resources, reusing its shared part's.
func (e *Emitter) rendering(cfg *Config) (*rendering, error) {
	p := cfg.part
	if p == nil {
		return e.render(cfg.Clusters, cfg.Listeners, cfg.Routes, cfg.Endpoints)
	}
	if p.err != nil {
		return nil, p.err
	}
	own, err := e.render(cfg.Clusters[len(p.clusters):], cfg.Listeners[len(p.listeners):], nil, nil)
	if err != nil {
		return nil, err
	}
	return p.render.append(own), nil
}

// bootstrap is one bootstrap, identified as the sidecar would be, with
// the admin interface on localhost; with Istio TLS it also reaches
// istio-agent for certificates. Its listeners and clusters are static, or
// with Dedup in shared files it names.
func (e *Emitter) bootstrap(out *Output, p *resolve.Proxy, r *rendering, self string) ([]File, error) {
	var sds *clusterv3.Cluster
	// Without Istio TLS, secrets only istio-agent can serve (Kubernetes
	// credentials, the mesh root of off mode) still need its socket.
	if e.opts.TLS == TLSIstio || r.mentions(sdsClusterRef) {
		var err error
		if sds, err = sdsCluster(); err != nil {
			return nil, err
		}
	}
	b := &bootstrapv3.Bootstrap{
		Node:  node(p, e.shared.mesh.Config.DomainSuffix),
		Admin: &bootstrapv3.Admin{Address: socketAddress("127.0.0.1", 15000)},
	}
	if e.opts.Dedup {
		clusters := File{Data: responseDocument(e.buffer(out), ClusterType, r.clusters), Shared: true}
		listeners := File{Data: responseDocument(e.buffer(out), ListenerType, r.listeners), Shared: true}
		clusters.Path, listeners.Path = sharedPath("clusters", clusters.Data), sharedPath("listeners", listeners.Data)
		b.DynamicResources = &bootstrapv3.Bootstrap_DynamicResources{
			CdsConfig: e.pathSource(clusters.Path),
			LdsConfig: e.pathSource(listeners.Path),
		}
		if sds != nil {
			b.StaticResources = &bootstrapv3.Bootstrap_StaticResources{Clusters: []*clusterv3.Cluster{sds}}
		}
		data, err := indentedJSON(b, 0)
		if err != nil {
			return nil, err
		}
		return []File{{Path: self, Data: append(data, '\n')}, clusters, listeners}, nil
	}
	if sds != nil {
		f, err := e.fragment(sds)
		if err != nil {
			return nil, err
		}
		r = r.append(&rendering{clusters: []fragment{f}})
	}
	node, err := indentedJSON(b.Node, 1)
	if err != nil {
		return nil, err
	}
	admin, err := indentedJSON(b.Admin, 1)
	if err != nil {
		return nil, err
	}
	return []File{{Path: self, Data: bootstrapDocument(e.buffer(out), node, admin, r)}}, nil
}

// SharedDir holds the content-addressed files of --dedup. The underscore
// keeps it apart from every namespace's directory: no Kubernetes name has
// one.
const SharedDir = "_shared"

// sharedPath names a shared file by its content.
func sharedPath(kind string, data []byte) string {
	sum := sha256.Sum256(data)
	return filepath.Join(SharedDir, kind+"-"+hex.EncodeToString(sum[:])+".json")
}

func (e *Emitter) pathSource(path string) *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_PathConfigSource{PathConfigSource: &corev3.PathConfigSource{
			Path: filepath.ToSlash(filepath.Join(e.opts.DedupRoot, path)),
		}},
		ResourceApiVersion: corev3.ApiVersion_V3,
	}
}

// node is the identity istiod knows a proxy by.
func node(p *resolve.Proxy, domain string) *corev3.Node {
	ip := "0.0.0.0"
	if len(p.IPs) > 0 {
		ip = p.IPs[0]
	}
	app := cmp.Or(p.Labels["app.kubernetes.io/name"], p.Labels["app"], p.Name)
	return &corev3.Node{
		Id:      fmt.Sprintf("%s~%s~%s.%s~%s.svc.%s", p.Type, ip, p.Name, p.Namespace, p.Namespace, domain),
		Cluster: app + "." + p.Namespace,
	}
}

// sdsCluster reaches istio-agent, which serves the workload certificate
// and trust root by SDS.
func sdsCluster() (*clusterv3.Cluster, error) {
	h2, err := anypb.New(&httpv3.HttpProtocolOptions{UpstreamProtocolOptions: explicitH2()})
	if err != nil {
		return nil, fmt.Errorf("%s cluster: %w", SDSCluster, err)
	}
	return &clusterv3.Cluster{
		Name:                 SDSCluster,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(1e9),
		LoadAssignment:       loadAssignment(SDSCluster, []resolve.Endpoint{{Address: "unix://" + sdsSocket}}),
		// SDS is gRPC, so HTTP/2.
		TypedExtensionProtocolOptions: map[string]*anypb.Any{httpOptsKey: h2},
	}, nil
}

// WriteOptions say where and how to write a build.
type WriteOptions struct {
	// Dir is the directory the files go to: a fresh one, which
	// internal/outdir swaps into place once the build is accepted.
	Dir string
	// Workers bounds parallel proxy builds; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called after each proxy is written.
	Progress func(done, total int)
}

// Result is a finished build.
type Result struct {
	Index []IndexEntry
	// Problems are the validation problems of each proxy with any, by
	// proxy ID.
	Problems map[string][]string
}

// Write builds the given proxies in parallel and writes them, with
// index.json, into opts.Dir. It stops at the first error or when ctx ends,
// after the proxies in flight; what it wrote is then incomplete and the
// caller discards it. Memory stays bounded: each proxy's config is dropped
// once written.
func (e *Emitter) Write(ctx context.Context, views []*resolve.ProxyView, opts WriteOptions) (Result, error) {
	if err := e.Layout(views); err != nil {
		return Result{}, err
	}
	e.parts.expect(e.shared.mesh, views)
	res, err := e.writeAll(ctx, views, opts.Dir, opts)
	if err != nil {
		return Result{}, err
	}
	if err := writeIndex(opts.Dir, res.Index); err != nil {
		return Result{}, err
	}
	return res, nil
}

func (e *Emitter) writeAll(ctx context.Context, views []*resolve.ProxyView, dir string, opts WriteOptions) (Result, error) {
	workers := cmp.Or(opts.Workers, runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	entries := make([]IndexEntry, len(views))
	problems := make([][]string, len(views))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				cfg, o, err := e.Render(views[i])
				if err == nil {
					err = writeFiles(dir, o.Files)
					e.Release(o)
				}
				if err != nil {
					cancel(err)
					continue
				}
				entries[i], problems[i] = o.Entry, cfg.Problems
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(views))
					mu.Unlock()
				}
			}
		})
	}
feed:
	for i := range views {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return Result{}, err
	}
	res := Result{Index: entries, Problems: map[string][]string{}}
	for i, p := range problems {
		if len(p) > 0 {
			res.Problems[views[i].Proxy.ID()] = p
		}
	}
	return res, nil
}

func writeFiles(dir string, files []File) error {
	for _, f := range files {
		path := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		if f.Shared {
			if err := writeOnce(path, f.Data); err != nil {
				return fmt.Errorf("write %s: %w", f.Path, err)
			}
			continue
		}
		if err := writeNew(path, f.Data); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	return nil
}

// writeNew writes a file that must not exist yet: every proxy has paths of
// its own, and a second writer would be a bug to report, not to hide.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// writeOnce writes a content-addressed file unless it exists: the name
// says what it holds. It goes through a temporary name, so a reader never
// sees half of it.
func writeOnce(path string, data []byte) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".part-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeIndex(dir string, entries []IndexEntry) error {
	data, err := json.MarshalIndent(struct {
		Proxies []IndexEntry `json:"proxies"`
	}{entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return writeFiles(dir, []File{{Path: "index.json", Data: append(data, '\n')}})
}
