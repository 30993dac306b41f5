package lint

import (
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
)

// exportToAnnotation is where a Kubernetes Service declares its exportTo.
const exportToAnnotation = "networking.istio.io/exportTo"

// exportTo returns the exportTo entries an object declares and the path of
// entry i; ok is false for kinds without exportTo. A Service's entries
// all live in one annotation, so they share its path.
func exportTo(o model.Object) (entries []string, at func(i int) model.Path, ok bool) {
	spec := func(i int) model.Path { return model.ParsePath("spec.exportTo").Index(i) }
	switch x := o.(type) {
	case *model.Service:
		for _, e := range strings.Split(x.Annotations[exportToAnnotation], ",") {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, e)
			}
		}
		annotation := model.Path{{Key: "metadata"}, {Key: "annotations"}, {Key: exportToAnnotation}}
		return entries, func(int) model.Path { return annotation }, true
	case *model.ServiceEntry:
		return x.Spec.GetExportTo(), spec, true
	case *model.VirtualService:
		return x.Spec.GetExportTo(), spec, true
	case *model.DestinationRule:
		return x.Spec.GetExportTo(), spec, true
	}
	return nil, nil, false
}

// MC3002: exportTo hides a Service or ServiceEntry from its own namespace.
// Per object: it needs no proxy to be a mistake.
var hiddenFromOwnNamespace = &Analyzer{Entry: diag.HiddenFromOwnNamespace, Run: func(p *Pass) {
	for _, o := range p.Mesh.Objects {
		switch o.(type) {
		case *model.Service, *model.ServiceEntry:
		default:
			continue
		}
		m := o.Meta()
		entries, at, _ := exportTo(o)
		if !resolve.HiddenFromOwner(entries, m.Namespace) {
			continue
		}
		i := slices.Index(entries, "~")
		why, fix := `"~" hides it from every namespace`, `replace "~" with "."`
		if i < 0 {
			i = 0
			why, fix = "it names only "+list(entries, 5), `add "."`
		}
		d := p.Report(m, at(i), diag.ExportHidesOwnNamespace,
			m.Kind, objName(m), m.Namespace, why, fix)
		if m.InheritedFrom != nil {
			d.Related = append(d.Related, related(m.InheritedFrom, "the HNC source of this copy"))
		}
	}
}}

// MC3003: exportTo names a namespace the input does not have. Only judged
// when the input declares namespaces at all.
var exportToUnknownNamespace = &Analyzer{Entry: diag.ExportToUnknownNamespace, Run: func(p *Pass) {
	if !p.Mesh.DeclaresNamespaces() {
		return
	}
	for _, o := range p.Mesh.Objects {
		m := o.Meta()
		entries, at, ok := exportTo(o)
		// An HNC copy repeats its source's entries; the source reports.
		if !ok || m.InheritedFrom != nil {
			continue
		}
		first := -1
		var unknown []string
		for i, e := range entries {
			switch e {
			case ".", "*", "~":
				continue
			}
			if p.Mesh.NamespaceExists(e) {
				continue
			}
			if first < 0 {
				first = i
			}
			if !slices.Contains(unknown, e) {
				unknown = append(unknown, e)
			}
		}
		if first < 0 {
			continue
		}
		p.Report(m, at(first), diag.ExportToNowhere,
			m.Kind, objName(m), plural(len(unknown), "namespace ", "namespaces ")+list(unknown, 5))
	}
}}
