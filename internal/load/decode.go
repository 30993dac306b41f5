package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshc/meshc/internal/crdschema"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/yamlfast"
)

// maxFieldErrors caps the schema diagnostics reported for one object; past
// it one more diagnostic says how many were left unsaid.
const maxFieldErrors = 20

// decoder turns the text of one input into objects and diagnostics. One
// decoder serves one worker at a time.
type decoder struct {
	// fsys is Options.FS: where the resource files Kustomize names are
	// read from.
	fsys   fs.FS
	schema *goSchema
	yaml   docParser
	file   string
	objs   []model.Object
	diags  []diag.Diagnostic
	// objectLike is set once a document of the file is a mapping with
	// kind or metadata.
	objectLike bool
	// noAdmission turns istiod's admission rules off (see
	// BytesWithoutAdmission).
	noAdmission bool
	// doc numbers the file's documents from 1 and item is the path of the
	// List item being read: a finding with no object to name is keyed by
	// them.
	doc  int
	item model.Path
	// origin is the note on positions of rendered input (render.Doc.Origin).
	origin string
	// written maps the lines of a template's rendered output to the
	// template's lines (render.Doc.Lines); nil for other input.
	written []int
	// crdKey is memory for checkCRD's content keys.
	crdKey []byte

	// crd validates Gateway API objects, remembering what it has judged.
	crd *crdschema.Memo
	// meta is memory for the metadata of the object being decoded.
	meta metav1.ObjectMeta
}

func newDecoder() *decoder { return &decoder{schema: newGoSchema(), crd: crdschema.NewMemo()} }

// decodeFile decodes every document of a file. It never stops early: a
// broken document is reported and the next one is read. notObjects reports a file
// that parses but none of whose documents looks like a Kubernetes object
// (a mapping with kind or metadata): package.json, values.yaml, an OpenAPI
// document; its diagnostics are dropped, as it is no manifest at all.
func (d *decoder) decodeFile(file string, data []byte) (objs []model.Object, diags []diag.Diagnostic, notObjects bool) {
	return d.decodeAs(file, "", nil, data)
}

// start begins decoding the text of file, whose positions carry the note
// origin unless written maps them to a template's lines.
func (d *decoder) start(file, origin string, written []int) {
	d.file, d.objs, d.diags, d.origin, d.written = file, nil, nil, origin, written
}

// decodeAs is decodeFile for rendered text that positions point into with
// the note origin (render.Doc.Origin), or at the template lines written
// gives (render.Doc.Lines).
func (d *decoder) decodeAs(file, origin string, written []int, data []byte) (objs []model.Object, diags []diag.Diagnostic, notObjects bool) {
	d.start(file, origin, written)
	d.objectLike = false
	docs := 0
	for _, c := range splitDocuments(normalizeBreaks(data)) {
		if !blank(c) {
			docs++
			d.doc = docs
			d.document(c)
		}
	}
	if docs > 0 && !d.objectLike && len(d.objs) == 0 && !slices.ContainsFunc(d.diags, diag.InvalidYAML.Is) {
		return nil, nil, true
	}
	return d.objs, d.diags, false
}

// normalizeBreaks turns a lone CR, which YAML counts as a line break, into
// LF, so every line count in meshc agrees with the parser's.
func normalizeBreaks(data []byte) []byte {
	if !bytes.Contains(data, []byte("\r")) {
		return data
	}
	out := bytes.Clone(data)
	for i, b := range out {
		if b == '\r' && (i+1 == len(out) || out[i+1] != '\n') {
			out[i] = '\n'
		}
	}
	return out
}

func (d *decoder) report(e *diag.Entry, line int, obj diag.ObjectRef, format string, args ...any) {
	d.add(e.At(d.at(obj, line), format, args...))
}

// say reports a finding of the message m.
func (d *decoder) say(m *diag.Message, line int, obj diag.ObjectRef, args ...any) {
	d.add(m.At(d.at(obj, line), args...))
}

// at places obj at line of the text being decoded, or at the template
// line that wrote it.
func (d *decoder) at(obj diag.ObjectRef, line int) diag.ObjectRef {
	obj.File, obj.Line, obj.Origin = d.file, line, d.origin
	if w := model.WrittenLine(d.written, line); w > 0 {
		obj.Line, obj.Origin = w, ""
	}
	return obj
}

func (d *decoder) add(r diag.Diagnostic) {
	if r.Object.Name == "" {
		r = r.Keyed(diag.Part("doc", strconv.Itoa(d.doc)))
		if len(d.item) > 0 {
			r = r.Keyed(diag.Part("item", d.item.String()))
		}
	}
	d.diags = append(d.diags, r)
}

// keyLast tells the last finding apart from others about its object.
func (d *decoder) keyLast(parts ...string) {
	d.diags[len(d.diags)-1] = d.diags[len(d.diags)-1].Keyed(parts...)
}

// fieldKey are the key parts of a schema problem: its field and a digest
// of what is wrong there.
func fieldKey(fe fieldError) []string {
	return []string{diag.Part("field", fe.Path.String()), diag.TextPart("problem", fe.Msg)}
}

func (d *decoder) document(c chunk) {
	line := firstContentLine(c)
	defer func() {
		// A parser bug must cost one document, not the run.
		if r := recover(); r != nil {
			d.say(diag.ParserFailure, line, diag.ObjectRef{}, fmt.Sprint(r))
		}
	}()
	if parts := jsonStream(c); len(parts) > 1 {
		for _, p := range parts {
			d.document(p)
		}
		return
	}
	v, at, errLine, msg := d.yaml.parse(c)
	if msg != "" {
		d.say(diag.YAMLSyntaxError, errLine, diag.ObjectRef{}, msg)
		return
	}
	if v == nil {
		return // an empty document, e.g. a lone "---"
	}
	d.value(v, at, &model.Document{Data: c.data, Line: c.line, Written: d.written}, nil, line)
}

// docParser parses documents one after another, reusing its memory.
type docParser struct {
	yaml yamlfast.Parser
	// keys is decodable's memory of the keys it has met.
	keys []string
}

// parse parses one YAML document into the node the decoders read
// (decodable) and the node tree as parsed, whose lines are the
// document's, or returns the file line and text of what is wrong with it.
// Both are valid until p parses again.
func (p *docParser) parse(c chunk) (v, at *yaml.Node, line int, msg string) {
	root, ok := p.yaml.Parse(c.data)
	if !ok {
		root = new(yaml.Node)
		if err := yaml.Unmarshal(c.data, root); err != nil {
			line, msg := yamlError(err, c)
			return nil, nil, line, msg
		}
	}
	v, err := decodable(root, &p.keys)
	var le *lineError
	if errors.As(err, &le) {
		return nil, nil, c.line + max(le.line, 1) - 1, le.msg
	}
	if v == nil {
		return nil, nil, 0, ""
	}
	return v, root.Content[0], 0, ""
}

// parseYAML is docParser.parse for callers that need only the value.
func parseYAML(c chunk) (raw any, line int, msg string) {
	v, _, line, msg := new(docParser).parse(c)
	return valueOf(v), line, msg
}

// jsonStream splits a chunk holding several concatenated JSON values, as
// some tools write them, into one chunk per value. YAML would read only the
// first and drop the rest silently. It returns nil for anything else.
func jsonStream(c chunk) []chunk {
	trimmed := bytes.TrimLeft(c.data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(c.data))
	var parts []chunk
	start := 0
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if err == io.EOF && len(parts) > 1 {
				return parts
			}
			return nil
		}
		end := int(dec.InputOffset())
		parts = append(parts, chunk{data: c.data[start:end], line: c.line + bytes.Count(c.data[:start], []byte("\n"))})
		start = end
	}
}

var yamlLineRE = regexp.MustCompile(`line (\d+): `)

// yamlError turns a YAML parser error into a file line and a message
// without the converter's prefixes.
func yamlError(err error, c chunk) (int, string) {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n", "")
	msg = strings.Join(strings.Fields(msg), " ")
	line := firstContentLine(c)
	if m := yamlLineRE.FindStringSubmatchIndex(msg); m != nil {
		if n, err := strconv.Atoi(msg[m[2]:m[3]]); err == nil && n > 0 {
			if strings.HasPrefix(msg[m[1]:], "did not find expected") {
				// The YAML parser (unlike its scanner) names these
				// lines counting from zero.
				n++
			}
			// The parser may name the line after the last one for an
			// error at the end of input; keep the position in the file.
			last := c.line + bytes.Count(bytes.TrimRight(c.data, "\r\n"), []byte("\n"))
			line = min(c.line+n-1, last)
		}
		msg = msg[:m[0]] + msg[m[1]:]
	}
	if strings.Contains(msg, "cannot start any token") && bytes.Contains(lineText(c, line), []byte("\t")) {
		msg += " (a tab: YAML indents with spaces only)"
	}
	return line, msg
}

// lineText returns the text of a file line inside chunk c.
func lineText(c chunk, line int) []byte {
	lines := bytes.Split(c.data, []byte("\n"))
	if i := line - c.line; i >= 0 && i < len(lines) {
		return lines[i]
	}
	return nil
}

// value decodes a document or List item, v: a List is unpacked, anything
// else must be an object. at is v's node as parsed, for the lines of list
// items.
func (d *decoder) value(v, at *yaml.Node, doc *model.Document, base model.Path, line int) {
	d.item = base
	if v.Kind != yaml.MappingNode {
		if n := countObjectLike(v); n > 0 && base == nil {
			// A bare list of objects, as jq or a script writes it: the
			// API takes one object per document and kubectl refuses
			// this one, so loading its objects would pass off as
			// applicable what is not.
			d.objectLike = true
			d.report(diag.InvalidObject, line, diag.ObjectRef{}, "this document is a list of %s, not an object: kubectl refuses it and nothing in it is loaded; write the objects as a kind: List with items, or as documents separated by ---", countObjects(n))
			return
		}
		d.report(diag.InvalidObject, line, diag.ObjectRef{}, "a manifest must be an object with apiVersion, kind and metadata; this document is %s", describeNode(v))
		return
	}
	if objectLike(v) {
		d.objectLike = true
	}
	kind, _ := stringOf(field(v, "kind"))
	items := field(v, "items")
	if kind == "List" || (items != nil && strings.HasSuffix(kind, "List")) {
		if items == nil || items.Kind != yaml.SequenceNode {
			src := model.NewSource(d.file, line, doc, base)
			itemsAt, what := src.FieldLine(model.Path{}.Key("items")), "items is "+describeNode(items)
			if items == nil {
				itemsAt, what = line, "it has no items"
			}
			d.report(diag.InvalidObject, itemsAt, diag.ObjectRef{Kind: kind}, "a %s holds its objects in items, a list, but %s: nothing is loaded from it (write items: [] for an empty list)", kind, what)
			return
		}
		d.list(v, kind, items, at, doc, base, line)
		return
	}
	d.object(v, model.NewSource(d.file, line, doc, base))
}

// objectLike reports whether n looks like a Kubernetes object: a mapping
// with kind or metadata.
func objectLike(n *yaml.Node) bool {
	return field(n, "kind") != nil || field(n, "metadata") != nil
}

// countObjectLike counts the items of a list that look like Kubernetes
// objects; 0 when n is no list.
func countObjectLike(n *yaml.Node) int {
	if n.Kind != yaml.SequenceNode {
		return 0
	}
	count := 0
	for _, item := range n.Content {
		if objectLike(item) {
			count++
		}
	}
	return count
}

// list unpacks kind List and typed lists (ServiceList, ...). Items of a
// typed list may leave out apiVersion and kind, as the API server writes
// them; they take them from the list.
func (d *decoder) list(v *yaml.Node, kind string, items, at *yaml.Node, doc *model.Document, base model.Path, firstLine int) {
	itemNodes := model.Child(at, model.PathElem{Key: "items"})
	apiVersion, _ := stringOf(field(v, "apiVersion"))
	for i, item := range items.Content {
		if item.Kind == yaml.MappingNode && kind != "List" {
			if field(item, "kind") == nil {
				item = withField(item, "kind", strings.TrimSuffix(kind, "List"))
			}
			if field(item, "apiVersion") == nil && apiVersion != "" {
				item = withField(item, "apiVersion", apiVersion)
			}
		}
		itemNode := model.Child(itemNodes, model.PathElem{Index: i, IsIndex: true})
		line := firstLine
		if doc != nil {
			line = doc.Line
		}
		if itemNode != nil && doc != nil {
			line = doc.Line + itemNode.Line - 1
		}
		d.value(item, itemNode, doc, base.Key("items").Index(i), line)
	}
}

// object validates metadata and decodes one object, the mapping v, by its
// kind.
func (d *decoder) object(v *yaml.Node, src model.Source) {
	src.Origin = d.origin
	ref := diag.ObjectRef{File: src.File, Line: src.Line, Origin: src.Origin}
	at := func(p model.Path) int { return src.FieldLine(p) }
	apiVersion, okV := stringOf(field(v, "apiVersion"))
	kind, okK := stringOf(field(v, "kind"))
	ref.Kind = kind
	switch {
	case !okV || apiVersion == "":
		d.say(diag.APIVersionMissing, at(model.Path{}.Key("apiVersion")), ref)
		return
	case !okK || kind == "":
		d.say(diag.KindMissing, at(model.Path{}.Key("kind")), ref)
		return
	}
	group, version := splitAPIVersion(apiVersion)
	if k, ok := model.LookupKind(group, kind); ok && k.Local {
		return // a tool's own file (kustomization.yaml): never applied
	}

	var errs []fieldError
	metaPath := model.Path{}.Key("metadata")
	info, known := lookupKind(group, kind)
	// The object keeps the maps and slices of its metadata, not the
	// struct they are decoded into. A Kubernetes kind's metadata is
	// decoded once, strictly: its unknown fields are warnings of the
	// object's decoding (decodeKind), which leaves it out.
	om := &d.meta
	*om = metav1.ObjectMeta{}
	kube := known && info.Family == model.Kubernetes
	d.schema.decode(reflect.ValueOf(om).Elem(), field(v, "metadata"), metaPath, kube, &errs)
	ref.Name, ref.Namespace = om.Name, om.Namespace
	unknownMeta := slices.DeleteFunc(slices.Clone(errs), func(e fieldError) bool { return !e.Unknown })
	if errs = slices.DeleteFunc(errs, func(e fieldError) bool { return e.Unknown }); len(errs) > 0 {
		d.fieldErrors(diag.InvalidObject, src, ref, errs)
		return
	}
	nameless := om.Name == "" && known && info.NameOptional
	if om.Name == "" && !nameless {
		hint := ""
		if om.GenerateName != "" {
			hint = " (generateName only works with kubectl create, and gives no stable identity)"
		}
		d.say(diag.NameMissing, at(metaPath), ref, hint)
		return
	}

	if known && !info.Serves(version) {
		d.report(info.Family.Invalid(), at(model.Path{}.Key("apiVersion")), ref, "%s is not served at %s (served: %s); the object is left out",
			kind, apiVersion, servedList(group, info.Versions))
		return
	}
	// A kind known by name only (a ServiceAccount, an Ingress) has a
	// known scope too: its objects are named as kubectl would place them.
	ns := om.Namespace
	scope, scoped := model.LookupKind(group, kind)
	switch {
	case scoped && scope.ClusterScoped:
		ns = "" // as kubectl does, a namespace on a cluster-scoped object is ignored
	case scoped && ns == "":
		ns = "default"
	}
	ref.Namespace = ns
	if ns != "" && !plainLabel(ns) {
		if problems := validation.IsDNS1123Label(ns); len(problems) > 0 {
			d.say(diag.NamespaceInvalid, at(metaPath.Key("namespace")), ref, ns, strings.Join(problems, "; "))
			return
		}
	}
	if known && !nameless {
		valid := info.ValidName
		if valid == nil {
			valid = isDNS1123Subdomain
		}
		if problems := valid(om.Name); len(problems) > 0 {
			d.say(diag.NameInvalid, at(metaPath.Key("name")), ref, om.Name, kind, strings.Join(problems, "; "))
			return
		}
		if info.FixedName != "" && om.Name != info.FixedName {
			d.report(info.Family.Invalid(), at(metaPath.Key("name")), ref, "a %s must be named %q, not %q; the object is left out", kind, info.FixedName, om.Name)
			return
		}
	}

	meta := model.ObjectMeta{
		APIVersion:  apiVersion,
		Kind:        kind,
		Namespace:   ns,
		Name:        om.Name,
		Labels:      om.Labels,
		Annotations: om.Annotations,
		Created:     om.CreationTimestamp.Time,
		Finalizers:  om.Finalizers,
		Source:      src,
	}
	if !known {
		if !d.noAdmission {
			if errs := checkUndecoded(group, kind, meta, v); len(errs) > 0 {
				d.fieldErrors(diag.SchemaViolation, src, ref, errs)
				if rejects(errs) {
					return
				}
			}
		}
		raw, _ := valueOf(v).(map[string]any)
		d.objs = append(d.objs, &model.Unknown{ObjectMeta: meta, Raw: raw})
		return
	}
	obj, errs := d.decodeKind(info, meta, v, unknownMeta)
	if len(errs) > 0 {
		d.fieldErrors(info.Family.Invalid(), src, ref, errs)
	}
	if obj != nil {
		d.objs = append(d.objs, obj)
	}
}

// fieldErrors reports schema problems, each at its field's line. A
// warning of istiod's validation is MC1008, an unknown field of a
// Kubernetes kind MC1009; both keep the object, unless an error in the
// same object leaves it out.
func (d *decoder) fieldErrors(e *diag.Entry, src model.Source, ref diag.ObjectRef, errs []fieldError) {
	shown := errs[:min(len(errs), maxFieldErrors)]
	lines := src.FieldLines(pathsOf(shown))
	fate := "; the object is kept"
	if rejects(errs) {
		fate = "; the object is left out"
	}
	for i, fe := range shown {
		switch {
		case fe.Warn && fe.Unknown:
			d.report(diag.UnknownField, lines[i], ref, "%s; the API server drops the field%s", fe, fate)
		case fe.Warn:
			d.report(diag.AdmissionWarning, lines[i], ref, "%s%s", fe, fate)
		default:
			d.report(e, lines[i], ref, "%s; the object is left out", fe)
		}
		d.keyLast(fieldKey(fe)...)
	}
	if rest := len(errs) - len(shown); rest > 0 {
		d.report(e, src.Line, ref, "%d more schema problems not shown", rest)
		d.keyLast(diag.Part("problem", "more"))
	}
}

// isDNS1123Subdomain is validation.IsDNS1123Subdomain, whose regular
// expression costs more than the rest of checking most names.
func isDNS1123Subdomain(s string) []string {
	if len(s) <= validation.DNS1123SubdomainMaxLength && dotted(s, plainLabel) {
		return nil
	}
	return validation.IsDNS1123Subdomain(s)
}

// dotted reports whether s is one or more labels joined by dots, each
// accepted by label.
func dotted(s string, label func(string) bool) bool {
	for part := range strings.SplitSeq(s, ".") {
		if !label(part) {
			return false
		}
	}
	return true
}

// plainLabel reports whether s matches [a-z0-9]([-a-z0-9]*[a-z0-9])? and
// is at most 63 characters long: a DNS-1123 label, and a label of a
// DNS-1123 subdomain (which bounds only the whole name's length).
func plainLabel(s string) bool {
	if s == "" || len(s) > validation.DNS1123LabelMaxLength || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func pathsOf(errs []fieldError) []model.Path {
	out := make([]model.Path, len(errs))
	for i, e := range errs {
		out[i] = e.Path
	}
	return out
}

func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

func servedList(group string, versions []string) string {
	out := make([]string, len(versions))
	for i, v := range versions {
		if group != "" {
			v = group + "/" + v
		}
		out[i] = v
	}
	return strings.Join(out, ", ")
}
