package resolve

import (
	"cmp"
	"time"

	"github.com/meshc/meshc/internal/model"
)

// olderFirst is istiod's creation order: creationTimestamp (a missing one
// is the zero time and sorts first), then name, then namespace. Every
// "oldest wins" rule in resolution uses it, in stable sorts; input order
// never decides: what it leaves tied (two ServiceEntries of one host,
// whose services both take the host as their name) stays in identity
// order, group, kind, namespace, name, which the hierarchy stage sorts
// objects into first (hierarchy.Run).
func olderFirst(at time.Time, aName, aNs string, bt time.Time, bName, bNs string) int {
	return cmp.Or(at.Compare(bt), cmp.Compare(aName, bName), cmp.Compare(aNs, bNs))
}

// selectorsFirst orders objects with a workload selector before those
// without, each group oldest first, as istiod orders Sidecars and
// DestinationRules.
func selectorsFirst(aSel, bSel bool, a, b *model.ObjectMeta) int {
	if aSel != bSel {
		if aSel {
			return -1
		}
		return 1
	}
	return olderFirst(a.Created, a.Name, a.Namespace, b.Created, b.Name, b.Namespace)
}

// OlderFirst orders objects as istiod merges Gateways and picks the
// oldest of anything: creation time, then name, then namespace.
func OlderFirst(a, b *model.ObjectMeta) int {
	return olderFirst(a.Created, a.Name, a.Namespace, b.Created, b.Name, b.Namespace)
}
