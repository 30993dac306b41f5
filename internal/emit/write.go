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
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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

// sdsSocket is where istio-agent serves the workload's certificates. The
// agent's own bootstrap spells it relative to Envoy's working directory,
// which is / in the sidecar container; a bootstrap meshc writes is run
// from OUT, so the path is absolute.
const sdsSocket = "/var/run/secrets/workload-spiffe-uds/socket"

// File is one output file, relative to the output directory.
type File struct {
	Path string
	// Data is nil for a shared file another proxy of the build carries;
	// Size is then its size.
	Data []byte
	Size int
	// Shared files are content-addressed: written once, by the proxy
	// that carries their bytes.
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
	// Shared are the content-addressed files the proxy's resources are
	// also in (Options.Shared).
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
	own, shared, err := e.renderings(cfg)
	if err != nil {
		return nil, Output{}, fmt.Errorf("proxy %s: %w", v.Proxy.ID(), err)
	}
	out := Output{Entry: IndexEntry{
		Namespace: v.Proxy.Namespace, Name: v.Proxy.Name, Kind: v.Proxy.Kind, Type: string(v.Proxy.Type),
		Labels: v.Proxy.Labels, Problems: len(cfg.Problems), WireBytes: own.wire,
		Counts: Counts{len(cfg.Clusters), len(cfg.Listeners), len(cfg.Routes), len(cfg.Endpoints)},
	}}
	var sharedFiles []File
	if shared != nil {
		sharedFiles = e.sharedFiles(shared)
		out.Entry.WireBytes += shared.render.wire
	}
	if sc := v.Choice.Sidecar; sc != nil {
		out.Entry.Sidecar = sc.Namespace + "/" + sc.Name
	}
	dir := filepath.FromSlash(base)
	switch {
	case e.opts.ADS != "":
		doc, err := e.adsBootstrap(&out, v.Proxy, own, dir+".json")
		if err != nil {
			return nil, Output{}, fmt.Errorf("proxy %s: %w", v.Proxy.ID(), err)
		}
		out.Files = []File{doc}
		out.Entry.Path = filepath.ToSlash(dir) + ".json"
	case e.opts.Format == XDS:
		out.Files = append([]File{
			{Path: filepath.Join(dir, "clusters.json"), Data: responseDocument(e.buffer(&out), ClusterType, own.clusters)},
			{Path: filepath.Join(dir, "endpoints.json"), Data: responseDocument(e.buffer(&out), EndpointType, own.endpoints)},
			{Path: filepath.Join(dir, "listeners.json"), Data: responseDocument(e.buffer(&out), ListenerType, own.listeners)},
			{Path: filepath.Join(dir, "routes.json"), Data: responseDocument(e.buffer(&out), RouteType, own.routes)},
		}, sharedFiles...)
		out.Entry.Path = filepath.ToSlash(dir)
	default:
		files, err := e.bootstrap(&out, v.Proxy, own, sharedFiles, dir+".json")
		if err != nil {
			return nil, Output{}, fmt.Errorf("proxy %s: %w", v.Proxy.ID(), err)
		}
		out.Files = files
		out.Entry.Path = filepath.ToSlash(dir) + ".json"
	}
	h := sha256.New()
	for _, f := range out.Files {
		out.Entry.Bytes += max(f.Size, len(f.Data))
		h.Write([]byte(f.Path))
		if f.Shared {
			// The name is the content's hash: hashing megabytes again for
			// every proxy would cost more than the build.
			out.Entry.Shared = append(out.Entry.Shared, filepath.ToSlash(f.Path))
			continue
		}
		h.Write(f.Data)
	}
	out.Entry.SHA256 = hex.EncodeToString(h.Sum(nil))
	return cfg, out, nil
}

// renderings renders a proxy's resources, reusing its part's: all of them
// in own, or with Shared its own resources and its part's private
// clusters in own and the part it shares, whose other resources go to
// shared files.
func (e *Emitter) renderings(cfg *Config) (own *rendering, shared *part, err error) {
	packed := e.opts.Format == XDS
	p := cfg.part
	if p == nil {
		own, err = e.render(cfg.Clusters, cfg.Listeners, cfg.Routes, cfg.Endpoints, packed)
		return own, nil, err
	}
	pr, err := e.rendered(p)
	if err != nil {
		return nil, nil, err
	}
	own, err = e.render(cfg.ownClusters, cfg.ownListeners, nil, nil, packed)
	switch {
	case err != nil:
		return nil, nil, err
	case !e.opts.Shared:
		return pr.append(own), nil, nil
	case len(p.private) == 0:
		return own, p, nil
	}
	mine := p.privateRender.append(own)
	mine.wire = own.wire // the part's wire size, which the caller adds, counts the private clusters
	return mine, p, nil
}

// sharedFiles are a part's content-addressed files: its clusters but the
// private ones, its listeners, and with xDS its routes and endpoints, each a
// DiscoveryResponse named by the hash of its resources. Parts of many
// scopes share files (a mesh-wide cluster set is the same for every
// namespace without a Sidecar), so each document is made once per Emitter:
// the first proxy to need it gets its bytes to write, the others only its
// name and size.
func (e *Emitter) sharedFiles(p *part) []File {
	p.filesOnce.Do(func() {
		clusters := p.render.clusters
		if len(p.private) > 0 {
			private := make(map[*clusterv3.Cluster]bool, len(p.private))
			for _, c := range p.private {
				private[c] = true
			}
			clusters = nil
			for i, c := range p.clusters {
				if !private[c] {
					clusters = append(clusters, p.render.clusters[i])
				}
			}
		}
		docs := []partDoc{{"clusters", ClusterType, clusters}, {"listeners", ListenerType, p.render.listeners}}
		if e.opts.Format == XDS {
			docs = append(docs, partDoc{"routes", RouteType, p.render.routes}, partDoc{"endpoints", EndpointType, p.render.endpoints})
		}
		p.docs = docs
	})
	out := make([]File, 0, len(p.docs))
	for _, d := range p.docs {
		path := sharedPath(d.kind, d.items)
		v, _ := e.sharedDocs.LoadOrStore(path, &sharedDoc{})
		sd := v.(*sharedDoc)
		var data []byte
		sd.once.Do(func() {
			data = responseDocument(new(bytes.Buffer), d.typeURL, d.items)
			sd.size = len(data)
		})
		out = append(out, File{Path: path, Data: data, Size: sd.size, Shared: true})
	}
	return out
}

// partDoc is one of a part's shared documents.
type partDoc struct {
	kind, typeURL string
	items         []fragment
}

// sharedDoc is a shared document made by this Emitter, and its size.
type sharedDoc struct {
	once sync.Once
	size int
}

// bootstrap is one bootstrap, identified as the sidecar would be, with
// the admin interface on localhost; with Istio TLS it also reaches
// istio-agent for certificates. Its own listeners and clusters are
// static; shared ones, when given, it loads from their files through
// filesystem config sources (dynamic_resources).
func (e *Emitter) bootstrap(out *Output, p *resolve.Proxy, r *rendering, shared []File, self string) ([]File, error) {
	agent := r.mentions(sdsClusterRef) || slices.ContainsFunc(shared, func(f File) bool { return bytes.Contains(f.Data, sdsClusterRef) })
	var dyn *bootstrapv3.Bootstrap_DynamicResources
	if len(shared) > 0 {
		dyn = &bootstrapv3.Bootstrap_DynamicResources{}
		for _, f := range shared {
			switch {
			case strings.HasPrefix(filepath.Base(f.Path), "clusters-"):
				dyn.CdsConfig = e.pathSource(f.Path)
			case strings.HasPrefix(filepath.Base(f.Path), "listeners-"):
				dyn.LdsConfig = e.pathSource(f.Path)
			}
		}
	}
	doc, err := e.bootstrapFile(out, p, r, agent, dyn, self)
	if err != nil {
		return nil, err
	}
	return append([]File{doc}, shared...), nil
}

// adsBootstrap is the bootstrap of Options.ADS: every resource of the
// proxy, served (its rendering), comes over ADS; the bootstrap holds only
// the way there and to istio-agent.
func (e *Emitter) adsBootstrap(out *Output, p *resolve.Proxy, served *rendering, self string) (File, error) {
	xds, err := xdsCluster(e.opts.ADS)
	if err != nil {
		return File{}, err
	}
	f, err := e.fragment(xds, false)
	if err != nil {
		return File{}, err
	}
	return e.bootstrapFile(out, p, &rendering{clusters: []fragment{f}}, served.mentions(sdsClusterRef), adsResources(), self)
}

// bootstrapFile is a bootstrap document with static resources r and
// dynamic ones dyn (nil for none); agent says that a resource names
// istio-agent's SDS cluster.
func (e *Emitter) bootstrapFile(out *Output, p *resolve.Proxy, r *rendering, agent bool, dyn *bootstrapv3.Bootstrap_DynamicResources, self string) (File, error) {
	// Without Istio TLS, secrets only istio-agent can serve (Kubernetes
	// credentials, the mesh root of off mode) still need its socket.
	if e.opts.TLS == TLSIstio || agent {
		sds, err := sdsCluster()
		if err != nil {
			return File{}, err
		}
		f, err := e.fragment(sds, false)
		if err != nil {
			return File{}, err
		}
		r = r.append(&rendering{clusters: []fragment{f}})
	}
	node, err := indentedJSON(node(p, e.shared.mesh.Config.DomainSuffix), 1)
	if err != nil {
		return File{}, err
	}
	admin, err := indentedJSON(&bootstrapv3.Admin{Address: socketAddress("127.0.0.1", 15000)}, 1)
	if err != nil {
		return File{}, err
	}
	var dynamic []byte
	if dyn != nil {
		if dynamic, err = indentedJSON(dyn, 1); err != nil {
			return File{}, err
		}
	}
	return File{Path: self, Data: bootstrapDocument(e.buffer(out), node, dynamic, admin, r)}, nil
}

// SharedDir holds the content-addressed files of --dedup. The underscore
// keeps it apart from every namespace's directory: no Kubernetes name has
// one.
const SharedDir = "_shared"

// sharedPath names a shared file by its content: the hash of its
// resources' deterministic protobuf forms, in order.
func sharedPath(kind string, items []fragment) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, f := range items {
		h.Write(f.sum[:])
	}
	return filepath.Join(SharedDir, kind+"-"+hex.EncodeToString(h.Sum(nil))+".json")
}

func (e *Emitter) pathSource(path string) *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_PathConfigSource{PathConfigSource: &corev3.PathConfigSource{
			Path: filepath.ToSlash(filepath.Join(e.opts.SharedRoot, path)),
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
	// Info is what index.json says of the build as a whole.
	Info BuildInfo
}

// BuildInfo is what index.json says of a build as a whole, so that two
// builds can be told apart: the meshc that wrote it, the options that
// shaped its output, and the services whose VIPs meshc made up.
type BuildInfo struct {
	Meshc string `json:"meshc"`
	// Options are the settings that shaped the output, by flag name.
	Options map[string]string `json:"options"`
	// Inputs is a digest of what the build was compiled from.
	Inputs InputDigest `json:"inputs"`
	// PlaceholderVIPs lists the services the manifests gave no clusterIP,
	// whose listeners and routes carry a made-up address.
	PlaceholderVIPs *Placeholders `json:"placeholderVIPs,omitempty"`
}

// InputDigest identifies the inputs of a build: the same documents give
// the same digest whatever their files' names and order.
type InputDigest struct {
	// Digest is "sha256:" and the hex SHA-256 of the sorted, distinct
	// SHA-256s of the documents.
	Digest    string `json:"digest"`
	Documents int    `json:"documents"`
}

// Placeholders are the services with a made-up VIP and the range it came
// from.
type Placeholders struct {
	Range    string   `json:"range"`
	Services []string `json:"services"`
}

// Result is a finished build.
type Result struct {
	Index []IndexEntry
	// Problems are the validation problems of each proxy with any, by
	// proxy ID.
	Problems map[string][]string
	// Written is the bytes of the proxies' files, each shared file once.
	Written int64
}

// Write builds the given proxies in parallel and writes them, with
// index.json, into opts.Dir. It stops at the first error or when ctx ends,
// the proxies in flight at their next resource; what it wrote is then
// incomplete and the caller discards it. Memory stays bounded: each proxy's config is dropped
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
	if err := writeIndex(opts.Dir, opts.Info, res.Index); err != nil {
		return Result{}, err
	}
	return res, nil
}

func (e *Emitter) writeAll(ctx context.Context, views []*resolve.ProxyView, dir string, opts WriteOptions) (Result, error) {
	workers := cmp.Or(opts.Workers, runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.done = ctx.Done()
	entries := make([]IndexEntry, len(views))
	problems := make([][]string, len(views))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	var written atomic.Int64
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				if ctx.Err() != nil {
					continue // stopped: drain what the feed handed out
				}
				cfg, o, err := e.Render(views[i])
				if err == nil {
					err = writeFiles(dir, o.Files)
					for _, f := range o.Files {
						written.Add(int64(len(f.Data)))
					}
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
	// The proxies in flight stop at their next resource (Emitter.stopped).
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return Result{}, err
	}
	res := Result{Index: entries, Problems: map[string][]string{}, Written: written.Load()}
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
			if f.Data == nil {
				continue // another proxy of the build writes it
			}
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

func writeIndex(dir string, info BuildInfo, entries []IndexEntry) error {
	data, err := json.MarshalIndent(struct {
		Build   BuildInfo    `json:"build"`
		Proxies []IndexEntry `json:"proxies"`
	}{info, entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return writeFiles(dir, []File{{Path: "index.json", Data: append(data, '\n')}})
}
