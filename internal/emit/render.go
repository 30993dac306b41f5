package emit

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// rendering holds resources rendered as JSON fragments, each indented for
// the place the output format puts it, so a document is assembled by
// concatenation and resources shared by proxies are rendered once. The
// bytes equal those of rendering the whole document at once.
type rendering struct {
	clusters, listeners, routes, endpoints []fragment
	// wire is the resources' size as protobuf, as xDS sends them.
	wire int
}

type cachedFragment struct {
	fragment
	wire int
}

type fragment struct {
	json []byte
	// sum is the hash of the resource's deterministic protobuf form.
	sum [sha256.Size]byte
}

// sdsClusterRef is the agent's cluster name as an SDS config holds it (no
// cluster or other string of istiod's naming equals it).
var sdsClusterRef = []byte(`"` + SDSCluster + `"`)

// mentions says whether a cluster or listener holds s.
func (r *rendering) mentions(s []byte) bool {
	for _, fs := range [][]fragment{r.clusters, r.listeners} {
		for _, f := range fs {
			if bytes.Contains(f.json, s) {
				return true
			}
		}
	}
	return false
}

func (r *rendering) append(o *rendering) *rendering {
	return &rendering{
		clusters:  concat(r.clusters, o.clusters),
		listeners: concat(r.listeners, o.listeners),
		routes:    concat(r.routes, o.routes),
		endpoints: concat(r.endpoints, o.endpoints),
		wire:      r.wire + o.wire,
	}
}

// Depths of a resource in each format: bootstrap lists sit in
// static_resources, DiscoveryResponse resources (xds, and shared files)
// one level down from the top.
const (
	bootstrapDepth = 3
	xdsDepth       = 2
)

// render renders resources, packed in Any for a DiscoveryResponse or
// plain for a bootstrap's static resources.
func (e *Emitter) render(cs []*clusterv3.Cluster, ls []*listenerv3.Listener, rs []*routev3.RouteConfiguration, eps []*endpointv3.ClusterLoadAssignment, packed bool) (*rendering, error) {
	var jobs []renderJob
	add := func(ms []proto.Message, cached bool) []fragment {
		out := make([]fragment, len(ms))
		for i, m := range ms {
			jobs = append(jobs, renderJob{m: m, cached: cached, packed: packed, out: &out[i]})
		}
		return out
	}
	r := &rendering{clusters: add(messages(cs), true), listeners: add(messages(ls), false)}
	if e.opts.Format == XDS { // elsewhere routes and endpoints are inline
		r.routes, r.endpoints = add(messages(rs), false), add(messages(eps), true)
	}
	// A whole-mesh part is thousands of resources, and other workers wait
	// for it: render on every core. Each job writes its own slot, so the
	// order does not depend on scheduling.
	workers := min(runtime.GOMAXPROCS(0), max(1, len(jobs)/64))
	wires := make([]int, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(jobs); i += workers {
				if e.stopped() {
					errs[w] = errStopped
					return
				}
				n, err := e.renderOne(jobs[i])
				wires[w] += n
				errs[w] = cmp.Or(errs[w], err)
			}
		})
	}
	wg.Wait()
	for _, n := range wires {
		r.wire += n
	}
	return r, errors.Join(errs...)
}

// renderJob is one resource to render into out.
type renderJob struct {
	m proto.Message
	// cached resources (registered in frags when cached) are rendered
	// once per mesh; nothing else is kept.
	cached bool
	packed bool
	out    *fragment
}

// fragSlots hold a registered resource's renderings, plain and packed.
type fragSlots [2]cachedFragment

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// renderOne renders a job and returns its size on the wire.
func (e *Emitter) renderOne(j renderJob) (int, error) {
	if j.cached {
		if v, ok := e.frags.Load(j.m); ok {
			slots := v.(fragSlots)
			if c := slots[boolIndex(j.packed)]; c.json != nil {
				*j.out = c.fragment
				return c.wire, nil
			}
			f, err := e.fragment(j.m, j.packed)
			if err != nil {
				return 0, err
			}
			*j.out = f
			// Two workers may fill the two slots at once and one store
			// lose the other's: it is rendered again, to the same bytes.
			slots[boolIndex(j.packed)] = cachedFragment{f, proto.Size(j.m)}
			e.frags.Store(j.m, slots)
			return proto.Size(j.m), nil
		}
	}
	f, err := e.fragment(j.m, j.packed)
	*j.out = f
	return proto.Size(j.m), err
}

func messages[M proto.Message](ms []M) []proto.Message {
	out := make([]proto.Message, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// fragment renders one resource: as itself in a bootstrap, packed in an
// Any in a DiscoveryResponse.
func (e *Emitter) fragment(m proto.Message, packed bool) (fragment, error) {
	bin, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fragment{}, err
	}
	f := fragment{sum: sha256.Sum256(bin)}
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return fragment{}, err
	}
	depth := bootstrapDepth
	if packed {
		depth = xdsDepth
		raw = packedJSON(string(m.ProtoReflect().Descriptor().FullName()), raw)
	}
	scratch, _ := e.scratch.Get().(*bytes.Buffer)
	if scratch == nil {
		scratch = new(bytes.Buffer)
	}
	defer e.scratch.Put(scratch)
	f.json, err = indentJSON(scratch, raw, depth)
	return f, err
}

// packedJSON turns a message's JSON into that of an Any holding it, as
// protojson writes one: "@type" first, then the message's own members.
// Splicing saves protojson decoding the packed bytes back into a message,
// which costs as much as the rendering. It is only for messages, not the
// well-known types whose JSON is not an object.
func packedJSON(fullName string, raw []byte) []byte {
	body := bytes.TrimSpace(raw)
	typ := `{"@type":"type.googleapis.com/` + fullName + `"`
	inner := bytes.TrimSpace(body[1 : len(body)-1])
	if len(inner) == 0 {
		return []byte(typ + "}")
	}
	return slices.Concat([]byte(typ+","), inner, []byte("}"))
}

// indentJSON indents a rendered message as if it sat depth levels deep,
// through scratch, and returns a copy of exactly the indented size:
// json.Indent grows its destination to twice the input, which for every
// resource of a 6,000-cluster proxy was a tenth of what it allocated.
// protojson varies whitespace on purpose from build to build; going
// through encoding/json fixes the bytes (docs/semantics/envoy-output.md §E2.3).
func indentJSON(scratch *bytes.Buffer, raw []byte, depth int) ([]byte, error) {
	scratch.Reset()
	if err := json.Indent(scratch, raw, strings.Repeat("  ", depth), "  "); err != nil {
		return nil, err
	}
	return bytes.Clone(scratch.Bytes()), nil
}

// indentedJSON renders a message as JSON with Envoy's field names,
// indented as if it sat depth levels deep.
func indentedJSON(m proto.Message, depth int) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return indentJSON(new(bytes.Buffer), raw, depth)
}

// document assembles a JSON object from already rendered members, in
// order; a list member with no items is left out, as protojson does.
type document struct {
	buf   *bytes.Buffer
	first []bool
}

func (d *document) open(key string, depth int, bracket byte) {
	d.sep(depth)
	if key != "" {
		fmt.Fprintf(d.buf, "%q: ", key)
	}
	d.buf.WriteByte(bracket)
	d.first = append(d.first, true)
}

func (d *document) close(depth int, bracket byte) {
	d.first = d.first[:len(d.first)-1]
	d.buf.WriteByte('\n')
	d.buf.WriteString(strings.Repeat("  ", depth))
	d.buf.WriteByte(bracket)
}

// sep starts a member or item at depth: a comma unless it is the first.
func (d *document) sep(depth int) {
	if n := len(d.first); n > 0 {
		if !d.first[n-1] {
			d.buf.WriteByte(',')
		}
		d.first[n-1] = false
		d.buf.WriteByte('\n')
		d.buf.WriteString(strings.Repeat("  ", depth))
	}
}

// grow sizes the buffer once: documents run to tens of megabytes, and
// growing by doubling would copy and clear them several times. Buffers
// come from a pool, so a build touches fresh memory only for its largest
// documents.
func (d *document) grow(extra int, lists ...[]fragment) {
	n := extra + 256
	for _, l := range lists {
		for _, f := range l {
			n += len(f.json) + 16
		}
	}
	d.buf.Grow(n)
}

// raw adds a member whose value is rendered JSON indented for depth.
func (d *document) raw(key string, depth int, value []byte) {
	d.sep(depth)
	fmt.Fprintf(d.buf, "%q: ", key)
	d.buf.Write(value)
}

func (d *document) list(key string, depth int, items []fragment) {
	if len(items) == 0 {
		return
	}
	d.open(key, depth, '[')
	for _, f := range items {
		d.sep(depth + 1)
		d.buf.Write(f.json)
	}
	d.close(depth, ']')
}

// bootstrapDocument is the Envoy bootstrap of a proxy: node, static
// listeners and clusters, dynamic resources (rendered, or nil), admin, in
// protojson's field order.
func bootstrapDocument(buf *bytes.Buffer, node, dynamic, admin []byte, r *rendering) []byte {
	d := document{buf: buf}
	d.grow(len(node)+len(dynamic)+len(admin), r.listeners, r.clusters)
	d.open("", 0, '{')
	d.raw("node", 1, node)
	if len(r.listeners)+len(r.clusters) > 0 {
		d.open("static_resources", 1, '{')
		d.list("listeners", 2, r.listeners)
		d.list("clusters", 2, r.clusters)
		d.close(1, '}')
	}
	if dynamic != nil {
		d.raw("dynamic_resources", 1, dynamic)
	}
	d.raw("admin", 1, admin)
	d.close(0, '}')
	d.buf.WriteByte('\n')
	return d.buf.Bytes()
}

// responseDocument is a DiscoveryResponse for one type; its version is a
// hash of the resources.
func responseDocument(buf *bytes.Buffer, typeURL string, items []fragment) []byte {
	h := sha256.New()
	for _, f := range items {
		h.Write(f.sum[:])
	}
	d := document{buf: buf}
	d.grow(len(typeURL)+64, items)
	d.open("", 0, '{')
	d.raw("version_info", 1, []byte(fmt.Sprintf("%q", hex.EncodeToString(h.Sum(nil))[:16])))
	d.list("resources", 1, items)
	d.raw("type_url", 1, []byte(fmt.Sprintf("%q", typeURL)))
	d.close(0, '}')
	d.buf.WriteByte('\n')
	return d.buf.Bytes()
}
