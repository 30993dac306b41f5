package load

import (
	"io/fs"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	meshv1 "istio.io/api/mesh/v1alpha1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/model"
)

// MeshOptions say where the mesh config comes from.
type MeshOptions struct {
	// File, when set, replaces the inputs' mesh config: a MeshConfig YAML,
	// a ConfigMap manifest whose "mesh" key holds one, an IstioOperator,
	// or the istiod Helm chart's values (a file with a meshConfig key).
	File string
	// FileIn is the file system File is in; nil means the OS's.
	FileIn fs.FS
	// IstioNamespace is where istiod runs and reads ConfigMap "istio";
	// empty means istio-system.
	IstioNamespace string
	// DomainSuffix is istiod's --domain; empty means cluster.local.
	DomainSuffix string
}

// MeshConfigName is the ConfigMap istiod reads its mesh config from.
const MeshConfigName = "istio"

// MeshConfig returns istiod's defaults overridden by the mesh config found
// in opts.File or in objs: ConfigMap istio in the istiod namespace (key
// "mesh"), which istiod reads, else the IstioOperators istioctl would
// render it from. As istiod does, a field it does not know is ignored
// (reported as a warning) and the rest applies; a field of the wrong type
// makes the whole mesh config unusable and the defaults apply.
func MeshConfig(objs []model.Object, opts MeshOptions) (model.MeshConfig, []diag.Diagnostic) {
	mc := model.MeshConfig{MeshConfig: model.DefaultMeshConfig(), DomainSuffix: opts.DomainSuffix}
	if mc.DomainSuffix == "" {
		mc.DomainSuffix = model.DefaultDomainSuffix
	}
	var diags []diag.Diagnostic
	var sources []meshInput
	if opts.File != "" {
		in, ok, ds := fileMesh(opts.FileIn, opts.File)
		diags = ds
		if ok {
			sources = append(sources, in)
		}
	} else {
		sources = inputMeshes(objs, opts.IstioNamespace)
	}
	if len(sources) == 0 {
		return mc, diags
	}
	mc.From = sources[0].src
	used, ds := sources[0].decode()
	diags = append(diags, ds...)
	if len(sources) > 1 {
		// The IstioOperators, when a ConfigMap is what istiod reads: said
		// when a field they write has another value there. Fields only
		// the chart writes are left out: meshc does not render all of
		// them (tracing, default providers).
		other, ds := sources[1].decode()
		diags = append(diags, ds...)
		if used != nil && other != nil {
			a, b := model.DefaultMeshConfig(), model.DefaultMeshConfig()
			overlay(a, used)
			overlay(b, other)
			if diff := differentFields(a, b, sources[1].written); diff != "" {
				diags = append(diags, diag.MeshConfigSourcesDiffer.At(sources[1].at(nil), sources[0].label, sources[1].label, diff))
			}
		}
	}
	if used != nil {
		overlay(mc.MeshConfig, used)
	}
	return mc, diags
}

// meshInput is one source of the mesh config: its value as parsed, and
// where each of its fields is written.
type meshInput struct {
	raw any
	src model.Source
	// label names the source in a finding that names two.
	label string
	// written are the fields a rendered source's authors wrote (nil for
	// a text one), which a conflict with another source is judged on.
	written []model.Path
	// refs gives, for each path of raw, the object and line a finding
	// about it points at.
	refs func([]model.Path) []diag.ObjectRef
	// broken, when set, is why the text could not be parsed, at brokenAt.
	broken   string
	brokenAt diag.ObjectRef
}

func (in meshInput) at(p model.Path) diag.ObjectRef { return in.refs([]model.Path{p})[0] }

// decode reads the source's MeshConfig; nil when istiod would reject it.
func (in meshInput) decode() (*meshv1.MeshConfig, []diag.Diagnostic) {
	if in.broken != "" {
		return nil, []diag.Diagnostic{diag.MeshConfigUnparsable.At(in.brokenAt, in.broken)}
	}
	if in.raw == nil {
		return nil, nil
	}
	var errs []fieldError
	user := &meshv1.MeshConfig{}
	protoDecoder{protoNames: true, errs: &errs}.message(user.ProtoReflect(), fromValue(in.raw), nil)
	refs := in.refs(pathsOf(errs))
	var diags []diag.Diagnostic
	fatal := false
	for i, e := range errs {
		var d diag.Diagnostic
		if e.Unknown {
			d = diag.MeshConfigFieldIgnored.At(refs[i], e.String()).WithSeverity(diag.Warning)
		} else {
			fatal = true
			d = diag.MeshConfigRejected.At(refs[i], e.String())
		}
		diags = append(diags, d.Keyed(fieldKey(e)...))
	}
	if fatal {
		return nil, diags
	}
	return user, diags
}

// textMesh is a mesh config written as YAML text, doc, in the file of
// src. Findings call it a ConfigMap, a plain file included.
func textMesh(doc *model.Document, src model.Source, label string) meshInput {
	refAt := func(line int) diag.ObjectRef { return diag.ObjectRef{Kind: "ConfigMap", File: src.File, Line: line} }
	in := meshInput{src: src, label: label, refs: func(paths []model.Path) []diag.ObjectRef {
		out := make([]diag.ObjectRef, len(paths))
		for i, line := range doc.LinesOf(paths) {
			out[i] = refAt(line)
		}
		return out
	}}
	raw, line, msg := parseYAML(chunk{data: doc.Data, line: doc.Line})
	if msg != "" {
		in.broken, in.brokenAt = msg, refAt(line)
	}
	in.raw = raw
	return in
}

// fileMesh reads --mesh-config: a ConfigMap, IstioOperators, the istiod
// chart's values or a MeshConfig, told apart by their shape.
func fileMesh(fsys fs.FS, file string) (meshInput, bool, []diag.Diagnostic) {
	data, err := inputfile.ReadFS(fsys, file, inputfile.Options{})
	if err != nil {
		return meshInput{}, false, []diag.Diagnostic{diag.UnreadableInput.At(diag.ObjectRef{File: file}, "mesh config: %s", err)}
	}
	objs, diags := Bytes(file, data)
	var iops []*model.IstioOperator
	for _, o := range objs {
		switch o := o.(type) {
		case *model.ConfigMap:
			in, ok := configMapMesh(o)
			return in, ok, diags
		case *model.IstioOperator:
			iops = append(iops, o)
		}
	}
	if len(iops) > 0 {
		return operatorMesh(iops), true, diags
	}
	doc := &model.Document{Data: data, Line: 1}
	src := model.NewSource(file, 1, doc, nil)
	in := textMesh(doc, src, file)
	if values, ok := in.raw.(map[string]any); ok && in.broken == "" {
		if _, chart := values["meshConfig"]; chart {
			return valuesMesh(values, src), true, nil
		}
	}
	return in, true, nil
}

// inputMeshes finds the mesh configs of the inputs, the one istiod reads
// first: ConfigMap istio in the istiod namespace, then the IstioOperators.
func inputMeshes(objs []model.Object, istioNamespace string) []meshInput {
	ns := istioNamespace
	if ns == "" {
		ns = "istio-system"
	}
	var out []meshInput
	var iops []*model.IstioOperator
	for _, o := range objs {
		switch o := o.(type) {
		case *model.ConfigMap:
			if o.Namespace == ns && o.Name == MeshConfigName && len(out) == 0 {
				if in, ok := configMapMesh(o); ok {
					out = append(out, in)
				}
			}
		case *model.IstioOperator:
			iops = append(iops, o)
		}
	}
	if len(iops) > 0 {
		out = append(out, operatorMesh(iops))
	}
	return out
}

func configMapMesh(cm *model.ConfigMap) (meshInput, bool) {
	text, ok := cm.Data["mesh"]
	if !ok {
		return meshInput{}, false
	}
	// A block scalar ("mesh: |") starts on the line after its key.
	line := cm.Source.FieldLine(model.Path{}.Key("data").Key("mesh")) + 1
	return textMesh(&model.Document{Data: []byte(text), Line: line}, cm.Source, cm.Ref().String()), true
}

// overlay sets every field user sets onto dst, replacing it whole, as
// istiod's decoder does; defaultConfig is the exception, merged field by
// field with its proxyMetadata maps joined, and so are trustDomainAliases,
// which istiod keeps sorted, each once, with those set before.
func overlay(dst, user *meshv1.MeshConfig) {
	d := dst.ProtoReflect()
	aliases := slices.Concat(dst.TrustDomainAliases, user.TrustDomainAliases)
	user.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == "default_config" && dst.DefaultConfig != nil {
			mergeProxyConfig(dst.DefaultConfig, user.DefaultConfig)
			return true
		}
		d.Set(fd, v)
		return true
	})
	slices.Sort(aliases)
	dst.TrustDomainAliases = slices.Compact(aliases)
}

func mergeProxyConfig(dst, user *meshv1.ProxyConfig) {
	meta := map[string]string{}
	for k, v := range dst.ProxyMetadata {
		meta[k] = v
	}
	for k, v := range user.ProxyMetadata {
		meta[k] = v
	}
	d := dst.ProtoReflect()
	user.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		d.Set(fd, v)
		return true
	})
	if len(meta) > 0 {
		dst.ProxyMetadata = meta
	}
}
