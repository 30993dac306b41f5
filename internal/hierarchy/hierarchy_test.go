package hierarchy

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/testfiles"
)

// Manifest builders in the notation of docs/semantics/hierarchy.md §6.
func nsDoc(name string, meta ...string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s%s}\n", name, strings.Join(meta, ""))
}

func withLabels(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%q: %q", kv[i], kv[i+1]))
	}
	return ", labels: {" + strings.Join(parts, ", ") + "}"
}

func withAnnotations(kv ...string) string {
	return strings.Replace(withLabels(kv...), "labels", "annotations", 1)
}

func hc(ns, parent string, extra ...string) string {
	spec := fmt.Sprintf("parent: %q", parent)
	if len(extra) > 0 {
		spec += ", " + strings.Join(extra, ", ")
	}
	return fmt.Sprintf("apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchyConfiguration\nmetadata: {name: hierarchy, namespace: %s}\nspec: {%s}\n", ns, spec)
}

func anchor(parent, child string, extra ...string) string {
	spec := ""
	if len(extra) > 0 {
		spec = "\nspec: {" + strings.Join(extra, ", ") + "}"
	}
	return fmt.Sprintf("apiVersion: hnc.x-k8s.io/v1alpha2\nkind: SubnamespaceAnchor\nmetadata: {name: %s, namespace: %s}%s\n", child, parent, spec)
}

func build(t *testing.T, opts Options, docs ...string) (*Forest, []diag.Diagnostic) {
	t.Helper()
	objs, ds := load.Bytes("h.yaml", []byte(strings.Join(docs, "---\n")))
	if len(ds) > 0 {
		t.Fatalf("load: %v", ds)
	}
	return NewForest(objs, opts)
}

// tree returns a namespace's tree labels as name → depth.
func tree(n *Namespace) map[string]string {
	out := map[string]string{}
	for k, v := range n.Labels {
		if strings.HasSuffix(k, TreeLabelSuffix) {
			out[strings.TrimSuffix(k, TreeLabelSuffix)] = v
		}
	}
	return out
}

func T(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func conds(n *Namespace) []string {
	var out []string
	for _, c := range n.Conditions {
		out = append(out, c.String())
	}
	return out
}

func checkTree(t *testing.T, f *Forest, ns string, want map[string]string) {
	t.Helper()
	if got := tree(f.Namespaces[ns]); !maps.Equal(got, want) {
		t.Errorf("%s tree labels %v, want %v", ns, got, want)
	}
}

func checkConds(t *testing.T, f *Forest, ns string, want ...string) {
	t.Helper()
	if got := conds(f.Namespaces[ns]); !slices.Equal(got, want) {
		t.Errorf("%s conditions %q, want %q", ns, got, want)
	}
}

func TestH01ChildSetOnParent(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("foo"), nsDoc("bar"), hc("foo", "bar"))
	if got := f.Namespaces["bar"].Children; !reflect.DeepEqual(got, []string{"foo"}) {
		t.Errorf("bar.children = %v", got)
	}
	checkTree(t, f, "foo", T("foo", "0", "bar", "1"))
	checkConds(t, f, "foo")
	if len(ds) > 0 {
		t.Errorf("diagnostics: %v", ds)
	}
}

func TestH02IllegalParent(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("bar"), hc("bar", "kube-system"))
	checkConds(t, f, "bar", `ActivitiesHalted (IllegalParent): Parent "kube-system" is an unmanaged namespace`)
	checkTree(t, f, "bar", T("bar", "0"))
	if len(ds) != 1 || ds[0].Code != "MC2002" {
		t.Errorf("diagnostics: %v", ds)
	}
}

func TestH03ParentMissing(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("bar"), hc("bar", "brumpf"))
	checkConds(t, f, "bar", `ActivitiesHalted (ParentMissing): Parent "brumpf" does not exist`)
	checkTree(t, f, "bar", T("bar", "0"))
}

func TestH04ParentMissingCleared(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("bar"), hc("bar", "brumpf"), nsDoc("brumpf"))
	checkConds(t, f, "bar")
	checkTree(t, f, "bar", T("bar", "0", "brumpf", "1"))
	if got := f.Namespaces["brumpf"].Children; !reflect.DeepEqual(got, []string{"bar"}) {
		t.Errorf("children %v", got)
	}
	if len(ds) > 0 {
		t.Errorf("diagnostics: %v", ds)
	}
}

func TestH05AncestorHaltActivities(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "brumpf"), hc("foo", "bar"))
	checkConds(t, f, "bar", `ActivitiesHalted (ParentMissing): Parent "brumpf" does not exist`)
	checkConds(t, f, "foo", `ActivitiesHalted (AncestorHaltActivities): Propagation paused in "foo" and its descendants due to ActivitiesHalted condition on ancestor "bar"`)
	checkTree(t, f, "foo", T("foo", "0", "bar", "1"))
	codes := mapCodes(ds)
	if !reflect.DeepEqual(codes, []string{"MC2002", "MC2005"}) {
		t.Errorf("codes %v", codes)
	}
	f, _ = build(t, Options{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "brumpf"), hc("foo", "bar"), nsDoc("brumpf"))
	checkConds(t, f, "foo")
	checkConds(t, f, "bar")
}

func mapCodes(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Code)
	}
	slices.Sort(out)
	return out
}

func TestH06SelfCycle(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("foo"), hc("foo", "foo"))
	checkConds(t, f, "foo", "ActivitiesHalted (InCycle): Namespace is a member of the cycle: foo <- foo")
	if !reflect.DeepEqual(mapCodes(ds), []string{"MC2001"}) {
		t.Errorf("codes %v", mapCodes(ds))
	}
}

func TestH07TwoCycle(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hc("foo", "bar"))
	for _, ns := range []string{"foo", "bar"} {
		checkConds(t, f, ns, "ActivitiesHalted (InCycle): Namespace is a member of the cycle: bar <- foo <- bar")
		checkTree(t, f, ns, T(ns, "0"))
	}
	f, _ = build(t, Options{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hc("foo", ""))
	checkConds(t, f, "foo")
	checkConds(t, f, "bar")
}

func TestH08CycleWithHangers(t *testing.T) {
	docs := []string{nsDoc("a"), nsDoc("b"), nsDoc("c"), nsDoc("d"), nsDoc("e"), nsDoc("f"),
		hc("b", "a"), hc("c", "a"), hc("d", "b"), hc("e", "b"), hc("f", "d")}
	f, _ := build(t, Options{}, append(docs, hc("a", "d"))...)
	for _, ns := range []string{"a", "b", "d"} {
		checkConds(t, f, ns, "ActivitiesHalted (InCycle): Namespace is a member of the cycle: a <- b <- d <- a")
		checkTree(t, f, ns, T(ns, "0"))
	}
	checkTree(t, f, "c", T("c", "0", "a", "1"))
	checkTree(t, f, "e", T("e", "0", "b", "1"))
	checkTree(t, f, "f", T("f", "0", "d", "1"))
	for ns, root := range map[string]string{"c": "a", "e": "b", "f": "d"} {
		checkConds(t, f, ns, fmt.Sprintf(`ActivitiesHalted (AncestorHaltActivities): Propagation paused in %q and its descendants due to ActivitiesHalted condition on ancestor %q`, ns, root))
	}
	f, _ = build(t, Options{}, docs...)
	checkTree(t, f, "f", T("f", "0", "d", "1", "b", "2", "a", "3"))
	checkTree(t, f, "d", T("d", "0", "b", "1", "a", "2"))
	checkTree(t, f, "e", T("e", "0", "b", "1", "a", "2"))
	checkTree(t, f, "c", T("c", "0", "a", "1"))
}

func TestH09LabelsFollowFinalParent(t *testing.T) {
	baz := nsDoc("baz", withLabels("key", "value", "bar"+TreeLabelSuffix, "1"))
	f, _ := build(t, Options{}, nsDoc("foo"), nsDoc("bar"), baz, hc("baz", "foo"))
	if f.Namespaces["baz"].Labels["key"] != "value" {
		t.Errorf("user label lost: %v", f.Namespaces["baz"].Labels)
	}
	checkTree(t, f, "baz", T("baz", "0", "foo", "1"))
	f, _ = build(t, Options{}, nsDoc("foo"), nsDoc("bar"), baz)
	checkTree(t, f, "baz", T("baz", "0"))
}

func TestH10ExternalTreeLabels(t *testing.T) {
	baz := nsDoc("baz", withLabels("ext2"+TreeLabelSuffix, "2", "ext1"+TreeLabelSuffix, "1"), withAnnotations(AnnotationManageBy, "others"))
	f, _ := build(t, Options{}, baz, nsDoc("bar"), hc("bar", "baz"))
	checkTree(t, f, "baz", T("ext2", "2", "ext1", "1", "baz", "0"))
	checkTree(t, f, "bar", T("ext2", "3", "ext1", "2", "baz", "1", "bar", "0"))
}

func TestH11ExternalToInternal(t *testing.T) {
	baz := nsDoc("baz", withLabels("ext2"+TreeLabelSuffix, "2", "ext1"+TreeLabelSuffix, "1"))
	f, _ := build(t, Options{}, baz, nsDoc("bar"), hc("bar", "baz"))
	checkTree(t, f, "baz", T("baz", "0"))
	checkTree(t, f, "bar", T("baz", "1", "bar", "0"))
}

func TestH12ExternalNamespaceHasNoParent(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("a"), nsDoc("c", withAnnotations(AnnotationManageBy, "external-tool")), hc("c", "a"))
	if f.Namespaces["c"].Parent != "" || len(f.Namespaces["a"].Children) != 0 {
		t.Errorf("external c has parent %q, a has children %v", f.Namespaces["c"].Parent, f.Namespaces["a"].Children)
	}
	checkConds(t, f, "c")
	if len(ds) != 1 || ds[0].Severity != diag.Warning {
		t.Errorf("want one warning, got %v", ds)
	}
}

func TestH13IncludedNamespaceLabel(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("kube-system", withLabels(LabelIncluded, "true", "other", "other")), nsDoc("bar", withLabels(LabelIncluded, "false")))
	if l := f.Namespaces["kube-system"].Labels; l[LabelIncluded] != "" || l["other"] != "other" {
		t.Errorf("kube-system labels %v", l)
	}
	if l := f.Namespaces["bar"].Labels; l[LabelIncluded] != "true" {
		t.Errorf("bar labels %v", l)
	}
}

func TestH14ManagedLabels(t *testing.T) {
	opts := Options{ManagedLabels: []string{"legal-.*"}}
	docs := []string{nsDoc("foo"), nsDoc("bar"),
		hc("foo", "", "labels: [{key: legal-label, value: val-1}, {key: unpropagated-label, value: not-allowed}]")}
	f, ds := build(t, opts, append(docs, hc("bar", "foo"))...)
	for _, ns := range []string{"foo", "bar"} {
		l := f.Namespaces[ns].Labels
		if l["legal-label"] != "val-1" || l["unpropagated-label"] != "" {
			t.Errorf("%s labels %v", ns, l)
		}
	}
	checkConds(t, f, "foo", "BadConfiguration (IllegalManagedLabel): Not a legal managed label (set via --managed-namespace-label): unpropagated-label")
	checkConds(t, f, "bar")
	if !reflect.DeepEqual(mapCodes(ds), []string{"MC2007"}) {
		t.Errorf("codes %v", mapCodes(ds))
	}
	f, _ = build(t, opts, append(docs, hc("bar", ""))...)
	if f.Namespaces["bar"].Labels["legal-label"] != "" {
		t.Error("a root must not get another root's managed label")
	}
}

func TestH15ManagedAnnotations(t *testing.T) {
	opts := Options{ManagedAnnotations: []string{"legal-.*"}}
	f, _ := build(t, opts, nsDoc("foo"), nsDoc("bar"),
		hc("foo", "", "annotations: [{key: legal-annotation, value: val-1}, {key: unpropagated-annotation, value: not-allowed}]"), hc("bar", "foo"))
	for _, ns := range []string{"foo", "bar"} {
		a := f.Namespaces[ns].Annotations
		if a["legal-annotation"] != "val-1" || a["unpropagated-annotation"] != "" {
			t.Errorf("%s annotations %v", ns, a)
		}
	}
	checkConds(t, f, "foo", "BadConfiguration (IllegalManagedAnnotation): Not a legal managed annotation (set via --managed-namespace-annotation): unpropagated-annotation")
}

func TestH16ManagedLabelStrippedAndAncestorWins(t *testing.T) {
	opts := Options{ManagedLabels: []string{"istio-injection"}}
	f, _ := build(t, opts,
		nsDoc("root", withLabels("istio-injection", "disabled")), hc("root", "", "labels: [{key: istio-injection, value: enabled}]"),
		nsDoc("mid", withLabels("istio-injection", "disabled")), hc("mid", "root", "labels: [{key: istio-injection, value: disabled}]"),
		nsDoc("leaf"), hc("leaf", "mid"))
	for _, ns := range []string{"root", "mid", "leaf"} {
		if got := f.Namespaces[ns].Labels["istio-injection"]; got != "enabled" {
			t.Errorf("%s istio-injection = %q, want enabled", ns, got)
		}
	}
}

func TestH17AnchorCreatesSubnamespace(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("foo"), anchor("foo", "bar"))
	bar := f.Namespaces["bar"]
	if !bar.Exists || !bar.Synthesized || !bar.IsSub || bar.Parent != "foo" || bar.Annotations[AnnotationSubOf] != "foo" {
		t.Errorf("bar = %+v", bar)
	}
	if !reflect.DeepEqual(f.Namespaces["foo"].Children, []string{"bar"}) {
		t.Errorf("foo children %v", f.Namespaces["foo"].Children)
	}
	checkTree(t, f, "bar", T("bar", "0", "foo", "1"))
	for a, st := range f.AnchorStates {
		if a.Name == "bar" && st != AnchorOk {
			t.Errorf("anchor state %s", st)
		}
	}
	if len(ds) > 0 {
		t.Errorf("diagnostics %v", ds)
	}
}

func anchorState(f *Forest, parent, child string) string {
	for a, st := range f.AnchorStates {
		if a.Namespace == parent && a.Name == child {
			return st
		}
	}
	return ""
}

func TestH18AnchorForbidden(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("foo"), anchor("foo", "kube-system"))
	if st := anchorState(f, "foo", "kube-system"); st != AnchorForbidden {
		t.Errorf("state %q", st)
	}
	if f.Namespaces["kube-system"].Parent != "" {
		t.Error("kube-system changed")
	}
}

func TestH19AnchorConflict(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("foo"), nsDoc("baz"), anchor("foo", "baz"))
	if st := anchorState(f, "foo", "baz"); st != AnchorConflict {
		t.Errorf("state %q", st)
	}
	if f.Namespaces["baz"].Parent != "" {
		t.Error("baz should stay a root")
	}
	if !reflect.DeepEqual(mapCodes(ds), []string{"MC2004"}) {
		t.Errorf("codes %v", mapCodes(ds))
	}
}

func TestH20AnnotationOverridesHCParent(t *testing.T) {
	f, ds := build(t, Options{}, nsDoc("foo"), anchor("foo", "bar"), hc("bar", "other", "allowCascadingDeletion: true"))
	bar := f.Namespaces["bar"]
	if bar.Parent != "foo" || !bar.HC.Spec.AllowCascadingDeletion {
		t.Errorf("bar parent %q", bar.Parent)
	}
	checkConds(t, f, "bar")
	if len(ds) > 0 {
		t.Errorf("no ParentMissing for the overridden parent: %v", ds)
	}
}

func TestH21AnchorLabelsReachSubnamespace(t *testing.T) {
	opts := Options{ManagedLabels: []string{"legal-.*"}}
	f, _ := build(t, opts, nsDoc("foo"),
		anchor("foo", "bar", "labels: [{key: legal-label, value: val-1}, {key: unpropagated-label, value: not-allowed}]"),
		anchor("bar", "baz"))
	for _, ns := range []string{"bar", "baz"} {
		if f.Namespaces[ns].Labels["legal-label"] != "val-1" {
			t.Errorf("%s labels %v", ns, f.Namespaces[ns].Labels)
		}
	}
	checkConds(t, f, "bar", "BadConfiguration (IllegalManagedLabel): Not a legal managed label (set via --managed-namespace-label): unpropagated-label")
	// Variant: bar declared without the annotation: the anchor conflicts
	// and bar's own HC labels apply.
	f, _ = build(t, opts, nsDoc("foo"), nsDoc("bar"),
		anchor("foo", "bar", "labels: [{key: legal-label, value: val-1}]"),
		hc("bar", "", "labels: [{key: legal-label, value: from-hc}]"))
	if st := anchorState(f, "foo", "bar"); st != AnchorConflict {
		t.Errorf("state %q", st)
	}
	if got := f.Namespaces["bar"].Labels["legal-label"]; got != "from-hc" {
		t.Errorf("legal-label %q", got)
	}
}

func TestH22SubnamespaceAnchorMissing(t *testing.T) {
	docs := []string{nsDoc("parent"), nsDoc("sub1", withAnnotations(AnnotationSubOf, "parent")), hc("sub1", "parent"), nsDoc("leaf"), hc("leaf", "sub1")}
	f, _ := build(t, Options{}, docs...)
	checkConds(t, f, "sub1", "BadConfiguration (SubnamespaceAnchorMissing): The anchor is missing in the parent namespace")
	checkConds(t, f, "leaf")
	if f.Namespaces["sub1"].Halted() {
		t.Error("a missing anchor must not halt")
	}
	f, _ = build(t, Options{}, append(docs, anchor("parent", "sub1"))...)
	checkConds(t, f, "sub1")
	if st := anchorState(f, "parent", "sub1"); st != AnchorOk {
		t.Errorf("state %q", st)
	}
}

func TestH23CompetingAnchors(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("parent"), nsDoc("parent-2"), nsDoc("child", withAnnotations(AnnotationSubOf, "parent")),
		anchor("parent", "child"), anchor("parent-2", "child"))
	if anchorState(f, "parent", "child") != AnchorOk || anchorState(f, "parent-2", "child") != AnchorConflict || f.Namespaces["child"].Parent != "parent" {
		t.Errorf("states %q %q, parent %q", anchorState(f, "parent", "child"), anchorState(f, "parent-2", "child"), f.Namespaces["child"].Parent)
	}
	f, ds := build(t, Options{}, nsDoc("parent"), nsDoc("parent-2"), anchor("parent-2", "child"), anchor("parent", "child"))
	if anchorState(f, "parent", "child") != AnchorOk || anchorState(f, "parent-2", "child") != AnchorConflict || f.Namespaces["child"].Parent != "parent" {
		t.Errorf("undeclared child: states %q %q", anchorState(f, "parent", "child"), anchorState(f, "parent-2", "child"))
	}
	if len(ds) == 0 {
		t.Error("competing anchors must be reported")
	}
}

func TestH24FullNamespaceUnderSubnamespace(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("team-a"), anchor("team-a", "service-2"), anchor("team-a", "service-4"), nsDoc("staging"), hc("staging", "service-4"))
	if f.Namespaces["staging"].Parent != "service-4" || len(f.Namespaces["staging"].Conditions) != 0 {
		t.Errorf("staging %+v", f.Namespaces["staging"])
	}
	f, _ = build(t, Options{}, nsDoc("team-a"), anchor("team-a", "service-2"), nsDoc("staging"), hc("staging", "service-4"))
	checkConds(t, f, "staging", `ActivitiesHalted (ParentMissing): Parent "service-4" does not exist`)
}

func TestH24TreeOutput(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("team-a"), anchor("team-a", "service-2"), anchor("team-a", "service-4"), nsDoc("staging"), hc("staging", "service-4"))
	var b strings.Builder
	if err := WriteTree(&b, f, TreeOptions{Roots: []string{"team-a"}}); err != nil {
		t.Fatal(err)
	}
	want := "team-a\n├── [s] service-2\n└── [s] service-4\n    └── staging\n\n[s] indicates subnamespaces\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestTreeAllWithConditions(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("a"), nsDoc("b"), nsDoc("c"), nsDoc("lost"), nsDoc("p"), nsDoc("q"),
		hc("b", "a"), hc("c", "b"), hc("lost", "gone"), hc("p", "q"), hc("q", "p"))
	for _, compat := range []bool{false, true} {
		var b strings.Builder
		if err := WriteTree(&b, f, TreeOptions{HNSCompat: compat}); err != nil {
			t.Fatal(err)
		}
		name := "tree-all.txt"
		if compat {
			name = "tree-all-hns.txt"
		}
		testfiles.Golden(t, filepath.Join("testdata", name), []byte(b.String()))
	}
}

func TestH46TreeWithCycle(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("a"), nsDoc("b"), nsDoc("c"), nsDoc("d"), nsDoc("e"), nsDoc("f"),
		hc("b", "a"), hc("c", "a"), hc("d", "b"), hc("e", "b"), hc("f", "d"), hc("a", "d"))
	var b strings.Builder
	if err := WriteTree(&b, f, TreeOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `a (1)
└── c (2)
b (1)
└── e (3)
d (1)
└── f (4)

Conditions:
1) ActivitiesHalted (InCycle): Namespace is a member of the cycle: a <- b <- d <- a
2) ActivitiesHalted (AncestorHaltActivities): Propagation paused in "c" and its descendants due to ActivitiesHalted condition on ancestor "a"
3) ActivitiesHalted (AncestorHaltActivities): Propagation paused in "e" and its descendants due to ActivitiesHalted condition on ancestor "b"
4) ActivitiesHalted (AncestorHaltActivities): Propagation paused in "f" and its descendants due to ActivitiesHalted condition on ancestor "d"
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestH47OrphansInTree(t *testing.T) {
	f, _ := build(t, Options{}, nsDoc("a"), nsDoc("b"), hc("b", "gone"))
	for compat, want := range map[bool]string{
		true:  "a\n\nConditions:\n1) ActivitiesHalted (ParentMissing): Parent \"gone\" does not exist\n",
		false: "a\nb (1)\n\nConditions:\n1) ActivitiesHalted (ParentMissing): Parent \"gone\" does not exist\n",
	} {
		var b strings.Builder
		if err := WriteTree(&b, f, TreeOptions{HNSCompat: compat}); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("compat %v: got\n%s\nwant\n%s", compat, b.String(), want)
		}
	}
}

func TestM05TKEProjectLabel(t *testing.T) {
	ns1 := nsDoc("ns1", withLabels(LabelTKEProject, "p1"))
	f, _ := build(t, Options{TKEProjects: true}, ns1, nsDoc("other"))
	checkTree(t, f, "ns1", T("ns1", "0", "p1", "1"))
	var b strings.Builder
	if err := WriteTree(&b, f, TreeOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "other\np1 (TKE project)\n└── ns1\n"; b.String() != want {
		t.Errorf("tree:\n%s\nwant\n%s", b.String(), want)
	}
	// Off by default.
	f, _ = build(t, Options{}, ns1)
	checkTree(t, f, "ns1", T("ns1", "0"))
	// With a home namespace the project's namespaces get it as parent, so
	// objects propagate.
	eff, _ := Propagate(mustBuild(t, Options{TKEProjects: true, TKEProjectHomes: map[string]string{"p1": "home"}}, ns1, nsDoc("home"), role("home", "r")))
	check(t, eff, "Role", "ns1", "r inh=home")
}

func mustBuild(t *testing.T, opts Options, docs ...string) (*Forest, []model.Object, PropagateOptions) {
	t.Helper()
	objs, ds := load.Bytes("h.yaml", []byte(strings.Join(docs, "---\n")))
	for _, d := range ds {
		if d.Code != "MC1005" {
			t.Fatal(d)
		}
	}
	f, _ := NewForest(objs, opts)
	return f, objs, PropagateOptions{}
}

// TestByID: objects come out by identity, those sharing one (nameless
// objects) in input order, and the input is left as it was.
func TestByID(t *testing.T) {
	obj := func(kind, ns, name, note string) model.Object {
		return &model.Unknown{ObjectMeta: model.ObjectMeta{APIVersion: "v1", Kind: kind, Namespace: ns, Name: name, Annotations: map[string]string{"n": note}}}
	}
	in := []model.Object{
		obj("Service", "b", "web", "1"),
		obj("Operator", "", "", "first nameless"),
		obj("Service", "a", "web", "2"),
		obj("ConfigMap", "a", "x", "3"),
		obj("Operator", "", "", "second nameless"),
	}
	before := slices.Clone(in)
	var got []string
	for _, o := range byID(in) {
		got = append(got, o.Meta().Annotations["n"])
	}
	want := []string{"3", "first nameless", "second nameless", "2", "1"}
	if !slices.Equal(got, want) {
		t.Errorf("byID order = %q, want %q", got, want)
	}
	if !slices.Equal(in, before) {
		t.Error("byID reordered its input")
	}
}
