package xds

import (
	"fmt"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/meshc/meshc/internal/compile"
)

// NodeName is what an Envoy node id names: a namespace and a pod (or
// proxy) name.
type NodeName struct {
	Namespace, Name string
}

// Key is the node's key in the snapshot cache: "namespace/name".
func (n NodeName) Key() string { return n.Namespace + "/" + n.Name }

// ParseNodeID reads an Envoy node id in istiod's form,
// TYPE~IP~POD.NAMESPACE~DOMAIN with TYPE sidecar or router, or meshc's
// plain NAMESPACE/NAME.
func ParseNodeID(id string) (NodeName, error) {
	if parts := strings.Split(id, "~"); len(parts) == 4 {
		switch parts[0] {
		case "sidecar", "router":
		default:
			return NodeName{}, fmt.Errorf("node id %q: proxy type %q is neither sidecar nor router", id, parts[0])
		}
		// Namespaces are DNS labels, without dots; pod names may have some.
		i := strings.LastIndexByte(parts[2], '.')
		if i <= 0 || i == len(parts[2])-1 {
			return NodeName{}, fmt.Errorf("node id %q: want POD.NAMESPACE in the third field, got %q", id, parts[2])
		}
		return NodeName{Namespace: parts[2][i+1:], Name: parts[2][:i]}, nil
	}
	ns, name, ok := strings.Cut(id, "/")
	if !ok || ns == "" || name == "" || strings.ContainsAny(name, "/~") {
		return NodeName{}, fmt.Errorf("node id %q: want NAMESPACE/NAME or istiod's sidecar~IP~POD.NAMESPACE~DOMAIN", id)
	}
	return NodeName{Namespace: ns, Name: name}, nil
}

// NodeHash keys the snapshot cache by the node's namespace/name, so the
// Envoys of one pod share its snapshot whatever their IP or domain. A
// malformed id is its own key: it matches no proxy and gets nothing.
type NodeHash struct{}

// ID implements cache.NodeHash.
func (NodeHash) ID(node *corev3.Node) string {
	n, err := ParseNodeID(node.GetId())
	if err != nil {
		return node.GetId()
	}
	return n.Key()
}

// match finds the proxy a node is: the proxy of that namespace and name,
// else, for a pod a controller made, its Deployment (NAME-HASH-XXXXX),
// ReplicaSet or StatefulSet (NAME-XXXXX, NAME-0).
func match(r *compile.Result, n NodeName) (string, bool) {
	if v, ok := r.Mesh.View(n.Namespace, n.Name); ok {
		return v.Proxy.ID(), true
	}
	name := n.Name
	for range 2 {
		i := strings.LastIndexByte(name, '-')
		if i <= 0 {
			break
		}
		name = name[:i]
		if v, ok := r.Mesh.View(n.Namespace, name); ok && v.Proxy.Kind != "Pod" {
			return v.Proxy.ID(), true
		}
	}
	return "", false
}
