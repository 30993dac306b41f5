package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshc/meshc/internal/envoycfg"
)

// typeURLs are the types served, with the names syncz and metrics give
// them.
var typeURLs = []struct {
	url  string
	name envoycfg.Type
}{
	{resource.ClusterType, envoycfg.Cluster},
	{resource.EndpointType, envoycfg.Endpoints},
	{resource.ListenerType, envoycfg.Listener},
	{resource.RouteType, envoycfg.Route},
}

// typeName is a type URL's short name; an unknown URL is itself.
func typeName(url string) string {
	for _, t := range typeURLs {
		if t.url == url {
			return string(t.name)
		}
	}
	return url
}

// digest is a resource's content hash and its size on the wire.
type digest struct {
	sum  [sha256.Size]byte
	size int
}

// digester hashes resources once each: proxies share most of theirs
// (envoycfg.Config), so one compile's resources are hashed by pointer.
// Snapshots read it for delta xDS while a publish may add to it.
type digester struct {
	mu   sync.Mutex
	seen map[proto.Message]digest
	// bytes is the size of every distinct resource hashed.
	bytes int64
	// prev, while set, is the last publish's digester: a recompile keeps
	// the configurations of the proxies whose inputs did not change, and
	// their resources are not hashed again. hashed counts those that are.
	prev   *digester
	hashed int
}

// newDigester returns a digester that takes what prev (nil for none)
// hashed until forget is called.
func newDigester(prev *digester) *digester {
	return &digester{seen: map[proto.Message]digest{}, prev: prev}
}

// forget drops the previous digester, so that it can be freed.
func (d *digester) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.prev = nil
}

// lookup is m's digest if d has it.
func (d *digester) lookup(m proto.Message) (digest, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	g, ok := d.seen[m]
	return g, ok
}

func (d *digester) digest(m proto.Message) (digest, error) {
	d.mu.Lock()
	g, ok := d.seen[m]
	prev := d.prev
	d.mu.Unlock()
	if ok {
		return g, nil
	}
	if prev != nil {
		if g, ok := prev.lookup(m); ok {
			d.add(m, g, false)
			return g, nil
		}
	}
	// Deterministic marshaling: the build's output is deterministic, so
	// equal content gives equal bytes and an equal version.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return digest{}, err
	}
	g = digest{sha256.Sum256(b), len(b)}
	d.add(m, g, true)
	return g, nil
}

func (d *digester) add(m proto.Message, g digest, hashed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, again := d.seen[m]; again {
		return
	}
	d.seen[m] = g
	d.bytes += int64(g.size)
	if hashed {
		d.hashed++
	}
}

// hashedCount is how many resources d marshaled and hashed itself.
func (d *digester) hashedCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hashed
}

// totalBytes is the size of every distinct resource hashed so far.
func (d *digester) totalBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bytes
}

// snapshot is one proxy's resources as the snapshot cache reads them
// (cache.ResourceSnapshot), each type versioned by the hash of its
// resources: a type whose content did not change keeps its version, and
// Envoy is sent nothing for it. It holds the proxy's config, whose
// resource lists mostly share their part's; the maps by name the cache
// asks for are made per response, not kept per proxy.
type snapshot struct {
	cfg *envoycfg.Config
	// d knows the resources' hashes: the digester of the publish that
	// made the snapshot, then of each publish that keeps it (rebase), so
	// that a snapshot kept for long does not keep old digesters alive.
	d        atomic.Pointer[digester]
	versions [4]string // by typeURLs index
}

// rebase makes the snapshot read hashes from d, a later publish's.
func (s *snapshot) rebase(d *digester) { s.d.Store(d) }

func (d *digester) snapshot(c *envoycfg.Config) (*snapshot, error) {
	s := &snapshot{cfg: c}
	s.d.Store(d)
	for i, t := range typeURLs {
		h := sha256.New()
		for _, m := range s.list(i) {
			g, err := d.digest(m)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", typeName(t.url), err)
			}
			h.Write(g.sum[:])
		}
		s.versions[i] = hex.EncodeToString(h.Sum(nil)[:8])
	}
	return s, nil
}

// list is the resources of typeURLs[i].
func (s *snapshot) list(i int) []proto.Message {
	switch typeURLs[i].name {
	case envoycfg.Cluster:
		return messages(s.cfg.Clusters())
	case envoycfg.Endpoints:
		return messages(s.cfg.Endpoints())
	case envoycfg.Listener:
		return messages(s.cfg.Listeners())
	default:
		return messages(s.cfg.Routes())
	}
}

func messages[M proto.Message](ms []M) []proto.Message {
	out := make([]proto.Message, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

func typeIndex(typeURL string) int {
	for i, t := range typeURLs {
		if t.url == typeURL {
			return i
		}
	}
	return -1
}

// GetVersion implements cache.ResourceSnapshot.
func (s *snapshot) GetVersion(typeURL string) string {
	if i := typeIndex(typeURL); i >= 0 {
		return s.versions[i]
	}
	return ""
}

// GetResourcesAndTTL implements cache.ResourceSnapshot.
func (s *snapshot) GetResourcesAndTTL(typeURL string) map[string]types.ResourceWithTTL {
	return byName(s, typeURL, func(m proto.Message) types.ResourceWithTTL { return types.ResourceWithTTL{Resource: m} })
}

// GetResources implements cache.ResourceSnapshot.
func (s *snapshot) GetResources(typeURL string) map[string]types.Resource {
	return byName(s, typeURL, func(m proto.Message) types.Resource { return m })
}

// ConstructVersionMap implements cache.ResourceSnapshot: every resource
// was hashed when the snapshot was made.
func (s *snapshot) ConstructVersionMap() error { return nil }

// GetVersionMap implements cache.ResourceSnapshot: each resource's
// version, for delta xDS, is its content hash.
func (s *snapshot) GetVersionMap(typeURL string) map[string]string {
	return byName(s, typeURL, func(m proto.Message) string {
		// Hashed when the snapshot was made or kept; an error is
		// impossible here.
		g, _ := s.d.Load().digest(m)
		return hex.EncodeToString(g.sum[:8])
	})
}

// byName maps the name of each resource of a type to what of it the
// cache asks for; nil for a type not served.
func byName[V any](s *snapshot, typeURL string, value func(proto.Message) V) map[string]V {
	i := typeIndex(typeURL)
	if i < 0 {
		return nil
	}
	ms := s.list(i)
	out := make(map[string]V, len(ms))
	for _, m := range ms {
		out[cache.GetResourceName(m)] = value(m)
	}
	return out
}

// sameVersions reports whether two snapshots carry the same version of
// every type served.
func sameVersions(a, b *snapshot) bool { return a.versions == b.versions }
