package meshdiff

import (
	"context"
	"fmt"
	"strings"
	"testing"

	networking "istio.io/api/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/envdiff"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/testfiles"
)

func TestCompareFindings(t *testing.T) {
	// The message stands for the finding's discriminator, which its key
	// carries as diag's keys do.
	at := func(code, name, msg, file string, line int) diag.Diagnostic {
		return diag.Diagnostic{Code: code, Message: msg, Key: code + "/VirtualService/shop/" + name + "/" + msg,
			Object: diag.ObjectRef{Kind: "VirtualService", Namespace: "shop", Name: name, File: file, Line: line}}
	}
	a := at("MC1", "web", "m", "a.yaml", 3)
	tests := []struct {
		name                  string
		base, head            []diag.Diagnostic
		wantNew, wantFixed    int
		wantUnchanged         int
		wantNewFile, fixedMsg string
	}{
		{"moved to another file and line is unchanged", []diag.Diagnostic{a}, []diag.Diagnostic{at("MC1", "web", "m", "b.yaml", 40)}, 0, 0, 1, "", ""},
		{"another discriminator is new and fixed", []diag.Diagnostic{a}, []diag.Diagnostic{at("MC1", "web", "other", "a.yaml", 3)}, 1, 1, 0, "a.yaml", "m"},
		{"another subject", []diag.Diagnostic{a}, []diag.Diagnostic{at("MC1", "api", "m", "a.yaml", 3)}, 1, 1, 0, "a.yaml", "m"},
		{"another code", []diag.Diagnostic{a}, []diag.Diagnostic{at("MC2", "web", "m", "a.yaml", 3)}, 1, 1, 0, "a.yaml", "m"},
		{"a repeat is one new", []diag.Diagnostic{a}, []diag.Diagnostic{a, at("MC1", "web", "m", "c.yaml", 9)}, 1, 0, 1, "c.yaml", ""},
		{"one of two fixed", []diag.Diagnostic{a, a}, []diag.Diagnostic{a}, 0, 1, 1, "", "m"},
		{"none", nil, nil, 0, 0, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compareFindings(tt.base, tt.head)
			if len(f.New) != tt.wantNew || len(f.Fixed) != tt.wantFixed || f.Unchanged != tt.wantUnchanged {
				t.Fatalf("new %d fixed %d unchanged %d, want %d %d %d", len(f.New), len(f.Fixed), f.Unchanged, tt.wantNew, tt.wantFixed, tt.wantUnchanged)
			}
			if tt.wantNew > 0 && f.New[0].Object.File != tt.wantNewFile {
				t.Errorf("new in %s, want %s", f.New[0].Object.File, tt.wantNewFile)
			}
			if tt.wantFixed > 0 && f.Fixed[0].Message != tt.fixedMsg {
				t.Errorf("fixed %q, want %q", f.Fixed[0].Message, tt.fixedMsg)
			}
		})
	}
}

func TestJSONDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want []string
	}{
		{"equal", map[string]any{"x": 1.0}, map[string]any{"x": 1.0}, nil},
		{"scalar", map[string]any{"x": 1.0}, map[string]any{"x": 2.0}, []string{"~ x: 1 → 2"}},
		{"added and removed keys", map[string]any{"x": "a"}, map[string]any{"y": []any{"b"}}, []string{"- x: a", `+ y: ["b"]`}},
		{"nested list by position", map[string]any{"ports": []any{map[string]any{"port": 80.0}}},
			map[string]any{"ports": []any{map[string]any{"port": 81.0}, map[string]any{"port": 82.0}}},
			[]string{"~ ports[0].port: 80 → 81", `+ ports[1]: {"port":82}`}},
		{"keys with dots are bracketed", map[string]any{"app.kubernetes.io/name": "a"}, map[string]any{"app.kubernetes.io/name": "b"},
			[]string{"~ [app.kubernetes.io/name]: a → b"}},
		{"type change", map[string]any{"x": map[string]any{}}, map[string]any{"x": "s"}, []string{"~ x: {} → s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fs []Field
			jsonDiff("", tt.a, tt.b, &fs)
			var got []string
			for _, f := range fs {
				got = append(got, envdiff.Line(f.Kind, f.Path, f.Old, f.New))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestObjectFields: two versions of an object differ in their labels,
// annotations and content, never in where they are written; the quick
// look at unchanged content (sameContent) agrees with the full one.
func TestObjectFields(t *testing.T) {
	workload := func(file string, seq int, labels map[string]string, image string) model.Object {
		return &model.Workload{
			ObjectMeta: model.ObjectMeta{Kind: "Deployment", Namespace: "shop", Name: "cart", Labels: labels, Source: model.Source{File: file, Line: seq}, Seq: seq},
			Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cart", Image: image}}}},
		}
	}
	vs := func(seq int, host string) model.Object {
		return &model.VirtualService{ObjectMeta: model.ObjectMeta{Kind: "VirtualService", Name: "cart", Seq: seq},
			Spec: &networking.VirtualService{Hosts: []string{host}}}
	}
	unknown := func(seq int, v any) model.Object {
		return &model.Unknown{ObjectMeta: model.ObjectMeta{Kind: "Widget", Name: "w", Seq: seq}, Raw: map[string]any{"spec": map[string]any{"size": v}}}
	}
	app := map[string]string{"app": "cart"}
	tests := []struct {
		name string
		a, b model.Object
		// same is whether the content beyond metadata is the same.
		same bool
		want []string
	}{
		{"moved to another file", workload("a.yaml", 1, app, "cart:1"), workload("b.yaml", 7, app, "cart:1"), true, nil},
		{"an image", workload("a.yaml", 1, app, "cart:1"), workload("a.yaml", 1, app, "cart:2"), false,
			[]string{"~ template.spec.containers[0].image: cart:1 → cart:2"}},
		{"a label", workload("a.yaml", 1, app, "cart:1"), workload("a.yaml", 1, map[string]string{"app": "cart", "v": "2"}, "cart:1"), true,
			[]string{"+ metadata.labels.v: 2"}},
		{"a spec moved", vs(1, "cart"), vs(2, "cart"), true, nil},
		{"a spec", vs(1, "cart"), vs(1, "shop"), false, []string{"~ spec.hosts: [cart] → [shop]"}},
		{"an unmodelled kind moved", unknown(1, 3.0), unknown(2, 3.0), true, nil},
		{"an unmodelled kind", unknown(1, 3.0), unknown(1, 4.0), false, []string{"~ spec.size: 3 → 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range objectFields(tt.a, tt.b) {
				got = append(got, envdiff.Line(f.Kind, f.Path, f.Old, f.New))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if same := sameContent(tt.a, tt.b); same != tt.same {
				t.Errorf("same content %v, want %v", same, tt.same)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	for ids, want := range map[string]string{
		"a/x":         "1 proxy in 1 namespace",
		"a/x,a/y":     "2 proxies in 1 namespace",
		"a/x,b/y,c/z": "3 proxies in 3 namespaces",
	} {
		if got := describe(strings.Split(ids, ",")); got != want {
			t.Errorf("%s: %q, want %q", ids, got, want)
		}
	}
}

const (
	shopNS = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n"
	webSvc = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{port: 80, name: http}]}\n"
	webPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: 10.1.0.9}\n"
	apiPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: api-1, namespace: shop, labels: {app: api}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: 10.1.0.10}\n"
	dbPod  = "apiVersion: v1\nkind: Pod\nmetadata: {name: db-1, namespace: shop, labels: {app: db}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: 10.1.0.11}\n"
)

func compileFiles(t *testing.T, files map[string]string) *compile.Result {
	t.Helper()
	r, err := compile.Run(context.Background(), compile.Inputs{Paths: []string{testfiles.Write(t, files)}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCompare covers proxies added, removed and changed, batched one
// scope at a time, and an object modified in a non-Istio field.
func TestCompare(t *testing.T) {
	base := compileFiles(t, map[string]string{"a.yaml": shopNS + "---\n" + webSvc + "---\n" + webPod + "---\n" + apiPod})
	head := compileFiles(t, map[string]string{"b.yaml": shopNS + "---\n" + strings.Replace(webSvc, "port: 80", "port: 8080", 1) + "---\n" + webPod + "---\n" + dbPod})
	for _, batch := range []int{0, 1} {
		r, err := Compare(context.Background(), Side{Result: base}, Side{Result: head, File: func(f string) string { return "HEAD:" + f[strings.LastIndex(f, "/")+1:] }}, Options{Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Summary.Proxies; got != (ProxyCounts{Compared: 1, Changed: 1, Added: 1, Removed: 1}) {
			t.Errorf("batch %d: proxies %+v", batch, got)
		}
		var mod *Object
		for i, o := range r.Objects {
			if o.Status == StatusModified {
				mod = &r.Objects[i]
			}
		}
		if mod == nil || mod.Kind != "Service" || mod.Head.File != "HEAD:b.yaml" || len(mod.Fields) != 1 || mod.Fields[0].Path != "spec.ports[0].port" {
			t.Errorf("batch %d: modified object %+v", batch, mod)
		}
		var statuses []string
		for _, g := range r.Proxies {
			statuses = append(statuses, g.Status+" "+strings.Join(g.Proxies, ","))
		}
		if got := strings.Join(statuses, "; "); got != "changed shop/web-1; added shop/db-1; removed shop/api-1" {
			t.Errorf("batch %d: groups %s", batch, got)
		}
	}
}

func TestCausesAmong(t *testing.T) {
	meta := func(kind, ns, name string) *model.ObjectMeta {
		return &model.ObjectMeta{APIVersion: "networking.istio.io/v1", Kind: kind, Namespace: ns, Name: name}
	}
	vs, dr, sc := meta("VirtualService", "shop", "web"), meta("DestinationRule", "shop", "web"), meta("Sidecar", "team", "default")
	copyOf := meta("Sidecar", "team-a", "default")
	copyOf.InheritedFrom = sc
	changed := map[model.ID]string{vs.ID(): StatusModified, sc.ID(): StatusAdded}
	got := causesAmong([]related{
		{dr, "DestinationRule for web"}, // unchanged: no cause
		{vs, "VirtualService for web"},
		{vs, "VirtualService that lost web"}, // once, first role
		{copyOf, "Sidecar of the proxies"},   // stands for its source
		{nil, "a proxy without a workload"},
	}, changed)
	var lines []string
	for _, c := range got {
		lines = append(lines, c.Status+" "+c.String())
	}
	want := "added Sidecar team/default (Sidecar of the proxies, through its copy in team-a)\n" +
		"modified VirtualService shop/web (VirtualService for web)"
	if g := strings.Join(lines, "\n"); g != want {
		t.Errorf("got\n%s\nwant\n%s", g, want)
	}
}

// TestMarkdownLimit: a report too large for one comment keeps under the
// limit, says what it left out, and still closes its sections.
func TestMarkdownLimit(t *testing.T) {
	r := &Report{}
	for i := range 2000 {
		id := fmt.Sprintf("ns-%04d/p", i)
		r.Proxies = append(r.Proxies, ProxyGroup{Status: StatusChanged, Proxies: []string{id}, Summary: "1 proxy in 1 namespace",
			Changes: []Change{{Kind: envdiff.Changed, Type: "route", Resource: "80", Path: fmt.Sprintf("h%d.shop.svc.cluster.local:80 › route[0] › route.timeout", i), Old: "5s", New: "6s"}}})
	}
	r.Summary.Proxies.Changed = 2000
	for _, limit := range []int{8000, CommentLimit} {
		var b strings.Builder
		if err := r.writeMarkdown(&b, limit); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if len(out) > limit {
			t.Errorf("limit %d: %d characters", limit, len(out))
		}
		if !strings.Contains(out, "more proxy groups left out") || !strings.HasSuffix(out, "</details>\n") {
			t.Errorf("limit %d: no note or unclosed:\n%s", limit, out[len(out)-300:])
		}
		if !strings.Contains(out, "first 8 changed groups; 1992 more") {
			t.Errorf("limit %d: the picture does not say what it left out", limit)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"a|b":        `a\|b`,
		"<script>":   "&lt;script&gt;",
		"*x* _y_ #z": `\*x\* \_y\_ \#z`,
		"`code`":     "\\`code\\`",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := mermaidText(`say "hi" <b>`); got != "say #quot;hi#quot; #lt;b#gt;" {
		t.Errorf("mermaidText: %q", got)
	}
}
