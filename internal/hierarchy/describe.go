package hierarchy

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
)

// WriteDescribe prints a namespace like `kubectl hns describe`
// (docs/semantics/hierarchy.md §4.2), names from the input escaped for a
// terminal (diag.Fprintf). Offline there are no events.
func WriteDescribe(w io.Writer, f *Forest, ns string) error {
	n := f.Namespaces[ns]
	if n == nil || !n.Exists {
		return fmt.Errorf("namespace %q does not exist in the input", ns)
	}
	var b strings.Builder
	diag.Fprintf(&b, "Hierarchy configuration for namespace %s\n", ns)
	parent := n.Parent
	if parent == "" && n.HC != nil {
		parent = n.HC.Spec.Parent
	}
	if parent != "" {
		diag.Fprintf(&b, "  Parent: %s\n", parent)
	} else {
		b.WriteString("  No parent\n")
	}
	anchors := map[string]string{}
	for a, st := range f.AnchorStates {
		if a.Namespace == ns {
			anchors[a.Name] = st
		}
	}
	children := slices.Clone(n.Children)
	for name := range anchors {
		if !slices.Contains(children, name) {
			children = append(children, name)
		}
	}
	slices.Sort(children)
	if len(children) == 0 {
		b.WriteString("  No children\n")
	} else {
		b.WriteString("  Children:\n")
		for _, c := range children {
			st, anchored := anchors[c]
			switch {
			case !anchored:
				diag.Fprintf(&b, "  - %s\n", c)
			case slices.Contains(n.Children, c):
				diag.Fprintf(&b, "  - %s (subnamespace)\n", c)
			default:
				diag.Fprintf(&b, "  - %s (%s subnamespace)\n", c, st)
			}
		}
	}
	cascading := n.HC != nil && n.HC.Spec.AllowCascadingDeletion
	diag.Fprintf(&b, "  Allows Cascading Deletion: %t\n", cascading)
	if len(n.Conditions) == 0 {
		b.WriteString("  No conditions\n")
	} else {
		b.WriteString("  Conditions:\n")
		for _, c := range n.Conditions {
			diag.Fprintf(&b, "  - %s\n", c)
		}
	}
	b.WriteString("\nNo recent HNC events for objects in this namespace\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteConfig prints the HNCConfiguration status like `kubectl hns config
// describe` (docs/semantics/hierarchy.md §4.3).
func WriteConfig(w io.Writer, resources []ResourceStatus) error {
	var b strings.Builder
	b.WriteString("Synchronized resources:\n")
	for _, r := range resources {
		action := "Ignoring"
		switch r.Mode {
		case ModePropagate:
			action = "Propagating"
		case ModeRemove:
			action = "Removing"
		case ModeAllowPropagate:
			action = "AllowPropagate"
		}
		diag.Fprintf(&b, "* %s: %s (%s/%s)\n", action, r.Resource, r.Group, r.Version)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
