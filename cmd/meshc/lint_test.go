package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reviewsV4 routes to subset v4 of reviews, which bookinfo's rules lack.
const reviewsV4 = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: default}
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: {host: reviews, subset: v4}
`

const baselineRest = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: reviews, namespace: default}
spec:
  host: reviews
  subsets:
  - {name: v1, labels: {version: v1}}
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec:
  selector: {app: reviews}
  ports: [{name: http, port: 9080}]
`

// TestLintBaseline: a finding recorded in an earlier JSON report is not
// reported again after its object moved to another file and was
// reformatted; a new one is, and only it decides the exit status.
func TestLintBaseline(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": reviewsV4 + "---\n" + baselineRest})
	code, report, _ := meshc(t, "", "lint", dir, "-o", "json")
	if code != 1 || !strings.Contains(report, `"key": "MC4003/VirtualService/default/reviews/subset=v4/host=reviews.default.svc.cluster.local/rule=default/reviews/field=spec.http[0].route[0].destination.subset"`) {
		t.Fatalf("exit %d, report:\n%s", code, report)
	}
	baseline := filepath.Join(t.TempDir(), "baseline.json")
	if err := os.WriteFile(baseline, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}

	// The VirtualService moves to its own file, in flow style, below a
	// comment; a second default Sidecar is new.
	moved := "# moved here\n\n{apiVersion: networking.istio.io/v1, kind: VirtualService,\n metadata: {namespace: default, name: reviews},\n spec: {http: [{route: [{destination: {subset: v4, host: reviews}}]}], hosts: [reviews]}}\n"
	sidecars := "apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: a, namespace: default}\nspec: {egress: [{hosts: [\"./*\"]}]}\n---\napiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: b, namespace: default}\nspec: {egress: [{hosts: [\"*/*\"]}]}\n"
	dir = writeFiles(t, map[string]string{"rest.yaml": baselineRest, "z/vs.yaml": moved, "sidecars.yaml": sidecars})

	code, out, errOut := meshc(t, "", "lint", dir)
	if code != 1 || !strings.Contains(out, "MC4003") {
		t.Fatalf("without the baseline: exit %d\n%s", code, out)
	}
	code, out, errOut = meshc(t, "", "lint", dir, "--baseline", baseline)
	if code != 1 || strings.Contains(out, "MC4003") || !strings.Contains(out, "MC6001") || !strings.Contains(errOut, "1 finding of the baseline not shown") {
		t.Errorf("with the baseline: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// With both findings known, nothing is new: exit 0 although both
	// are errors.
	_, report, _ = meshc(t, "", "lint", dir, "-o", "json")
	if err := os.WriteFile(baseline, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = meshc(t, "", "lint", dir, "--baseline", baseline, "-o", "json")
	if code != 0 || !strings.Contains(out, `"diagnostics": []`) || !strings.Contains(errOut, "2 findings of the baseline not shown") {
		t.Errorf("all known: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	for _, tt := range []cliCase{
		{"missing baseline", []string{"lint", dir, "--baseline", filepath.Join(dir, "nope.json")}, 2, "", "--baseline: open"},
		{"not a report", []string{"lint", dir, "--baseline", filepath.Join(dir, "rest.yaml")}, 2, "", "not a meshc lint JSON report"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := meshc(t, "", tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}

// TestLintOnlyAndTiming: --only runs the analyzers of the codes named,
// and --timing reports each, and each stage, on stderr.
func TestLintOnlyAndTiming(t *testing.T) {
	sidecars := "apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: a, namespace: default}\nspec: {egress: [{hosts: [\"./*\"]}]}\n---\napiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: b, namespace: default}\nspec: {egress: [{hosts: [\"*/*\"]}]}\n"
	dir := writeFiles(t, map[string]string{"a.yaml": reviewsV4 + "---\n" + baselineRest, "sidecars.yaml": sidecars, "broken.yaml": "a: [b\n"})
	code, out, errOut := meshc(t, "", "lint", dir, "--only", "MultipleDefaultSidecars", "--timing")
	if code != 1 || !strings.Contains(out, "MC6001") || strings.Contains(out, "MC4003") || !strings.Contains(out, "MC1001") {
		t.Errorf("--only: exit %d\n%s", code, out)
	}
	if !strings.Contains(errOut, "MC6001 MultipleDefaultSidecars") || strings.Contains(errOut, "MC4003") || !strings.Contains(errOut, "total") || !strings.Contains(errOut, "stage load") || !strings.Contains(errOut, "stage analyze") {
		t.Errorf("--timing:\n%s", errOut)
	}
	if _, _, errOut := meshc(t, "", "lint", dir); strings.Contains(errOut, "timing") {
		t.Errorf("timing without --timing:\n%s", errOut)
	}
	for _, tt := range []cliCase{
		{"a loader code", []string{"lint", dir, "--only", "MC1001"}, 2, "", "--only: MC1001 InvalidYAML is not an analyzer's"},
		{"no such code", []string{"lint", dir, "--only", "MC4003,nope"}, 2, "", `--only: no diagnostic "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := meshc(t, "", tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}
