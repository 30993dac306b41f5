package resolve

import (
	"strings"

	"github.com/meshc/meshc/internal/model"
)

// OlderFirst orders objects as istiod merges Gateways and picks the
// oldest of anything: creation time, then name, then namespace.
func OlderFirst(a, b *model.ObjectMeta) int {
	return olderFirst(a.Created, a.Name, a.Namespace, b.Created, b.Name, b.Namespace)
}

// ServerHosts are the hosts of server i of a Gateway as istiod compares
// them when it merges Gateways (docs/semantics/virtual-services.md §6.7):
// "./h" is "<gwNs>/h", "*/h" is "h", and "*/*" alone stands for all.
func ServerHosts(gw *model.Gateway, i int) []string {
	return MergeHosts(ownNamespace(gw.Spec.GetServers()[i].GetHosts(), gw.Namespace))
}

// MergeHosts are server hosts, "./" already spelt as the namespace, as
// istiod compares them when merging Gateways: "*/host" is "host", and
// "*/*" alone stands for all.
func MergeHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if name, ok := strings.CutPrefix(h, "*/"); ok {
			if name == "*" {
				return []string{"*"}
			}
			h = name
		}
		out = append(out, h)
	}
	return out
}
