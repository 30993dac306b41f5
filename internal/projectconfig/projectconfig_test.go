package projectconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func write(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, FileName)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFindUpward: the nearest .meshc.yaml above a directory is found; none
// is "".
func TestFindUpward(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(deep); err != nil || got != "" {
		t.Fatalf("Find with no config = %q, %v", got, err)
	}
	want := write(t, filepath.Join(root, "a"), "failOn: warning\n")
	if got, err := Find(deep); err != nil || got != want {
		t.Errorf("Find = %q, %v; want %s", got, err, want)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, `exclude: ["charts/**"]
failOn: warning
meshConfig: mesh.yaml
revisions: [default, 1-24]
injectNamespaces: [shop]
suppress:
  - code: MC4001
    object: "shop/*"
    reason: migrating DestinationRules
    expires: 2027-01-31
  - {code: IST0101, reason: known}
hnc: {excludedNamespaces: [team-x], tkeProjects: true}
`)
	c, err := Load(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := c.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if c.FailOn != "warning" || c.MeshConfig != filepath.Join(dir, "mesh.yaml") || len(c.Revisions) != 2 || !c.HNC.TKEProjects ||
		len(rules) != 2 || rules[0].Source.Line != 7 || rules[0].Expires.Format("2006-01-02") != "2027-01-31" || rules[1].Source.Line != 11 {
		t.Errorf("config %+v, rules %+v", c, rules)
	}
}

// TestRenderInputs: helm and kustomize entries are anchored at the
// config's folder and are the inputs of a run that names none.
func TestRenderInputs(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(nil, write(t, dir, `helm:
  - chart: charts/mesh
    values: [env/prod.yaml, /abs/extra.yaml]
    set: [canary=10]
    release: mesh
    namespace: istio-system
kustomize: [overlays/prod]
`))
	if err != nil {
		t.Fatal(err)
	}
	h := c.Helm[0]
	if h.Chart != filepath.Join(dir, "charts/mesh") || h.Values[0] != filepath.Join(dir, "env/prod.yaml") || h.Values[1] != "/abs/extra.yaml" ||
		h.Set[0] != "canary=10" || h.Release != "mesh" || h.Namespace != "istio-system" {
		t.Errorf("helm entry %+v", h)
	}
	if got := c.Inputs(); len(got) != 2 || got[0] != h.Chart || got[1] != filepath.Join(dir, "overlays/prod") {
		t.Errorf("inputs %v", got)
	}
	if (*Config)(nil).Inputs() != nil || (&Config{}).Inputs() != nil {
		t.Error("no entries, yet inputs")
	}
}

// TestLoadRejects: what would be silently wrong is an error at file:line.
func TestLoadRejects(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{"failon: warning\n", `:1: unknown key "failon" (did you mean "failOn"?); known keys: alphaGatewayAPI, dualStack, exclude, failOn, helm, hnc, injectNamespaces, kustomize, meshConfig, placeholderVIPs, revisions, suppress`},
		{"exclude: []\nsupress: []\n", `:2: unknown key "supress" (did you mean "suppress"?)`},
		{"revisions: 1-24\n", `:1: revisions: expected a list, got "1-24"`},
		{"hnc: {tkeProjects: yes-please}\n", `:1: hnc.tkeProjects: expected true or false, got "yes-please"`},
		{"hnc: {excludedNamespace: [a]}\n", `:1: hnc: unknown key "excludedNamespace" (did you mean "excludedNamespaces"?)`},
		{"suppress: [{code: MC4001}]\n", ":1: the suppression of MC4001 needs a reason"},
		{"suppress:\n  - {reason: x}\n", ":2: a suppression needs a code"},
		{"suppress:\n  - {code: MC9999, reason: x}\n", `:2: unknown diagnostic code "MC9999"`},
		{"suppress:\n  - {code: MC4001, reason: x, expires: soon}\n", `expires "soon"`},
		{"helm: [{values: [prod.yaml]}]\n", "helm entry 1 needs a chart"},
		{"helm: [{chart: c, value: [prod.yaml]}]\n", `:1: helm[1]: unknown key "value" (did you mean "values"?); known keys: chart, name, namespace, release, set, values`},
		{"kustomize: overlays/prod\n", `kustomize: expected a list, got "overlays/prod"`},
		{"suppress: [{code: MC4001, reason: [a]}]\n", `suppress[1].reason: expected a string, got a list`},
	} {
		_, err := Load(nil, write(t, t.TempDir(), tc.content))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "projectconfig.") {
			t.Errorf("%q: err = %v, want %q", tc.content, err, tc.want)
		}
	}
}

// TestFindStopsAtTheRepository: a .meshc.yaml above the repository root
// (.git as a directory, or as a file in a worktree) is not the
// repository's.
func TestFindStopsAtTheRepository(t *testing.T) {
	for _, gitIsFile := range []bool{false, true} {
		outside := t.TempDir()
		write(t, outside, "exclude: [\"**\"]\n")
		repo := filepath.Join(outside, "repo")
		deep := filepath.Join(repo, "manifests", "base")
		if err := os.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		if got, err := Find(deep); err != nil || got != filepath.Join(outside, FileName) {
			t.Fatalf("without .git, Find = %q, %v; want the parent's", got, err)
		}
		git := filepath.Join(repo, ".git")
		var err error
		if gitIsFile {
			err = os.WriteFile(git, []byte("gitdir: /elsewhere\n"), 0o644)
		} else {
			err = os.Mkdir(git, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Find(deep); err != nil || got != "" {
			t.Errorf(".git a file %v: Find = %q, %v; want none", gitIsFile, got, err)
		}
		want := write(t, repo, "failOn: warning\n")
		if got, err := Find(deep); err != nil || got != want {
			t.Errorf(".git a file %v: Find = %q, %v; want %s", gitIsFile, got, err, want)
		}
	}
}

// TestFindInTree: in a repository's tree the nearest .meshc.yaml above a
// directory is found up to the tree's root, and read from the tree.
func TestFindInTree(t *testing.T) {
	tree := fstest.MapFS{
		"a/b/c/ns.yaml":  {Data: []byte("")},
		"a/" + FileName:  {Data: []byte("failOn: warning\nmeshConfig: mesh.yaml\n")},
		"x/y/z.yaml":     {Data: []byte("")},
		"x/y/q/" + "n":   {Data: []byte("")},
		FileName + ".no": {Data: []byte("")},
	}
	for dir, want := range map[string]string{"a/b/c": "a/" + FileName, "a": "a/" + FileName, "x/y": "", ".": ""} {
		if got, err := FindIn(tree, dir); err != nil || got != want {
			t.Errorf("FindIn(%s) = %q, %v; want %q", dir, got, err, want)
		}
	}
	c, err := Load(tree, "a/"+FileName)
	if err != nil || c.FailOn != "warning" || c.MeshConfig != "a/mesh.yaml" {
		t.Errorf("Load from the tree: %+v, %v", c, err)
	}
}
