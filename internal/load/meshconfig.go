package load

import (
	"io/fs"

	"google.golang.org/protobuf/reflect/protoreflect"
	meshv1 "istio.io/api/mesh/v1alpha1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/model"
)

// MeshOptions say where the mesh config comes from.
type MeshOptions struct {
	// File, when set, replaces the ConfigMap: a MeshConfig YAML, or a
	// ConfigMap manifest whose "mesh" key holds one.
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
// in objs (ConfigMap istio in the istiod namespace, key "mesh") or in
// opts.File. As istiod does, a field it does not know is ignored (reported
// as a warning) and the rest applies; a field of the wrong type makes the
// whole mesh config unusable and the defaults apply.
func MeshConfig(objs []model.Object, opts MeshOptions) (model.MeshConfig, []diag.Diagnostic) {
	mc := model.MeshConfig{MeshConfig: model.DefaultMeshConfig(), DomainSuffix: opts.DomainSuffix}
	if mc.DomainSuffix == "" {
		mc.DomainSuffix = model.DefaultDomainSuffix
	}
	text, doc, src, diags := meshSource(objs, opts)
	if doc == nil {
		return mc, diags
	}
	mc.From = src
	raw, line, msg := parseYAML(chunk{data: []byte(text), line: doc.Line})
	if msg != "" {
		return mc, append(diags, diag.MeshConfigUnparsable.At(refAt(src, line), msg))
	}
	if raw == nil {
		return mc, diags
	}
	var errs []fieldError
	user := &meshv1.MeshConfig{}
	protoDecoder{protoNames: true, errs: &errs}.message(user.ProtoReflect(), raw, nil)
	lines := doc.LinesOf(pathsOf(errs))
	fatal := false
	for i, e := range errs {
		var d diag.Diagnostic
		if e.Unknown {
			d = diag.MeshConfigFieldIgnored.At(refAt(src, lines[i]), e.String()).WithSeverity(diag.Warning)
		} else {
			fatal = true
			d = diag.MeshConfigRejected.At(refAt(src, lines[i]), e.String())
		}
		d = d.Keyed(fieldKey(e)...)
		diags = append(diags, d)
	}
	if fatal {
		return mc, diags
	}
	overlay(mc.MeshConfig, user)
	return mc, diags
}

func refAt(src model.Source, line int) diag.ObjectRef {
	return diag.ObjectRef{Kind: "ConfigMap", File: src.File, Line: line}
}

// meshSource finds the mesh config text and a document whose lines match
// the file's.
func meshSource(objs []model.Object, opts MeshOptions) (string, *model.Document, model.Source, []diag.Diagnostic) {
	if opts.File != "" {
		data, err := inputfile.ReadFS(opts.FileIn, opts.File, inputfile.Options{})
		if err != nil {
			return "", nil, model.Source{}, []diag.Diagnostic{diag.UnreadableInput.At(diag.ObjectRef{File: opts.File}, "mesh config: %s", err)}
		}
		objs, diags := Bytes(opts.File, data)
		for _, o := range objs {
			if cm, ok := o.(*model.ConfigMap); ok {
				return configMapMesh(cm, diags)
			}
		}
		src := model.NewSource(opts.File, 1, &model.Document{Data: data, Line: 1}, nil)
		return string(data), &model.Document{Data: data, Line: 1}, src, nil
	}
	ns := opts.IstioNamespace
	if ns == "" {
		ns = "istio-system"
	}
	for _, o := range objs {
		if cm, ok := o.(*model.ConfigMap); ok && cm.Namespace == ns && cm.Name == MeshConfigName {
			return configMapMesh(cm, nil)
		}
	}
	return "", nil, model.Source{}, nil
}

func configMapMesh(cm *model.ConfigMap, diags []diag.Diagnostic) (string, *model.Document, model.Source, []diag.Diagnostic) {
	text, ok := cm.Data["mesh"]
	if !ok {
		return "", nil, model.Source{}, diags
	}
	// A block scalar ("mesh: |") starts on the line after its key.
	line := cm.Source.FieldLine(model.Path{}.Key("data").Key("mesh")) + 1
	return text, &model.Document{Data: []byte(text), Line: line}, cm.Source, diags
}

// overlay sets every field user sets onto dst, replacing it whole, as
// istiod's decoder does; defaultConfig is the exception, merged field by
// field with its proxyMetadata maps joined.
func overlay(dst, user *meshv1.MeshConfig) {
	d := dst.ProtoReflect()
	user.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == "default_config" && dst.DefaultConfig != nil {
			mergeProxyConfig(dst.DefaultConfig, user.DefaultConfig)
			return true
		}
		d.Set(fd, v)
		return true
	})
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
