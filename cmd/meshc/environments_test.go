package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// placedIn is a finding's code, position and environments.
type placedIn struct {
	Code, File string
	Line       int
	Envs       string
}

func placedFindings(t *testing.T, out string) []placedIn {
	t.Helper()
	var got []placedIn
	for _, d := range diagnosticsOf(t, out) {
		got = append(got, placedIn{d.Code, d.Object.File, d.Object.Line, strings.Join(d.Environments, ", ")})
	}
	return got
}

// TestEnvironments: several overlays, or several helm entries of one
// chart, are checked one environment at a time; each finding is reported
// once with the environments where it occurs, in every format.
func TestEnvironments(t *testing.T) {
	abs, err := filepath.Abs(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	vs := abs + "/helm/mesh/templates/virtualservice.yaml"
	entries := "helm:\n  - chart: " + abs + "/helm/mesh\n    values: [" + abs + "/helm/mesh/env/prod.yaml]\n" +
		"  - chart: " + abs + "/helm/mesh\n    values: [" + abs + "/helm/mesh/env/staging.yaml]\n"
	project := filepath.Join(writeFiles(t, map[string]string{".meshc.yaml": entries}), ".meshc.yaml")
	overlays := []string{abs + "/kustomize/overlays/prod", abs + "/kustomize/overlays/staging"}
	for _, tt := range []struct {
		name string
		args []string
		want []placedIn
	}{
		{"helm entries of one chart", []string{"--project-config", project}, []placedIn{
			{"MC4003", vs, 18, "staging"},
			{"MC4003", vs, 23, "staging"}, // no DestinationRule
			{"MC4003", vs, 23, "prod"},    // one without subset v2
		}},
		{"overlays", overlays, []placedIn{
			{"MC4004", abs + "/kustomize/base/reviews.yaml", 47, "prod, staging"},
			{"MC4003", abs + "/kustomize/overlays/prod/kustomization.yaml", 5, "prod"},
		}},
		{"one overlay: no environments", overlays[:1], []placedIn{
			{"MC4004", abs + "/kustomize/base/reviews.yaml", 47, ""},
			{"MC4003", abs + "/kustomize/overlays/prod/kustomization.yaml", 5, ""},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, out, errOut := meshc(t, "", append([]string{"lint", "-o", "json", "--fail-on", "none"}, tt.args...)...)
			if got := placedFindings(t, out); !slices.Equal(got, tt.want) {
				t.Errorf("findings\n got %v\nwant %v\n%s", got, tt.want, errOut)
			}
		})
	}
	lint := append([]string{"lint", "--fail-on", "none"}, overlays...)
	if _, out, _ := meshc(t, "", lint...); !strings.Contains(out, "\n    environments: prod, staging\n") {
		t.Errorf("text output names no environments:\n%s", out)
	}
	if _, out, _ := meshc(t, "", append(lint, "-o", "sarif")...); !strings.Contains(out, "\"environments\": [\n") {
		t.Errorf("SARIF output names no environments:\n%s", out)
	}
}

// TestBuildPerEnvironment: build writes one OUT per environment when -o
// holds {env}, and refuses inputs of several environments without it.
func TestBuildPerEnvironment(t *testing.T) {
	overlays := []string{fixtures + "/kustomize/overlays/prod", fixtures + "/kustomize/overlays/staging"}
	dir := t.TempDir()
	args := append([]string{"build", "--fail-on", "none", "-q"}, overlays...)
	if code, _, errOut := meshc(t, "", append(args, "-o", filepath.Join(dir, "one"))...); code != exitUsage || !strings.Contains(errOut, "the inputs hold 2 environments (prod, staging); -o needs {env}") {
		t.Errorf("without {env}: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "one")); !os.IsNotExist(err) {
		t.Errorf("without {env}, OUT was written: %v", err)
	}
	if code, _, errOut := meshc(t, "", append(args, "-o", filepath.Join(dir, "out", "{env}"))...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, env := range []string{"prod", "staging"} {
		if _, err := os.Stat(filepath.Join(dir, "out", env, "index.json")); err != nil {
			t.Error(err)
		}
	}
	plain := writeFiles(t, map[string]string{"ns.yaml": goodNS})
	if code, _, errOut := meshc(t, "", "build", plain, "-o", filepath.Join(dir, "{env}")); code != exitUsage || !strings.Contains(errOut, "no environment") {
		t.Errorf("{env} without environments: exit %d, %s", code, errOut)
	}
}

// TestEnvironmentNames: a helm entry is named by its name, else its last
// values file; two of the same name are a usage error.
func TestEnvironmentNames(t *testing.T) {
	abs, err := filepath.Abs(fixtures + "/helm/mesh")
	if err != nil {
		t.Fatal(err)
	}
	entry := func(extra string) string {
		return "  - chart: " + abs + "\n    values: [" + abs + "/env/prod.yaml]\n" + extra
	}
	for _, tt := range []struct {
		name, config string
		code         int
		want         string
	}{
		{"named", "helm:\n" + entry("    name: eu\n") + entry(""), 0, `"eu"`},
		{"clash", "helm:\n" + entry("") + entry(""), exitUsage, `two environments are named "prod"; give the helm entries of .meshc.yaml a name`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config := filepath.Join(writeFiles(t, map[string]string{".meshc.yaml": tt.config}), ".meshc.yaml")
			code, out, errOut := meshc(t, "", "lint", "-o", "json", "--fail-on", "none", "--project-config", config)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d (want %d), want %q in\n%s%s", code, tt.code, tt.want, out, errOut)
			}
		})
	}
}
