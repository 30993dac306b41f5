package hierarchy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
)

func role(ns, name string, meta ...string) string {
	m := ""
	if len(meta) > 0 {
		m = ", " + strings.Join(meta, ", ")
	}
	return fmt.Sprintf("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: %s, namespace: %s%s}\nrules: []\n", name, ns, m)
}

func hncConfig(resources ...string) string {
	return "apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [" + strings.Join(resources, ", ") + "]}\n"
}

// propagate loads docs, builds the forest and propagates.
func propagate(t *testing.T, opts PropagateOptions, docs ...string) ([]model.Object, []diag.Diagnostic) {
	t.Helper()
	objs, ds := load.Bytes("h.yaml", []byte(strings.Join(docs, "---\n")))
	for _, d := range ds {
		if d.Code != "MC1005" {
			t.Fatalf("load: %v", d)
		}
	}
	f, hds := NewForest(objs, Options{})
	eff, pds := Propagate(f, objs, opts)
	return eff, append(hds, pds...)
}

// inNs lists "name inh=src" (or "name") of kind objects in a namespace.
func inNs(objs []model.Object, kind, ns string) []string {
	var out []string
	for _, o := range objs {
		m := o.Meta()
		if m.Kind != kind || m.Namespace != ns {
			continue
		}
		s := m.Name
		if from, ok := m.Labels[LabelInheritedFrom]; ok {
			s += " inh=" + from
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func check(t *testing.T, objs []model.Object, kind, ns string, want ...string) {
	t.Helper()
	if got := inNs(objs, kind, ns); !slices.Equal(got, want) {
		t.Errorf("%s in %s = %q, want %q", kind, ns, got, want)
	}
}

func TestH25BasicCopy(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), nsDoc("baz"), hc("bar", "foo"), hc("baz", "bar"),
		role("foo", "foo-role"), role("bar", "bar-role"), role("baz", "baz-role"))
	check(t, eff, "Role", "bar", "bar-role", "foo-role inh=foo")
	check(t, eff, "Role", "baz", "bar-role inh=bar", "baz-role", "foo-role inh=foo")
	for _, o := range eff {
		m := o.Meta()
		if _, ok := m.Labels[LabelInheritedFrom]; ok {
			if m.Labels[labelManagedBy] != hncManager || m.InheritedFrom == nil || m.InheritedFrom.Namespace != m.Labels[LabelInheritedFrom] {
				t.Errorf("copy %s/%s: labels %v, source %v", m.Namespace, m.Name, m.Labels, m.InheritedFrom)
			}
		}
	}
}

func TestH26HierarchyChangeRemovesCopies(t *testing.T) {
	base := []string{nsDoc("foo"), nsDoc("bar"), nsDoc("baz"), hc("bar", "foo"), role("foo", "foo-role"), role("bar", "bar-role"),
		role("baz", "bar-role", `labels: {"hnc.x-k8s.io/inherited-from": bar}`)}
	eff, _ := propagate(t, PropagateOptions{}, append(base, hc("baz", "foo"))...)
	check(t, eff, "Role", "baz", "foo-role inh=foo")
	eff, _ = propagate(t, PropagateOptions{}, base...)
	check(t, eff, "Role", "baz")
}

func TestH27ModifiedCopyIsReset(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), role("foo", "foo-role"),
		role("bar", "foo-role", `labels: {"hnc.x-k8s.io/inherited-from": foo, modify: make-a-change}`))
	check(t, eff, "Role", "bar", "foo-role inh=foo")
	for _, o := range eff {
		if m := o.Meta(); m.Namespace == "bar" && m.Labels["modify"] != "" {
			t.Error("the modified label survived")
		}
	}
}

func TestH28SourceGone(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), nsDoc("baz"), hc("bar", "foo"), hc("baz", "bar"),
		role("bar", "foo-role", `labels: {"hnc.x-k8s.io/inherited-from": foo}`), role("baz", "foo-role", `labels: {"hnc.x-k8s.io/inherited-from": foo}`))
	check(t, eff, "Role", "bar")
	check(t, eff, "Role", "baz")
}

func TestH29AncestorOverwritesSameNamedSources(t *testing.T) {
	docs := []string{nsDoc("foo"), nsDoc("bar"), nsDoc("baz"), hc("bar", "foo"), hc("baz", "bar"), role("bar", "bar-role")}
	eff, ds := propagate(t, PropagateOptions{}, append(docs, role("foo", "bar-role"))...)
	check(t, eff, "Role", "bar", "bar-role inh=foo")
	check(t, eff, "Role", "baz", "bar-role inh=foo")
	if !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Code == "MC2003" && d.Object.Namespace == "bar" }) {
		t.Errorf("want MC2003 on bar/bar-role: %v", ds)
	}
	eff, ds = propagate(t, PropagateOptions{}, append(docs, role("foo", "bar-role", `annotations: {"propagate.hnc.x-k8s.io/treeSelect": "!bar"}`))...)
	check(t, eff, "Role", "bar", "bar-role")
	check(t, eff, "Role", "baz", "bar-role inh=bar")
	if slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Code == "MC2003" }) {
		t.Errorf("nothing is overwritten: %v", ds)
	}
}

func TestH30RootMostEligibleSource(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), nsDoc("baz"), hc("bar", "foo"), hc("baz", "bar"),
		role("foo", "baz-role", "finalizers: [example.com/foo]"), role("bar", "baz-role"), role("baz", "baz-role"))
	check(t, eff, "Role", "baz", "baz-role inh=bar")
	check(t, eff, "Role", "bar", "baz-role")
	check(t, eff, "Role", "foo", "baz-role")
}

func TestH31HaltedSubtreeIsFrozen(t *testing.T) {
	docs := []string{nsDoc("foo"), nsDoc("bar"), nsDoc("baz"), hc("foo", "brumpf"), hc("bar", "foo"), hc("baz", "foo"),
		role("foo", "foo-role"), role("foo", "foo-role-2"), role("baz", "bar-role", `labels: {"hnc.x-k8s.io/inherited-from": bar}`)}
	eff, ds := propagate(t, PropagateOptions{}, docs...)
	check(t, eff, "Role", "bar")
	check(t, eff, "Role", "baz", "bar-role inh=bar")
	frozen := slices.IndexFunc(ds, func(d diag.Diagnostic) bool {
		return d.Code == "MC2005" && strings.HasPrefix(d.Message, "propagation is frozen in foo")
	})
	if frozen < 0 || !strings.Contains(ds[frozen].Message, "Role baz/bar-role") || !strings.Contains(ds[frozen].Message, "Role foo/foo-role") {
		t.Errorf("want one PropagationFrozen warning on foo naming the kept copy and the blocked sources: %v", ds)
	}
	eff, _ = propagate(t, PropagateOptions{}, append(docs, nsDoc("brumpf"), role("brumpf", "brumpf-role"))...)
	check(t, eff, "Role", "foo", "brumpf-role inh=brumpf", "foo-role", "foo-role-2")
	check(t, eff, "Role", "bar", "brumpf-role inh=brumpf", "foo-role inh=foo", "foo-role-2 inh=foo")
	check(t, eff, "Role", "baz", "brumpf-role inh=brumpf", "foo-role inh=foo", "foo-role-2 inh=foo")
}

func TestH32ExceptionMatrix(t *testing.T) {
	T := func(ns string) string { return ns + TreeLabelSuffix }
	tests := []struct {
		id                   string
		sel, tree, none, all string
		want                 []string
		parseError           bool
	}{
		{"a", "!" + T("c1"), "", "", "", []string{"c2", "c3"}, false},
		{"b", "!" + T("c1") + ", !" + T("c2"), "", "", "", []string{"c3"}, false},
		{"c", "$foo", "", "", "", nil, true},
		{"d", "", "!c1", "", "", []string{"c2", "c3"}, false},
		{"e", "", "!c1, !c2", "", "", []string{"c3"}, false},
		{"f", "", "$foo", "", "", nil, true},
		{"g", "!" + T("c1"), "!c2", "", "", []string{"c3"}, false},
		{"h", T("c1"), "c2", "", "", nil, false},
		{"i", "", "", "true", "", nil, false},
		{"j", "", "", "false", "", []string{"c1", "c2", "c3"}, false},
		{"k", "", "", "$foo", "", nil, true},
		{"l", T("c1"), "c1, c2", "true", "", nil, true},
		{"m", "", "", "true", "all", nil, false},
		{"n", T("c1"), "c1, c2", "true", "true", nil, true},
		{"none", "", "", "", "", []string{"c1", "c2", "c3"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			var annos []string
			for k, v := range map[string]string{AnnotationSelect: tt.sel, AnnotationTreeSelect: tt.tree, AnnotationNone: tt.none, AnnotationAll: tt.all} {
				if v != "" {
					annos = append(annos, fmt.Sprintf("%q: %q", k, v))
				}
			}
			slices.Sort(annos)
			eff, ds := propagate(t, PropagateOptions{}, nsDoc("p"), nsDoc("c1"), nsDoc("c2"), nsDoc("c3"),
				hc("c1", "p"), hc("c2", "p"), hc("c3", "p"), role("p", "testrole", "annotations: {"+strings.Join(annos, ", ")+"}"))
			var got []string
			for _, ns := range []string{"c1", "c2", "c3"} {
				if len(inNs(eff, "Role", ns)) > 0 {
					got = append(got, ns)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("copies in %v, want %v", got, tt.want)
			}
			if has := slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Code == "MC2008" }); has != tt.parseError {
				t.Errorf("parse error reported %v, want %v: %v", has, tt.parseError, ds)
			}
		})
	}
}

func TestH33SelectOnOrdinaryLabels(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("p"), nsDoc("labeledchild", withLabels("propagate-label", "true")), nsDoc("nolabelchild"),
		hc("labeledchild", "p"), hc("nolabelchild", "p"), role("p", "testrole", `annotations: {"propagate.hnc.x-k8s.io/select": propagate-label}`))
	check(t, eff, "Role", "labeledchild", "testrole inh=p")
	check(t, eff, "Role", "nolabelchild")
}

func TestH34BuiltinExclusions(t *testing.T) {
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: foo}\n"
	}
	secret := func(name, typ string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: foo}\ntype: " + typ + "\n"
	}
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"),
		hncConfig("{resource: configmaps, mode: Propagate}", "{resource: secrets, mode: Propagate}"),
		cm("istio-ca-root-cert"), cm("kube-root-ca.crt"), cm("gets-propagated"),
		secret("s1", "Opaque"), secret("helm-secret", "helm.sh/release.v1"), secret("tok", "kubernetes.io/service-account-token"))
	check(t, eff, "ConfigMap", "bar", "gets-propagated inh=foo")
	check(t, eff, "Secret", "bar", "s1 inh=foo")
}

func TestH35NoPropagationLabels(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{NoPropagationLabels: []string{"cattle.io/creator=norman", "ignore-label=label"}},
		nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"),
		role("foo", "blocked", `labels: {cattle.io/creator: norman}`), role("foo", "blocked-2", `labels: {ignore-label: label}`),
		role("foo", "wrong-value", `labels: {cattle.io/creator: testme}`), role("foo", "something", `labels: {app: hello-world}`),
		role("foo", "blocked-all", `labels: {cattle.io/creator: norman}`, `annotations: {"propagate.hnc.x-k8s.io/all": "true"}`))
	check(t, eff, "Role", "bar", "something inh=foo", "wrong-value inh=foo")
}

func TestH36RemoveMode(t *testing.T) {
	secret := func(ns, name string, meta ...string) string {
		m := ""
		if len(meta) > 0 {
			m = ", " + meta[0]
		}
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: " + ns + m + "}\n"
	}
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hncConfig("{resource: secrets, mode: Remove}"),
		secret("foo", "bar-sec"), secret("bar", "bar-sec"), secret("bar", "foo-sec", `labels: {"hnc.x-k8s.io/inherited-from": foo}`))
	check(t, eff, "Secret", "bar", "bar-sec")
}

func TestH37AllowPropagate(t *testing.T) {
	for _, tt := range []struct {
		anno string
		want []string
	}{
		{"", nil},
		{`"propagate.hnc.x-k8s.io/treeSelect": bar`, []string{"foo-sec inh=foo"}},
		{`"propagate.hnc.x-k8s.io/select": bar.tree.hnc.x-k8s.io/depth`, []string{"foo-sec inh=foo"}},
		{`"propagate.hnc.x-k8s.io/all": "true"`, []string{"foo-sec inh=foo"}},
		{`"propagate.hnc.x-k8s.io/none": "true"`, nil},
	} {
		eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hncConfig("{resource: secrets, mode: AllowPropagate}"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: foo-sec, namespace: foo, annotations: {"+tt.anno+"}}\n")
		check(t, eff, "Secret", "bar", tt.want...)
	}
}

func TestH38UnlistedOrIgnoreType(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"),
		"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: foo-resource-quota, namespace: foo}\n")
	check(t, eff, "ResourceQuota", "bar")
	eff, _ = propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hncConfig("{resource: secrets, mode: Ignore}"),
		"apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: foo}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: old, namespace: bar, labels: {\"hnc.x-k8s.io/inherited-from\": foo}}\n")
	check(t, eff, "Secret", "bar", "old inh=foo")
}

func TestH39UnpropagatedKeys(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{UnpropagatedAnnotations: []string{"annot-a"}, UnpropagatedLabels: []string{"label-a"}},
		nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"),
		role("foo", "r", "annotations: {annot-a: xa, annot-b: yb}", "labels: {label-a: xa, label-b: yb}"))
	for _, o := range eff {
		m := o.Meta()
		if m.Namespace != "bar" || m.Kind != "Role" {
			continue
		}
		if _, ok := m.Annotations["annot-a"]; ok || m.Annotations["annot-b"] != "yb" || m.Labels["label-a"] != "" || m.Labels["label-b"] != "yb" || len(m.Labels) != 3 {
			t.Errorf("copy metadata: labels %v annotations %v", m.Labels, m.Annotations)
		}
	}
}

func TestH40EmptySourceObject(t *testing.T) {
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hncConfig("{resource: configmaps, mode: Propagate}"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: foo-config, namespace: foo}\n")
	check(t, eff, "ConfigMap", "bar", "foo-config inh=foo")
}

func TestH42QuickstartExceptions(t *testing.T) {
	for _, sel := range []string{"!team-b", "team-a"} {
		eff, _ := propagate(t, PropagateOptions{}, nsDoc("acme-org"), anchor("acme-org", "team-a"), anchor("acme-org", "team-b"),
			hncConfig("{resource: secrets, mode: Propagate}"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: my-secret, namespace: acme-org, annotations: {\"propagate.hnc.x-k8s.io/treeSelect\": \""+sel+"\"}}\n")
		check(t, eff, "Secret", "team-a", "my-secret inh=acme-org")
		check(t, eff, "Secret", "team-b")
	}
}

func TestH41CustomResource(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: eetests.e2e.hnc.x-k8s.io}
spec: {group: e2e.hnc.x-k8s.io, scope: Namespaced, names: {plural: eetests, singular: eetest, kind: EETest}}
`
	eff, ds := propagate(t, PropagateOptions{}, crd, nsDoc("parent"), anchor("parent", "child"),
		hncConfig("{group: e2e.hnc.x-k8s.io, resource: eetests, mode: Propagate}"),
		"apiVersion: e2e.hnc.x-k8s.io/v1\nkind: EETest\nmetadata: {name: eetest-sample, namespace: parent}\nspec: {foo: bar}\n")
	check(t, eff, "EETest", "child", "eetest-sample inh=parent")
	for _, o := range eff {
		if u, ok := o.(*model.Unknown); ok && u.Namespace == "child" {
			if spec, _ := u.Raw["spec"].(map[string]any); spec["foo"] != "bar" {
				t.Errorf("copy spec %v", u.Raw["spec"])
			}
		}
	}
	for _, d := range ds {
		if d.Code == "MC1003" {
			t.Errorf("the CRD should register the type: %v", d)
		}
	}
}

func hncMessages(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		if d.Code == "MC1003" {
			out = append(out, d.Message)
		}
	}
	return out
}

func TestH43EnforcedAndDuplicateTypes(t *testing.T) {
	for _, entry := range []string{
		"{group: rbac.authorization.k8s.io, resource: roles, mode: Ignore}",
		"{group: rbac.authorization.k8s.io, resource: role, mode: Ignore}",
		"{resource: roles, mode: Ignore}",
	} {
		eff, ds := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hncConfig(entry), role("foo", "r"))
		check(t, eff, "Role", "bar", "r inh=foo")
		if msgs := hncMessages(ds); len(msgs) != 1 || !strings.Contains(msgs[0], `"roles.rbac.authorization.k8s.io" is enforced`) {
			t.Errorf("%s: %v", entry, msgs)
		}
	}
	eff, ds := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"),
		hncConfig("{resource: secrets, mode: Propagate}", "{resource: secrets, mode: Remove}"),
		"apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: foo}\n")
	check(t, eff, "Secret", "bar", "s inh=foo")
	if msgs := hncMessages(ds); len(msgs) != 1 || !strings.Contains(msgs[0], `Multiple sync mode settings found for "secrets"; all but one ("Propagate") will be ignored`) {
		t.Errorf("%v", msgs)
	}
}

func TestH44BadTypes(t *testing.T) {
	_, ds := propagate(t, PropagateOptions{}, nsDoc("foo"), hncConfig("{group: wrong, resource: configmaps}", "{group: rbac.authorization.k8s.io, resource: clusterroles}"))
	msgs := hncMessages(ds)
	if len(msgs) != 2 || !strings.Contains(msgs[0], `"configmaps"`) || !strings.Contains(msgs[0], "ResourceNotFound") ||
		!strings.Contains(msgs[1], `resource "clusterroles.rbac.authorization.k8s.io" is not namespaced`) {
		t.Errorf("%q", msgs)
	}
	eff, _ := propagate(t, PropagateOptions{}, nsDoc("foo"), nsDoc("bar"), hc("bar", "foo"), hncConfig("{resource: configmaps, mode: ''}"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: foo}\n")
	check(t, eff, "ConfigMap", "bar", "c inh=foo")
}

func TestH45StatusCounts(t *testing.T) {
	lr := "apiVersion: v1\nkind: LimitRange\nmetadata: {name: foo-lr, namespace: foo}\n"
	counts := func(mode string, edge bool) *ResourceStatus {
		docs := []string{nsDoc("foo"), nsDoc("bar"), hncConfig("{resource: limitranges, mode: " + mode + "}"), lr}
		if edge {
			docs = append(docs, hc("bar", "foo"))
		}
		objs, _ := load.Bytes("h.yaml", []byte(strings.Join(docs, "---\n")))
		f, _ := NewForest(objs, Options{})
		eff, _ := Propagate(f, objs, PropagateOptions{})
		status := ConfigStatus(f, objs, eff)
		var b strings.Builder
		if err := WriteConfig(&b, status); err != nil {
			t.Fatal(err)
		}
		if mode == "Propagate" && !strings.HasPrefix(b.String(), "Synchronized resources:\n* Propagating: limitranges (/v1)\n* Propagating: rolebindings (rbac.authorization.k8s.io/v1)\n* Propagating: roles (rbac.authorization.k8s.io/v1)\n") {
			t.Errorf("config describe:\n%s", b.String())
		}
		for i := range status {
			if status[i].Resource == "limitranges" {
				return &status[i]
			}
		}
		t.Fatal("no limitranges status")
		return nil
	}
	intp := func(p *int) string {
		if p == nil {
			return "absent"
		}
		return fmt.Sprint(*p)
	}
	for _, tt := range []struct {
		mode             string
		edge             bool
		propagated, srcs string
	}{
		{"Propagate", true, "1", "1"},
		{"Remove", true, "0", "absent"},
		{"Propagate", false, "0", "1"},
	} {
		st := counts(tt.mode, tt.edge)
		if intp(st.NumPropagated) != tt.propagated || intp(st.NumSource) != tt.srcs {
			t.Errorf("%s edge=%v: propagated %s sources %s, want %s %s", tt.mode, tt.edge, intp(st.NumPropagated), intp(st.NumSource), tt.propagated, tt.srcs)
		}
	}
}

func TestH48DescribeWithAnchorStates(t *testing.T) {
	objs, _ := load.Bytes("h.yaml", []byte(strings.Join([]string{nsDoc("team-a"), nsDoc("other"), anchor("team-a", "service-1"), anchor("team-a", "other")}, "---\n")))
	f, _ := NewForest(objs, Options{})
	var b strings.Builder
	if err := WriteDescribe(&b, f, "team-a"); err != nil {
		t.Fatal(err)
	}
	want := `Hierarchy configuration for namespace team-a
  No parent
  Children:
  - other (Conflict subnamespace)
  - service-1 (subnamespace)
  Allows Cascading Deletion: false
  No conditions

No recent HNC events for objects in this namespace
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
