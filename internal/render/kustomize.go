package render

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// KustomizationNames are the file names that make a directory a
// kustomization, in the order Kustomize looks for them.
var KustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Kustomization returns the kustomization file in dir, or "".
func Kustomization(fsys fs.FS, dir string) string {
	for _, n := range KustomizationNames {
		if fi, err := stat(fsys, join(fsys, dir, n)); err == nil && fi.Mode().IsRegular() {
			return join(fsys, dir, n)
		}
	}
	return ""
}

// Kustomize builds the kustomization in dir as kustomize build would,
// reading only files below root: bases elsewhere, remote bases and
// plugins are errors. Each object comes back as its own Doc with its
// resource file and the kustomization whose patches applied to it, for the
// caller to tell whether they changed it. bases are the other kustomization
// directories the build read (absolute, or for an fs.FS its names), so
// that a caller rendering several can render a base once, inside its
// overlays, rather than also on its own.
func Kustomize(fsys fs.FS, dir, root string) (docs []Doc, bases []string, err error) {
	fail := func(err error) ([]Doc, []string, error) {
		return nil, nil, &Error{What: "kustomization " + dir, File: Kustomization(fsys, dir), Err: err}
	}
	bounded := boundedFS{kustomizations: map[string]bool{}, refused: new(error)}
	var absDir string
	if fsys == nil {
		absRoot, err := filepath.Abs(root)
		if err != nil {
			return fail(err)
		}
		if absDir, err = filepath.Abs(dir); err != nil {
			return fail(err)
		}
		bounded.FileSystem, bounded.real, bounded.shown = filesys.MakeFsOnDisk(), onDisk, func(p string) string { return p }
		bounded.root, _ = onDisk(absRoot)
		bounded.shownRoot = absRoot
	} else {
		t := treeFS{fsys}
		absDir = t.abs(path.Clean(dir))
		bounded.FileSystem, bounded.real, bounded.shown = t, func(p string) (string, error) { return t.abs(t.name(p)), nil }, t.name
		bounded.root, bounded.shownRoot = t.abs(path.Clean(root)), path.Clean(root)
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone // the file system below bounds reads
	opts.PluginConfig = types.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(bounded, absDir)
	if *bounded.refused != nil {
		// Kustomize reads a failed read as a missing file; say why.
		return fail(*bounded.refused)
	}
	if err != nil {
		return fail(err)
	}
	read := bounded.kustomizations
	if real, err := bounded.real(absDir); err == nil {
		delete(read, real)
	}
	for _, b := range slices.Sorted(maps.Keys(read)) {
		if fsys != nil {
			b = path.Clean(bounded.shown(b))
		}
		bases = append(bases, b)
	}
	for _, r := range m.Resources() {
		ann := map[string]any{}
		for k, v := range r.GetAnnotations() {
			ann[k] = v
		}
		doc := locate(fsys, ann, dir)
		for _, key := range []string{OriginAnnotation, TransformationAnnotation} {
			if err := r.PipeE(kyaml.ClearAnnotation(key)); err != nil {
				return fail(err)
			}
		}
		if doc.Data, err = r.AsYAML(); err != nil {
			return fail(err)
		}
		docs = append(docs, doc)
	}
	return docs, bases, nil
}

// onDisk resolves a path of the disk: absolute, with its links followed
// when it exists.
func onDisk(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// locate says where an object rendered by the kustomization in dir came
// from, by its origin and transformation annotations.
func locate(fsys fs.FS, ann map[string]any, dir string) Doc {
	path, repo, ok := Origin(ann)
	switch {
	case !ok:
		return Doc{File: Kustomization(fsys, dir), Origin: MadeHere}
	case repo != "":
		return Doc{File: repo + "//" + path, Origin: LineUnknown}
	case slices.Contains(KustomizationNames, filepath.Base(path)):
		// A generator's output: its origin is the kustomization.
		return Doc{File: join(fsys, dir, path), Origin: MadeHere}
	}
	file := join(fsys, dir, path)
	d := Doc{File: file, Source: file}
	if in := patchedIn(ann); in != "" {
		d.Patched = join(fsys, dir, in)
		d.PatchedLine = patchesLine(fsys, d.Patched)
	}
	return d
}

// patchesLine is the line of the first key of a kustomization that
// changes objects (patches, replacements and their older forms), or 0.
func patchesLine(fsys fs.FS, kustomization string) int {
	data, err := readFile(fsys, kustomization, 0)
	if err != nil {
		return 0
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return 0
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "patches", "patchesStrategicMerge", "patchesJson6902", "replacements":
			return m.Content[i].Line
		}
	}
	return 0
}

// Located is Locate for an object read from rendered YAML, whose
// kustomization is not known: paths stay as the annotation wrote them.
func Located(ann map[string]any) (Doc, bool) {
	if _, _, ok := Origin(ann); !ok {
		return Doc{}, false
	}
	d := locate(nil, ann, "")
	if d.Origin == MadeHere {
		d.Origin = ""
	}
	return d, true
}

// boundedFS is a file system (the disk, an fs.FS), read-only and limited
// to the files below root, with every kustomization it serves asking for
// origin annotations.
type boundedFS struct {
	filesys.FileSystem
	// root is resolved by real; shownRoot is as messages name it.
	root, shownRoot string
	// real resolves a path as the file system does (absolute, links
	// followed); shown is a path as messages name it.
	real  func(string) (string, error)
	shown func(string) string
	// kustomizations collects the directories of the kustomizations read.
	kustomizations map[string]bool
	// refused is the first kustomization refused (a remote base).
	refused *error
}

var errReadOnly = errors.New("meshc renders without writing files")

func (f boundedFS) inside(path string) error {
	abs, err := f.real(path)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(f.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside the input tree %s; meshc reads only files below it", f.shown(path), f.shownRoot)
	}
	return nil
}

func (f boundedFS) ReadFile(path string) ([]byte, error) {
	if err := f.inside(path); err != nil {
		return nil, err
	}
	data, err := f.FileSystem.ReadFile(path)
	if err != nil || !slices.Contains(KustomizationNames, filepath.Base(path)) {
		return data, err
	}
	if dir, err := f.real(filepath.Dir(path)); err == nil {
		f.kustomizations[dir] = true
	}
	data, err = withOrigins(f.shown(path), data)
	if err != nil && *f.refused == nil {
		*f.refused = err
	}
	return data, err
}

func (f boundedFS) Open(path string) (filesys.File, error) {
	if err := f.inside(path); err != nil {
		return nil, err
	}
	return f.FileSystem.Open(path)
}

func (f boundedFS) ReadDir(path string) ([]string, error) {
	if err := f.inside(path); err != nil {
		return nil, err
	}
	return f.FileSystem.ReadDir(path)
}

func (f boundedFS) IsDir(path string) bool { return f.inside(path) == nil && f.FileSystem.IsDir(path) }
func (f boundedFS) Exists(path string) bool {
	return f.inside(path) == nil && f.FileSystem.Exists(path)
}

func (f boundedFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if err := f.inside(path); err != nil {
		return "", "", err
	}
	return f.FileSystem.CleanedAbs(path)
}

func (f boundedFS) Glob(pattern string) ([]string, error) {
	if err := f.inside(filepath.Dir(pattern)); err != nil {
		return nil, err
	}
	return f.FileSystem.Glob(pattern)
}

func (f boundedFS) Walk(path string, fn filepath.WalkFunc) error {
	if err := f.inside(path); err != nil {
		return err
	}
	return f.FileSystem.Walk(path, fn)
}

func (boundedFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (boundedFS) Mkdir(string) error                  { return errReadOnly }
func (boundedFS) MkdirAll(string) error               { return errReadOnly }
func (boundedFS) RemoveAll(string) error              { return errReadOnly }
func (boundedFS) WriteFile(string, []byte) error      { return errReadOnly }

// withOrigins refuses a kustomization that names a remote base (rendering
// must not reach the network) and adds the build metadata that makes
// Kustomize annotate each object with its source and the patches applied.
func withOrigins(path string, data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return data, nil // Kustomize reports what is wrong with it
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "resources", "bases", "components":
			for _, e := range m.Content[i+1].Content {
				if remote(e.Value) {
					return nil, fmt.Errorf("%s:%d: remote base %s: meshc renders only local files, without network; vendor it into the repository", path, e.Line, e.Value)
				}
			}
		case "helmCharts", "helmChartInflationGenerator":
			return nil, fmt.Errorf("%s:%d: %s needs the helm binary, which meshc does not run; render the chart as a Helm input instead", path, m.Content[i].Line, m.Content[i].Value)
		}
	}
	meta := mappingValue(m, "buildMetadata")
	if meta == nil {
		meta = &yaml.Node{Kind: yaml.SequenceNode}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "buildMetadata"}, meta)
	}
	for _, want := range []string{"originAnnotations", "transformerAnnotations"} {
		if !slices.ContainsFunc(meta.Content, func(n *yaml.Node) bool { return n.Value == want }) {
			meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: want})
		}
	}
	return yaml.Marshal(&root)
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// remote reports whether a kustomization entry names something to fetch
// rather than a local path.
func remote(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "git@") || strings.Contains(s, "?ref=") ||
		strings.HasPrefix(s, "github.com/") || strings.HasPrefix(s, "gitlab.com/") || strings.HasPrefix(s, "bitbucket.org/")
}
