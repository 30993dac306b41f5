// Package model is the typed object model every pass shares: one ObjectMeta
// for all kinds, typed wrappers for the kinds meshc understands, and the
// mesh config. Values are built by load and never mutated afterwards.
package model

import (
	"strings"
	"time"

	"github.com/meshc/meshc/internal/diag"
)

// Object is any loaded object.
type Object interface {
	Meta() *ObjectMeta
}

// ObjectMeta is what every object has.
type ObjectMeta struct {
	// APIVersion is as written ("networking.istio.io/v1beta1").
	APIVersion string
	Kind       string
	// Namespace is empty for cluster-scoped kinds and "default" for
	// namespaced objects written without one.
	Namespace   string
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// Created is metadata.creationTimestamp; zero when absent, which sorts
	// first in istiod's comparator.
	Created    time.Time
	Finalizers []string
	// InheritedFrom is the source object when this object is a copy HNC
	// propagated into its namespace.
	InheritedFrom *ObjectMeta
	// Derived, for an object istiod generates from others (the Istio
	// Gateways and VirtualServices it makes of Gateway API objects, the
	// gateway Deployment and Service it deploys), says what it was made
	// of; nil for an object of the input.
	Derived *Derivation
	Source  Source
	// Seq is the input order (file path, then position in file), used for
	// reporting only, never to decide a result.
	Seq int
}

// Meta returns m; embedding ObjectMeta makes a struct an Object.
func (m *ObjectMeta) Meta() *ObjectMeta { return m }

// Group is the API group part of APIVersion ("" for core).
func (m *ObjectMeta) Group() string {
	if i := strings.LastIndexByte(m.APIVersion, '/'); i >= 0 {
		return m.APIVersion[:i]
	}
	return ""
}

// ID is the object's identity.
func (m *ObjectMeta) ID() ID {
	return ID{Group: m.Group(), Kind: m.Kind, Namespace: m.Namespace, Name: m.Name}
}

// Ref describes the object for a diagnostic, at its first line.
func (m *ObjectMeta) Ref() diag.ObjectRef {
	r := diag.ObjectRef{Kind: m.Kind, Namespace: m.Namespace, Name: m.Name, File: m.Source.File}
	r.Line, r.Origin = m.Source.Position(m.Source.Line)
	return r
}

// RefAt describes the object for a diagnostic about one of its fields. A
// generated object has no text of its own: the line is that of the part
// it was made of, the one that made the field when the field is one of
// its routes (spec.http[i], spec.tcp[i], spec.tls[i]).
func (m *ObjectMeta) RefAt(p Path) diag.ObjectRef {
	r := m.Ref()
	from, fp := m.Written(p)
	r.Line, r.Origin = from.Source.Position(from.Source.FieldLine(fp))
	return r
}

// Written is the object and field of the input behind field p of m: m and
// p themselves, or for a generated object the part that made the field.
func (m *ObjectMeta) Written(p Path) (*ObjectMeta, Path) {
	d := m.Derived
	if d == nil {
		return m, p
	}
	part := d.Parts[0]
	if len(p) > 2 && p[0].Key == "spec" && p[2].IsIndex && p[2].Index < len(d.Parts) {
		part = d.Parts[p[2].Index]
	}
	return part.From, part.Path
}

// ID identifies an object: API group, kind, namespace and name. The version
// is not part of it, as in Kubernetes.
type ID struct {
	Group, Kind, Namespace, Name string
}

// Compare orders identities by group, kind, namespace and name. It stops
// at the first field that differs (cmp.Or would compare all four): sorting
// every object by identity is on each compile's path.
func (id ID) Compare(o ID) int {
	if c := strings.Compare(id.Group, o.Group); c != 0 {
		return c
	}
	if c := strings.Compare(id.Kind, o.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(id.Namespace, o.Namespace); c != 0 {
		return c
	}
	return strings.Compare(id.Name, o.Name)
}

func (id ID) String() string {
	gk := id.Kind
	if id.Group != "" {
		gk = id.Kind + "." + id.Group
	}
	if id.Namespace == "" {
		return gk + " " + id.Name
	}
	return gk + " " + id.Namespace + "/" + id.Name
}

// Derivation is what a generated object was made of: the parts, in the
// order they make it (a VirtualService istiod merges from several routes
// has one part per route rule).
type Derivation struct {
	Parts []DerivedPart
}

// DerivedPart is one object and the field of it that made (part of) a
// generated object.
type DerivedPart struct {
	From *ObjectMeta
	// Path is the field in From ("spec.listeners[0]", "spec.rules[1]").
	Path Path
	// Route is the name of the generated route the part made, for a
	// VirtualService; empty otherwise.
	Route string
}

// Primary is the first part's object: the one a generated object is
// reported at.
func (d *Derivation) Primary() *ObjectMeta { return d.Parts[0].From }

// PartFor finds the part that made the generated route named route.
func (d *Derivation) PartFor(route string) (DerivedPart, bool) {
	for _, p := range d.Parts {
		if p.Route == route {
			return p, true
		}
	}
	return DerivedPart{}, false
}
