package load

import (
	"bytes"
	"cmp"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/render"
)

// RenderOptions say how the charts and kustomizations met are rendered.
type RenderOptions struct {
	// NoKustomize walks a kustomization's directory file by file
	// (--kustomize=off) instead of rendering it.
	NoKustomize bool
	// Helm are helm template's options for every chart but those in Charts.
	Helm render.HelmOptions
	// Charts are options for particular charts (.meshc.yaml's helm
	// entries), by the chart directory's absolute path.
	Charts map[string]render.HelmOptions
}

func (o RenderOptions) helm(dir string) render.HelmOptions {
	if abs, err := filepath.Abs(dir); err == nil {
		if h, ok := o.Charts[abs]; ok {
			return h
		}
	}
	return o.Helm
}

// renderKind says whether an input is a file or a directory to render.
type renderKind int

const (
	renderNone renderKind = iota
	renderKustomize
	renderHelm
)

// renderInput renders a chart or kustomization and decodes what it gives.
func renderInput(dec *decoder, in input, opts Options) fileResult {
	var docs []render.Doc
	var err error
	res := fileResult{read: true}
	switch in.render {
	case renderKustomize:
		docs, res.bases, err = render.Kustomize(opts.FS, in.path, in.root)
	case renderHelm:
		docs, err = render.Helm(opts.FS, in.path, opts.Render.helm(in.path))
	}
	if err != nil {
		res.diags = []diag.Diagnostic{renderError(in, err)}
		return res
	}
	res.objs, res.diags = dec.decodeRendered(docs, cmp.Or(opts.MaxFileSize, DefaultMaxFileSize))
	return res
}

func renderError(in input, err error) diag.Diagnostic {
	var re *render.Error
	if !errors.As(err, &re) {
		return diag.RenderFailed.At(diag.ObjectRef{File: in.name}, "%s: %v", in.name, err)
	}
	at := diag.ObjectRef{File: cmp.Or(re.File, in.name), Line: re.Line}
	if errors.Is(err, render.ErrNothing) {
		return diag.RenderedNothing.At(at, "%s", re)
	}
	return diag.RenderFailed.At(at, "%s", re)
}

// decodeRendered decodes rendered documents at the positions render gave
// them. A document Kustomize left unchanged takes the lines of its fields
// from its document in the resource file; limit bounds reading that file.
func (d *decoder) decodeRendered(docs []render.Doc, limit int64) ([]model.Object, []diag.Diagnostic) {
	var objs []model.Object
	var diags []diag.Diagnostic
	files := map[string][]chunk{}
	for _, doc := range docs {
		var o []model.Object
		var ds []diag.Diagnostic
		if doc.Origin == render.RenderedLine {
			o, ds, _ = d.decodeAs(doc.File, doc.Origin, doc.Lines, doc.Data)
		} else {
			o, ds = d.decodeObject(doc, files, limit)
		}
		objs, diags = append(objs, o...), append(diags, ds...)
	}
	return objs, diags
}

// decodeObject decodes one object rendered by Kustomize. It is placed at
// its document in its resource file when no patch changed what it says
// there, else at the kustomization that patched it, else (the document
// not found) at the file without a line, with a note saying why.
func (d *decoder) decodeObject(doc render.Doc, files map[string][]chunk, limit int64) ([]model.Object, []diag.Diagnostic) {
	d.start(doc.File, doc.Origin, nil)
	v, root, line, msg := d.yaml.parse(chunk{data: doc.Data, line: 1})
	if msg != "" {
		d.report(diag.InvalidYAML, line, diag.ObjectRef{}, "%s (in the rendered object)", msg)
		return d.objs, d.diags
	}
	if v == nil {
		return nil, nil
	}
	var src *chunk
	var rendered any
	if doc.Source != "" {
		rendered = valueOf(v)
		src = d.sourceDocument(doc.Source, rendered, files, limit)
	}
	switch {
	case src != nil && (doc.Patched == "" || sameContent(rendered, *src)):
		d.file, d.origin = doc.Source, ""
		d.value(v, root, &model.Document{Data: src.data, Line: src.line}, nil, firstContentLine(*src))
		return d.objs, d.diags
	case doc.Patched != "":
		d.file, d.origin = doc.Patched, render.PatchedHere
		d.value(v, root, nil, nil, doc.PatchedLine)
		return d.objs, d.diags
	case doc.Source != "":
		d.origin = render.LineUnknown
	}
	d.value(v, root, nil, nil, doc.Line)
	return d.objs, d.diags
}

// sameContent reports whether a rendered object says what its source
// document says, metadata aside: Kustomize sets namespaces, labels and
// name prefixes without patches, and a patch that changed nothing else
// leaves the source's lines true.
func sameContent(rendered any, src chunk) bool {
	raw, _, _ := parseYAML(src)
	a, _ := rendered.(map[string]any)
	b, _ := raw.(map[string]any)
	if a == nil || b == nil {
		return false
	}
	a, b = maps.Clone(a), maps.Clone(b)
	delete(a, "metadata")
	delete(b, "metadata")
	return reflect.DeepEqual(a, b)
}

// sourceDocument finds the document of file that an object rendered from
// it came from: the one with its kind and name (and namespace, where the
// source sets one), else the only one of its kind. Kustomize may have
// renamed the object (namePrefix) or given it a namespace.
func (d *decoder) sourceDocument(file string, rendered any, files map[string][]chunk, limit int64) *chunk {
	chunks, ok := files[file]
	if !ok {
		data, err := inputfile.ReadFS(d.fsys, file, inputfile.Options{Limit: limit})
		if err == nil {
			chunks = splitDocuments(normalizeBreaks(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
		}
		files[file] = chunks
	}
	kind, ns, name := identity(rendered)
	var sameKind []int
	for i, c := range chunks {
		raw, _, _ := parseYAML(c)
		k, n, nm := identity(raw)
		if k != kind {
			continue
		}
		if nm == name && (n == "" || n == ns) {
			return &chunks[i]
		}
		sameKind = append(sameKind, i)
	}
	if len(sameKind) == 1 {
		return &chunks[sameKind[0]]
	}
	return nil
}

func identity(raw any) (kind, namespace, name string) {
	m, _ := raw.(map[string]any)
	kind, _ = m["kind"].(string)
	meta, _ := m["metadata"].(map[string]any)
	namespace, _ = meta["namespace"].(string)
	name, _ = meta["name"].(string)
	return kind, namespace, name
}

// decodeAnnotated decodes rendered YAML read from a stream, placing each
// document where its Helm "# Source:" comment or Kustomize origin
// annotation says it came from; ok is false when data has neither.
func (d *decoder) decodeAnnotated(name string, data []byte, limit int64) (objs []model.Object, diags []diag.Diagnostic, ok bool) {
	if !bytes.Contains(data, []byte("# Source: ")) && !bytes.Contains(data, []byte(render.OriginAnnotation)) {
		return nil, nil, false
	}
	files := map[string][]chunk{}
	for _, c := range splitDocuments(normalizeBreaks(data)) {
		if blank(c) {
			continue
		}
		var o []model.Object
		var ds []diag.Diagnostic
		if template, ok := render.SourceComment(c.data); ok {
			// The comment is Helm's, not the template's: lines count
			// from the line after it.
			d.start(template, render.RenderedLine, nil)
			d.document(chunk{data: c.data, line: 0})
			o, ds = d.objs, d.diags
		} else if doc, ok := originOf(c); ok {
			doc.Data = c.data
			o, ds = d.decodeObject(doc, files, limit)
		} else {
			d.start(name, "", nil)
			d.document(c)
			o, ds = d.objs, d.diags
		}
		objs, diags = append(objs, o...), append(diags, ds...)
	}
	return objs, diags, true
}

// originOf reads a document's Kustomize origin annotation.
func originOf(c chunk) (render.Doc, bool) {
	raw, _, _ := parseYAML(c)
	m, _ := raw.(map[string]any)
	meta, _ := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	return render.Located(ann)
}

// addRendered adds dir as a kustomization or a chart to render, if it is
// one; its files are then not read one by one. real is its resolved path
// (in Options.FS, its name).
func (c *collector) addRendered(dir, real string) bool {
	kind := renderNone
	switch {
	case !c.noKustomize && render.Kustomization(c.fsys, dir) != "":
		kind = renderKustomize
	case render.IsChart(c.fsys, dir):
		kind = renderHelm
	default:
		return false
	}
	if !c.seen[real] {
		c.seen[real] = true
		c.addInput(input{name: filepath.Clean(dir), path: dir, render: kind, root: c.root, abs: real})
	}
	return true
}

// renderRoot is the tree a kustomization reached from the input p may
// read: the repository holding p (the nearest directory above it with a
// .git), as an overlay's bases are usually beside it rather than below;
// outside a repository, the working directory when p is inside it, else p.
func renderRoot(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	for dir := abs; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return wd
		}
	}
	return p
}
