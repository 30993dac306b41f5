package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

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
type digester struct {
	seen map[proto.Message]digest
	// sets are the resource sets made, by type URL and version: proxies
	// of one scope have equal routes and endpoints, and share one set.
	sets map[[2]string]cache.Resources
	// bytes is the size of every distinct resource hashed.
	bytes int64
}

func newDigester() *digester {
	return &digester{seen: map[proto.Message]digest{}, sets: map[[2]string]cache.Resources{}}
}

func (d *digester) digest(m proto.Message) (digest, error) {
	if g, ok := d.seen[m]; ok {
		return g, nil
	}
	// Deterministic marshaling: the build's output is deterministic, so
	// equal content gives equal bytes and an equal version.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return digest{}, err
	}
	g := digest{sha256.Sum256(b), len(b)}
	d.seen[m] = g
	d.bytes += int64(len(b))
	return g, nil
}

// snapshot is a proxy's resources in the cache's form, each type versioned
// by the hash of its resources: a type whose content did not change keeps
// its version, and Envoy is sent nothing for it.
func (d *digester) snapshot(c *envoycfg.Config) (*cache.Snapshot, error) {
	lists := map[string][]proto.Message{}
	for _, m := range c.Resources() {
		k, _ := envoycfg.KeyOf(m)
		for _, t := range typeURLs {
			if t.name == k.Type {
				lists[t.url] = append(lists[t.url], m)
			}
		}
	}
	s := &cache.Snapshot{}
	for _, t := range typeURLs {
		h := sha256.New()
		for _, m := range lists[t.url] {
			g, err := d.digest(m)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", typeName(t.url), err)
			}
			h.Write(g.sum[:])
		}
		key := [2]string{t.url, hex.EncodeToString(h.Sum(nil)[:8])}
		set, ok := d.sets[key]
		if !ok {
			items := make([]types.Resource, len(lists[t.url]))
			for i, m := range lists[t.url] {
				items[i] = m
			}
			set = cache.NewResources(key[1], items)
			d.sets[key] = set
		}
		s.Resources[cache.GetResponseType(t.url)] = set
	}
	return s, nil
}

// sameVersions reports whether two snapshots carry the same version of
// every type served.
func sameVersions(a, b *cache.Snapshot) bool {
	for _, t := range typeURLs {
		if a.GetVersion(t.url) != b.GetVersion(t.url) {
			return false
		}
	}
	return true
}
