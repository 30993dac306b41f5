package resolve

import (
	"slices"
)

// exportTo is an object's effective export set after mesh defaults: where
// it may be seen from.
type exportTo struct {
	public  bool            // "*"
	nowhere bool            // "~" without "*"
	ns      map[string]bool // namespaces named ("." rewritten to the owner's)
}

// newExportTo builds the set from an object's entries, or from def when it
// has none. "." becomes owner.
func newExportTo(entries, def []string, owner string) exportTo {
	var e exportTo
	if len(entries) == 0 {
		entries = def
	}
	for _, x := range entries {
		switch x {
		case "*":
			e.public = true
		case "~":
			e.nowhere = true
		case ".":
			e.add(owner)
		default:
			e.add(x)
		}
	}
	if e.public {
		e.nowhere = false
	}
	return e
}

func (e *exportTo) add(ns string) {
	if e.ns == nil {
		e.ns = map[string]bool{}
	}
	e.ns[ns] = true
}

// visibleIn is docs/semantics/exportto.md §2.2's visibleIn: "*" wins, then "~" hides even
// from the own namespace, then only listed namespaces see it; the own
// namespace too only when listed (directly or as ".").
func (e exportTo) visibleIn(ns string) bool {
	switch {
	case e.public:
		return true
	case e.nowhere:
		return false
	}
	return e.ns[ns]
}

// names lists the namespaces named, sorted, for reports.
func (e exportTo) names() []string {
	out := make([]string, 0, len(e.ns))
	for ns := range e.ns {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

// SharesNamespaceWith reports whether some namespace sees both s and o
// (docs/semantics/exportto.md §2.2): either is public and the other is
// visible somewhere, or their exportTo lists name a common namespace.
func (s *Service) SharesNamespaceWith(o *Service) bool {
	a, b := s.exportTo, o.exportTo
	switch {
	case a.nowhere || b.nowhere:
		return false
	case a.public:
		return b.public || len(b.ns) > 0
	case b.public:
		return len(a.ns) > 0
	}
	for ns := range a.ns {
		if b.ns[ns] {
			return true
		}
	}
	return false
}

// HiddenFromOwner reports whether exportTo entries, as an object in
// namespace ns declares them, hide a service from ns itself
// (docs/semantics/exportto.md §2.2): "~" without "*", or a list naming
// only other namespaces. No entries means the mesh default: not hidden
// by the object.
func HiddenFromOwner(entries []string, ns string) bool {
	return len(entries) > 0 && !newExportTo(entries, nil, ns).visibleIn(ns)
}

// ExportedEverywhere says whether every namespace may see the service
// (exportTo "*", as given or by the mesh default).
func (s *Service) ExportedEverywhere() bool { return s.exportTo.public }
