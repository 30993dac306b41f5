package diag

import (
	"regexp"
	"strings"
	"testing"
)

func TestKeys(t *testing.T) {
	e := &Entry{Code: "MC9999", Name: "Test", Severity: Warning}
	subset := e.Template("%s routes to subset %q of %s on port %d (%s)", W("route"), W("subset").ID(), W("host").ID(), N("port").ID(), T("why"))
	whole := e.Template("%s is wrong", W("object"))
	reason := e.Template("%s: %s", W("field").ID(), T("problem").ID())
	perKind := e.Template("no model for %s (%d objects)", W("kind").ID(), N("count")).WithoutSubject()
	vs := ObjectRef{Kind: "VirtualService", Namespace: "shop", Name: "reviews", File: "a.yaml", Line: 3}
	moved := ObjectRef{Kind: "VirtualService", Namespace: "shop", Name: "reviews", File: "b/c.yaml", Line: 40}
	tests := []struct {
		name, key, msg string
		d              Diagnostic
	}{
		{"identifying args", "MC9999/VirtualService/shop/reviews/subset=v4/host=reviews.shop.svc.cluster.local/port=9080",
			`shop/reviews routes to subset "v4" of reviews.shop.svc.cluster.local on port 9080 (no rule)`,
			subset.At(vs, "shop/reviews", "v4", "reviews.shop.svc.cluster.local", 9080, "no rule")},
		{"the file and line are no part", "MC9999/VirtualService/shop/reviews/subset=v4/host=reviews.shop.svc.cluster.local/port=9080",
			`shop/reviews routes to subset "v4" of reviews.shop.svc.cluster.local on port 9080 (another reason)`,
			subset.At(moved, "shop/reviews", "v4", "reviews.shop.svc.cluster.local", 9080, "another reason")},
		{"no identifying args", "MC9999/VirtualService/shop/reviews", "shop/reviews is wrong", whole.At(vs, "shop/reviews")},
		{"keyed at the site", "MC9999/VirtualService/shop/reviews/field=spec.hosts", "shop/reviews is wrong",
			whole.At(vs, "shop/reviews").Keyed(Part("field", "spec.hosts"))},
		{"text digest", "MC9999/VirtualService/shop/reviews/field=spec.hosts[0]/problem=" + TextPart("problem", "a long reason")[len("problem="):],
			"spec.hosts[0]: a long reason", reason.At(vs, "spec.hosts[0]", "a long reason")},
		{"cluster-scoped", "MC9999/Namespace/team-a", "team-a is wrong", whole.At(ObjectRef{Kind: "Namespace", Name: "team-a"}, "team-a")},
		{"a file", "MC9999/file=dir/x.yaml/doc=2", "x is wrong", whole.At(ObjectRef{File: "dir/x.yaml", Line: 9}, "x").Keyed(Part("doc", "2"))},
		{"a kind without a name", "MC9999/ConfigMap/file=mesh.yaml", "m is wrong", whole.At(ObjectRef{Kind: "ConfigMap", File: "mesh.yaml"}, "m")},
		{"without a subject", "MC9999/kind=Secret", "no model for Secret (2 objects)",
			perKind.At(ObjectRef{Kind: "Secret", Namespace: "shop", Name: "first"}, "Secret", 2)},
		{"formatted at the site", "MC9999/VirtualService/shop/reviews", "free text 3", e.At(vs, "free text %d", 3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.d.Key != tt.key {
				t.Errorf("key %q, want %q", tt.d.Key, tt.key)
			}
			if tt.d.Message != tt.msg {
				t.Errorf("message %q, want %q", tt.d.Message, tt.msg)
			}
			if tt.d.Code != "MC9999" || tt.d.Name != "Test" || tt.d.Severity != Warning {
				t.Errorf("entry fields %+v", tt.d)
			}
		})
	}
	if got, want := subset.Pattern(), `{route} routes to subset "{subset}" of {host} on port {port} ({why})`; got != want {
		t.Errorf("Pattern = %q, want %q", got, want)
	}
	if got, want := e.Template("%[2]s before %[1]d, 100%%", N("a"), W("b")).Pattern(), "{b} before {a}, 100%"; got != want {
		t.Errorf("Pattern = %q, want %q", got, want)
	}
	if got := TextPart("p", "a"); got == TextPart("p", "b") || !regexp.MustCompile(`^p=[0-9a-f]{8}$`).MatchString(got) {
		t.Errorf("TextPart = %q", got)
	}
	if len(e.Messages) != 5 || e.Messages[0] != subset || subset.KeysByField() || !whole.KeysByField() || !subset.Fielded().KeysByField() {
		t.Errorf("the entry does not hold its templates: %v", e.Messages)
	}
}

// TestBadArgsShow: a report site passing the wrong arguments is visible in
// the text, as fmt shows a bad verb.
func TestBadArgsShow(t *testing.T) {
	e := &Entry{Code: "MC9999"}
	m := e.Template("%s on %d", W("host"), N("port"))
	for _, args := range [][]any{{"h", "80"}, {"h"}, {"h", 80, 1}} {
		if got := m.At(ObjectRef{}, args...).Message; !strings.Contains(got, "%!(BADARGS") {
			t.Errorf("%v: %q", args, got)
		}
	}
	if got := m.At(ObjectRef{}, "h", 80).Message; got != "h on 80" {
		t.Errorf("good args: %q", got)
	}
}

func TestWithKeyFile(t *testing.T) {
	e := &Entry{Code: "MC9999"}
	file := e.At(ObjectRef{File: "/abs/m/x.yaml", Line: 3}, "bad").Keyed(Part("doc", "2"))
	if got := file.WithKeyFile("x.yaml").Key; got != "MC9999/file=x.yaml/doc=2" {
		t.Errorf("a file's finding: %q", got)
	}
	kind := e.At(ObjectRef{Kind: "Service", File: "/abs/m/x.yaml"}, "bad")
	if got := kind.WithKeyFile("x.yaml").Key; got != "MC9999/Service/file=x.yaml" {
		t.Errorf("a kind's finding: %q", got)
	}
	obj := e.At(ObjectRef{Kind: "Service", Namespace: "a", Name: "b", File: "/abs/m/x.yaml"}, "bad")
	if got := obj.WithKeyFile("x.yaml").Key; got != "MC9999/Service/a/b" {
		t.Errorf("an object's finding: %q", got)
	}
}
