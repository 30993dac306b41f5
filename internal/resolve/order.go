package resolve

import (
	"cmp"
	"time"
)

// olderFirst is istiod's creation order: creationTimestamp (a missing one
// is the zero time and sorts first), then name, then namespace. Every
// "oldest wins" rule in resolution uses it; input order never decides.
func olderFirst(at time.Time, aName, aNs string, bt time.Time, bName, bNs string) int {
	return cmp.Or(at.Compare(bt), cmp.Compare(aName, bName), cmp.Compare(aNs, bNs))
}
