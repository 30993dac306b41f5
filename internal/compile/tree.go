package compile

import (
	"io"

	"github.com/meshc/meshc/internal/hierarchy"
)

// TreeOptions choose what WriteTree draws.
type TreeOptions = hierarchy.TreeOptions

// WriteTree draws the namespace hierarchy like kubectl hns tree -A, and
// with copies the objects HNC propagates into each namespace.
func (r *Result) WriteTree(w io.Writer, opts TreeOptions, copies bool) error {
	if err := hierarchy.WriteTree(w, r.Mesh.Hierarchy, opts); err != nil {
		return err
	}
	if copies {
		return hierarchy.WriteCopies(w, r.Mesh.Objects)
	}
	return nil
}

// WriteDescribe describes a namespace like kubectl hns describe.
func (r *Result) WriteDescribe(w io.Writer, namespace string) error {
	return hierarchy.WriteDescribe(w, r.Mesh.Hierarchy, namespace)
}

// WriteHNCConfig prints the HNCConfiguration status like kubectl hns
// config describe.
func (r *Result) WriteHNCConfig(w io.Writer) error {
	return hierarchy.WriteConfig(w, hierarchy.ConfigStatus(r.Mesh.Hierarchy, r.Objects, r.Mesh.Objects))
}

// NamespaceJSON is one namespace in `meshc tree -o json`.
type NamespaceJSON struct {
	Name        string                `json:"name"`
	Parent      string                `json:"parent,omitempty"`
	Subns       bool                  `json:"subnamespace,omitempty"`
	Children    []string              `json:"children,omitempty"`
	Conditions  []hierarchy.Condition `json:"conditions,omitempty"`
	Labels      map[string]string     `json:"labels,omitempty"`
	Annotations map[string]string     `json:"annotations,omitempty"`
	Implied     bool                  `json:"implied,omitempty"`
	Synthesized bool                  `json:"synthesized,omitempty"`
	Managed     bool                  `json:"managed"`
}

// Tree lists the namespaces that exist, in tree order.
func (r *Result) Tree() []NamespaceJSON {
	var out []NamespaceJSON
	for _, n := range r.Mesh.Hierarchy.Sorted() {
		if !n.Exists {
			continue
		}
		out = append(out, NamespaceJSON{Name: n.Name, Parent: n.Parent, Subns: n.IsSub, Children: n.Children, Conditions: n.Conditions,
			Labels: n.Labels, Annotations: n.Annotations, Implied: n.Implied, Synthesized: n.Synthesized, Managed: n.Managed})
	}
	return out
}
