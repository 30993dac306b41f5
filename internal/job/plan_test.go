package job

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/projectconfig"
	"github.com/meshc/meshc/internal/testfiles"
)

const bookinfo = "../../examples/bookinfo"

// repo writes files into a fresh repository (a directory holding .git, so
// the search for .meshc.yaml stops there) and returns its path.
func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	files[".git/HEAD"] = "ref: refs/heads/main\n"
	return testfiles.Write(t, files)
}

// settings are the flags' defaults over paths.
func settings(paths ...string) Settings {
	return Settings{Paths: paths, Kustomize: "auto", PlaceholderVIPs: compile.DefaultPlaceholderVIPs().String(), FailOn: "error"}
}

// givenFlags makes Settings.Given from flag names.
func givenFlags(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

const project = `failOn: warning
exclude: ["vendor/**"]
injectNamespaces: [shop]
revisions: [canary]
placeholderVIPs: 10.200.0.0/16
dualStack: true
meshConfig: mesh.yaml
hnc:
  excludedNamespaces: [ops]
suppress:
  - code: MC4001
    reason: known
`

// TestMerge: .meshc.yaml supplies what the command line does not give; a
// flag given wins, and excludes and suppressions add up, the project's
// first.
func TestMerge(t *testing.T) {
	dir := repo(t, map[string]string{projectconfig.FileName: project, "m/ns.yaml": "", "mesh.yaml": ""})
	m := filepath.Join(dir, "m")
	for _, tc := range []struct {
		name   string
		s      func(*Settings)
		failOn string
		inject []string
		vips   string
		hnc    []string
		supp   []string
		dual   bool
	}{
		{"project fills in", func(*Settings) {}, "warning", []string{"shop"}, "10.200.0.0/16", []string{"ops"}, []string{"MC4001"}, true},
		{"flags given win", func(s *Settings) {
			s.FailOn, s.InjectNamespaces, s.PlaceholderVIPs = "info", []string{"web"}, "10.9.0.0/16"
			s.Compile.Hierarchy.ExcludedNamespaces = []string{"kube-system"}
			s.Given = givenFlags("fail-on", "inject-namespace", "placeholder-vips", "hnc-excluded-namespace", "dual-stack")
		}, "info", []string{"web"}, "10.9.0.0/16", []string{"kube-system"}, []string{"MC4001"}, false},
		{"a flag's value not given is the project's", func(s *Settings) {
			s.InjectNamespaces = []string{"web"}
		}, "warning", []string{"shop"}, "10.200.0.0/16", []string{"ops"}, []string{"MC4001"}, true},
		{"suppressions add up", func(s *Settings) {
			s.Suppress = []string{"MC4002"}
		}, "warning", []string{"shop"}, "10.200.0.0/16", []string{"ops"}, []string{"MC4001", "MC4002"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settings(m)
			s.Exclude = []string{"tmp/**"}
			tc.s(&s)
			p, err := Merge(s)
			if err != nil {
				t.Fatal(err)
			}
			var supp []string
			for _, r := range p.Options.Suppress {
				supp = append(supp, r.Code)
			}
			o := p.Options
			if p.FailOn != tc.failOn || !slices.Equal(o.Injection.Namespaces, tc.inject) || o.PlaceholderVIPs.String() != tc.vips ||
				!slices.Equal(o.Hierarchy.ExcludedNamespaces, tc.hnc) || !slices.Equal(supp, tc.supp) || o.DualStack != tc.dual {
				t.Errorf("fail-on %s, inject %v, VIPs %s, HNC excluded %v, suppress %v, dual-stack %v; want %s, %v, %s, %v, %v, %v",
					p.FailOn, o.Injection.Namespaces, o.PlaceholderVIPs, o.Hierarchy.ExcludedNamespaces, supp, o.DualStack, tc.failOn, tc.inject, tc.vips, tc.hnc, tc.supp, tc.dual)
			}
			if want := []string{"vendor/**", "tmp/**"}; !slices.Equal(p.Inputs.Exclude, want) {
				t.Errorf("exclude %v, want %v", p.Inputs.Exclude, want)
			}
			if !slices.Equal(o.Injection.Revisions, []string{"canary"}) || o.MeshConfigFile != filepath.Join(dir, "mesh.yaml") {
				t.Errorf("revisions %v, mesh config %q", o.Injection.Revisions, o.MeshConfigFile)
			}
			if p.ProjectPath() != filepath.Join(dir, projectconfig.FileName) || p.Searched != m {
				t.Errorf("project %q searched from %q", p.ProjectPath(), p.Searched)
			}
			if want := []string{p.ProjectPath(), o.MeshConfigFile}; !slices.Equal(p.read, want) {
				t.Errorf("read %v, want %v", p.read, want)
			}
		})
	}
}

// TestMergeInputs: the project's charts and kustomizations are the inputs
// when none is named, and only then; --project-config is read wherever
// the inputs are.
func TestMergeInputs(t *testing.T) {
	dir := repo(t, map[string]string{projectconfig.FileName: "kustomize: [overlays/prod]\n", "other.yaml": "failOn: info\n"})
	t.Chdir(dir)
	for _, tc := range []struct {
		name      string
		s         Settings
		paths     []string
		searched  string
		failOn    string
		noProject bool
	}{
		{"none named", settings(), []string{filepath.Join(dir, "overlays/prod")}, ".", "error", false},
		{"one named", settings("base"), []string{"base"}, ".", "error", false},
		{"standard input", settings("-"), []string{"-"}, ".", "error", false},
		{"--project-config", func() Settings { s := settings("base"); s.ProjectConfig = "other.yaml"; return s }(), []string{"base"}, "", "info", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Merge(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Inputs.Paths, tc.paths) || p.Searched != tc.searched || p.FailOn != tc.failOn {
				t.Errorf("inputs %v searched from %q fail-on %s; want %v, %q, %s", p.Inputs.Paths, p.Searched, p.FailOn, tc.paths, tc.searched, tc.failOn)
			}
		})
	}
}

// TestMergeErrors: a bad setting, from a flag or from .meshc.yaml, is an
// error naming it.
func TestMergeErrors(t *testing.T) {
	bad := repo(t, map[string]string{projectconfig.FileName: "placeholderVIPs: 10.0.0.0/31\n", "ns.yaml": ""})
	for _, tc := range []struct {
		name string
		s    func(*Settings)
		want string
	}{
		{"placeholder VIPs", func(s *Settings) { s.PlaceholderVIPs = "fd00::/64" }, "--placeholder-vips: want an IPv4 CIDR"},
		{"suppress", func(s *Settings) { s.Suppress = []string{"NOPE"} }, "--suppress: "},
		{"kustomize", func(s *Settings) { s.Kustomize = "maybe" }, `--kustomize: want auto or off, got "maybe"`},
		{"HNC regex", func(s *Settings) { s.Compile.Hierarchy.IncludedNamespaceRegex = "(" }, "regex"},
		{"project's placeholder VIPs", func(s *Settings) { s.Paths = []string{bad} }, `got "10.0.0.0/31"`},
		{"project config missing", func(s *Settings) { s.ProjectConfig = filepath.Join(bad, "none.yaml") }, "none.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settings(bookinfo)
			tc.s(&s)
			if _, err := Merge(s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Merge: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestCompileEmpty: a run that loads no object is an error unless
// AllowEmpty.
func TestCompileEmpty(t *testing.T) {
	for _, allow := range []bool{false, true} {
		s := settings("-")
		s.Stdin, s.AllowEmpty = strings.NewReader(""), allow
		p, err := Merge(s)
		if err != nil {
			t.Fatal(err)
		}
		run, err := p.Compile(context.Background())
		if allow != (err == nil) {
			t.Errorf("allow empty %v: %v", allow, err)
		}
		if err != nil && !strings.Contains(err.Error(), "no Kubernetes objects found in -") {
			t.Errorf("error %q does not name the input", err)
		}
		if allow && len(run.Objects) != 0 {
			t.Errorf("%d objects from nothing", len(run.Objects))
		}
	}
}

// TestMergeTree: with the inputs in an fs.FS, .meshc.yaml is found there
// (up to its root) and the files it names are read there; the files the
// flags name are the OS's, and only those a build must not replace.
func TestMergeTree(t *testing.T) {
	tree := fstest.MapFS{
		"repo/" + projectconfig.FileName: {Data: []byte("failOn: info\nmeshConfig: mesh.yaml\nhelm:\n  - chart: charts/mesh\n    values: [charts/mesh/prod.yaml]\n")},
		"repo/m/ns.yaml":                 {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")},
		"repo/mesh.yaml":                 {Data: []byte("")},
	}
	s := settings("repo/m")
	s.FS = tree
	p, err := Merge(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.ProjectPath() != "repo/"+projectconfig.FileName || p.Searched != "repo/m" || p.FailOn != "info" || p.Inputs.FS == nil {
		t.Errorf("project %q searched from %q, fail-on %s", p.ProjectPath(), p.Searched, p.FailOn)
	}
	if p.Options.MeshConfigFile != "repo/mesh.yaml" || p.Options.MeshConfigIn == nil || len(p.read) != 0 {
		t.Errorf("mesh config %q in the tree: %v; read %v", p.Options.MeshConfigFile, p.Options.MeshConfigIn != nil, p.read)
	}
	for _, h := range p.Inputs.Render.Charts {
		if h.ValuesIn == nil || !slices.Equal(h.Values, []string{"repo/charts/mesh/prod.yaml"}) {
			t.Errorf("chart values %v, in the tree: %v", h.Values, h.ValuesIn != nil)
		}
	}
	run, err := p.Compile(context.Background())
	if err != nil || len(run.Objects) != 1 || run.Files[0] != "repo/m/ns.yaml" {
		t.Fatalf("compile from the tree: %v", err)
	}
	// The flag's mesh config is the OS's, and a build must not replace it.
	s.Compile.MeshConfigFile, s.Given = "/etc/mesh.yaml", givenFlags("mesh-config")
	if p, err = Merge(s); err != nil || p.Options.MeshConfigIn != nil || !slices.Equal(p.read, []string{"/etc/mesh.yaml"}) {
		t.Errorf("--mesh-config: in the tree %v, read %v (%v)", p.Options.MeshConfigIn != nil, p.read, err)
	}
}
