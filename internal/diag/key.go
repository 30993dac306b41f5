package diag

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// A key names a finding so that it can be recognised in another run: the
// code, the subject, and a discriminator that tells apart the findings of
// one code about one subject. It never holds a line number or, for a
// finding about an object, a file name, so moving an object to another
// file or reformatting it keeps its findings' keys:
//
//	MC4003/VirtualService/shop/reviews/subset=v4/host=reviews.shop.svc.cluster.local/rule=shop/reviews/field=spec.http[0].route[0].destination.subset
//	MC6001/Sidecar/shop/default
//	MC9006/Namespace/shop/field=metadata.labels  (a cluster-scoped subject)
//	MC1001/file=manifests/broken.yaml/doc=2      (a finding about a file)
//
// Discriminator parts are name=value. docs/diagnostics.md ("Finding keys")
// describes the form.

// keyFor builds the key of a finding of code about obj.
func keyFor(code string, obj ObjectRef, parts []string) string {
	var b strings.Builder
	b.WriteString(code)
	b.WriteByte('/')
	b.WriteString(subjectKey(obj))
	for _, p := range parts {
		if p == "" {
			continue
		}
		b.WriteByte('/')
		b.WriteString(p)
	}
	return b.String()
}

// subjectKey is "Kind/namespace/name" ("Kind/name" when cluster-scoped),
// or, for a finding without an object, the file in slash form after the
// kind when one is known.
func subjectKey(o ObjectRef) string {
	if o.Name != "" {
		if o.Namespace == "" {
			return o.Kind + "/" + o.Name
		}
		return o.Kind + "/" + o.Namespace + "/" + o.Name
	}
	file := "file=" + filepath.ToSlash(o.File)
	if o.Kind == "" {
		return file
	}
	return o.Kind + "/" + file
}

// Part renders one discriminator part, name=value.
func Part(name, value string) string { return name + "=" + value }

// TextPart renders a discriminator part from free text (a validation
// problem, a reason): a short digest, so the key stays short and readable
// while two different texts still differ.
func TextPart(name, text string) string {
	sum := sha256.Sum256([]byte(text))
	return name + "=" + hex.EncodeToString(sum[:4])
}

// Keyed returns d with parts added to its key: the field a finding is at,
// or, at a report site whose text is not a catalog template, whatever
// tells its findings apart. Empty parts are skipped.
func (d Diagnostic) Keyed(parts ...string) Diagnostic {
	if d.Key == "" {
		d.Key = keyFor(d.Code, d.Object, nil)
	}
	for _, p := range parts {
		if p != "" {
			d.Key += "/" + p
		}
	}
	return d
}

// Keys lists the keys of ds.
func Keys(ds []Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Key
	}
	return out
}

// WithKeyFile returns d, a finding about a file rather than an object,
// with file in its key in place of the path it was reported under (a
// path relative to the inputs, so the key does not depend on where meshc
// ran). Findings about objects are returned as they are.
func (d Diagnostic) WithKeyFile(file string) Diagnostic {
	if d.Object.Name != "" || d.Object.File == "" {
		return d
	}
	old := d.Code + "/" + subjectKey(d.Object)
	moved := d.Object
	moved.File = file
	if rest, ok := strings.CutPrefix(d.Key, old); ok {
		d.Key = d.Code + "/" + subjectKey(moved) + rest
	}
	return d
}
