package resolve

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
