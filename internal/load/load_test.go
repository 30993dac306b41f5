package load

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/testfiles"
)

// want describes one loaded object: Go type, identity and line.
type want struct {
	typ  string // e.g. "*model.Service"
	id   string // model.ID.String()
	line int
}

func describeObjects(objs []model.Object) []want {
	var out []want
	for _, o := range objs {
		out = append(out, want{reflect.TypeOf(o).String(), o.Meta().ID().String(), o.Meta().Source.Line})
	}
	return out
}

// diagKey is what a test checks of a diagnostic: code, line and a message
// fragment.
type diagKey struct {
	code string
	line int
	msg  string
}

func checkDiags(t *testing.T, got []diag.Diagnostic, want []diagKey) {
	t.Helper()
	diag.Sort(got)
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(got), len(want), dump(got))
	}
	for i, w := range want {
		g := got[i]
		if g.Code != w.code || g.Object.Line != w.line || !strings.Contains(g.Message, w.msg) {
			t.Errorf("diagnostic %d = %s:%d %s %q, want %s line %d containing %q", i, g.Object.File, g.Object.Line, g.Code, g.Message, w.code, w.line, w.msg)
		}
	}
}

func dump(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "  %s:%d %s %s\n", d.Object.File, d.Object.Line, d.Code, d.Message)
	}
	return b.String()
}

func TestLoadKinds(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []want
	}{
		{"namespace", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  namespace: ignored\n",
			[]want{{"*model.Namespace", "Namespace shop", 1}}},
		{"service defaults to namespace default", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80, name: http}]}\n",
			[]want{{"*model.Service", "Service default/web", 1}}},
		{"pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec: {containers: [{name: c, image: x}]}\nstatus: {podIP: 10.0.0.1}\n",
			[]want{{"*model.Pod", "Pod shop/p", 1}}},
		{"configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio, namespace: istio-system}\ndata: {mesh: 'rootNamespace: x'}\n",
			[]want{{"*model.ConfigMap", "ConfigMap istio-system/istio", 1}}},
		{"deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec: {containers: [{name: c, image: x}]}\n",
			[]want{{"*model.Workload", "Deployment.apps default/d", 1}}},
		{"statefulset", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\n", []want{{"*model.Workload", "StatefulSet.apps default/s", 1}}},
		{"daemonset", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: s}\n", []want{{"*model.Workload", "DaemonSet.apps default/s", 1}}},
		{"replicaset", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: s}\n", []want{{"*model.Workload", "ReplicaSet.apps default/s", 1}}},
		{"job", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\n", []want{{"*model.Workload", "Job.batch default/s", 1}}},
		{"virtualservice v1", "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r}\nspec: {hosts: [r], http: [{route: [{destination: {host: r}}], timeout: 2s}]}\n",
			[]want{{"*model.Config[*istio.io/api/networking/v1alpha3.VirtualService]", "VirtualService.networking.istio.io default/r", 1}}},
		{"destinationrule v1beta1", "apiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: r}\nspec: {host: r, trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}\n",
			[]want{{"*model.Config[*istio.io/api/networking/v1alpha3.DestinationRule]", "DestinationRule.networking.istio.io default/r", 1}}},
		{"gateway v1alpha3", "apiVersion: networking.istio.io/v1alpha3\nkind: Gateway\nmetadata: {name: g}\nspec: {selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}\n",
			[]want{{"*model.Config[*istio.io/api/networking/v1alpha3.Gateway]", "Gateway.networking.istio.io default/g", 1}}},
		{"serviceentry", "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: e}\nspec: {hosts: [a.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}\n",
			[]want{{"*model.Config[*istio.io/api/networking/v1alpha3.ServiceEntry]", "ServiceEntry.networking.istio.io default/e", 1}}},
		{"sidecar", "apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: shop}\nspec: {egress: [{hosts: ['./*', 'istio-system/*']}]}\n",
			[]want{{"*model.Config[*istio.io/api/networking/v1alpha3.Sidecar]", "Sidecar.networking.istio.io shop/default", 1}}},
		{"workloadentry", "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: vm}\nspec: {address: 10.1.1.1, labels: {app: vm}}\n",
			[]want{{"*model.Config[*istio.io/api/networking/v1alpha3.WorkloadEntry]", "WorkloadEntry.networking.istio.io default/vm", 1}}},
		{"peerauthentication", "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default}\nspec: {mtls: {mode: STRICT}}\n",
			[]want{{"*model.Config[*istio.io/api/security/v1beta1.PeerAuthentication]", "PeerAuthentication.security.istio.io default/default", 1}}},
		{"authorizationpolicy", "apiVersion: security.istio.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: deny}\nspec: {action: DENY, rules: [{from: [{source: {namespaces: [x]}}]}]}\n",
			[]want{{"*model.Config[*istio.io/api/security/v1beta1.AuthorizationPolicy]", "AuthorizationPolicy.security.istio.io default/deny", 1}}},
		{"hierarchyconfiguration", "apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchyConfiguration\nmetadata: {name: hierarchy, namespace: team-a}\nspec: {parent: org, labels: [{key: k, value: v}]}\n",
			[]want{{"*model.HierarchyConfiguration", "HierarchyConfiguration.hnc.x-k8s.io team-a/hierarchy", 1}}},
		{"subnamespaceanchor", "apiVersion: hnc.x-k8s.io/v1alpha2\nkind: SubnamespaceAnchor\nmetadata: {name: team-b, namespace: org}\n",
			[]want{{"*model.SubnamespaceAnchor", "SubnamespaceAnchor.hnc.x-k8s.io org/team-b", 1}}},
		{"hncconfiguration", "apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec: {resources: [{resource: sidecars, group: networking.istio.io, mode: Propagate}]}\n",
			[]want{{"*model.HNCConfiguration", "HNCConfiguration.hnc.x-k8s.io config", 1}}},
		{"cluster-scoped kind known by name drops a namespace", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: 'system:x', namespace: shop}\n",
			[]want{{"*model.Unknown", "ClusterRole.rbac.authorization.k8s.io system:x", 1}}},
		{"namespaced kind known by name defaults to namespace default", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n",
			[]want{{"*model.Unknown", "Ingress.networking.k8s.io default/web", 1}}},
		{"unknown kind kept without namespace defaulting", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
			[]want{{"*model.Unknown", "Widget.example.com w", 1}}},
		{"multi-document with comments and markers",
			"# leading comment\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n--- # a comment after the marker\n\n# comment\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n...\n---\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n",
			[]want{{"*model.Namespace", "Namespace a", 3}, {"*model.Namespace", "Namespace b", 9}, {"*model.Namespace", "Namespace c", 15}}},
		{"marker with content", "--- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n--- {apiVersion: v1, kind: Namespace, metadata: {name: b}}\n",
			[]want{{"*model.Namespace", "Namespace a", 1}, {"*model.Namespace", "Namespace b", 2}}},
		{"crlf line endings", "apiVersion: v1\r\nkind: Namespace\r\nmetadata:\r\n  name: a\r\n---\r\napiVersion: v1\r\nkind: Namespace\r\nmetadata:\r\n  name: b\r\n",
			[]want{{"*model.Namespace", "Namespace a", 1}, {"*model.Namespace", "Namespace b", 6}}},
		{"list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: a}\n-\n  apiVersion: v1\n  kind: Namespace\n  metadata: {name: b}\n",
			[]want{{"*model.Namespace", "Namespace a", 4}, {"*model.Namespace", "Namespace b", 8}}},
		{"typed list infers kind and apiVersion", "apiVersion: v1\nkind: ServiceList\nitems:\n- metadata: {name: a, namespace: x}\n- metadata: {name: b, namespace: x}\n",
			[]want{{"*model.Service", "Service x/a", 4}, {"*model.Service", "Service x/b", 5}}},
		{"json document", "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Namespace\",\n  \"metadata\": {\"name\": \"j\"}\n}\n",
			[]want{{"*model.Namespace", "Namespace j", 1}}},
		{"yaml 1.1 booleans as kubectl reads them", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: 'yes'}\n",
			[]want{{"*model.ConfigMap", "ConfigMap default/c", 1}}},
		{"empty documents", "---\n---\n# nothing\n...\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, ds := Bytes("in.yaml", []byte(tt.yaml))
			var errs []diag.Diagnostic
			for _, d := range ds {
				if d.Code != "MC1005" {
					errs = append(errs, d)
				}
			}
			if len(errs) > 0 {
				t.Fatalf("unexpected diagnostics:\n%s", dump(errs))
			}
			if got := describeObjects(objs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("objects = %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestLoadDecodedFields(t *testing.T) {
	objs, ds := Bytes("in.yaml", []byte(`apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: shop
  labels: {app: web}
  annotations: {sidecar.istio.io/inject: "false"}
  creationTimestamp: "2024-05-01T10:00:00Z"
spec:
  containers: [{name: c, image: x, ports: [{containerPort: 8080, name: http}]}]
status:
  podIPs: [{ip: 10.0.0.7}, {ip: "fd00::7"}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: r}
spec:
  hosts: [r]
  exportTo: ["."]
  http:
  - match: [{headers: {end-user: {exact: jason}}}]
    route: [{destination: {host: r, subset: v2, port: {number: 9080}}, weight: 100}]
    timeout: 1.5s
`))
	if len(ds) > 0 {
		t.Fatalf("diagnostics:\n%s", dump(ds))
	}
	pod := objs[0].(*model.Pod)
	if pod.Labels["app"] != "web" || pod.Annotations["sidecar.istio.io/inject"] != "false" {
		t.Errorf("pod metadata = %v %v", pod.Labels, pod.Annotations)
	}
	if !pod.Created.Equal(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("pod created = %v", pod.Created)
	}
	if !reflect.DeepEqual(pod.IPs, []string{"10.0.0.7", "fd00::7"}) {
		t.Errorf("pod IPs = %v", pod.IPs)
	}
	if p := pod.Spec.Containers[0].Ports[0]; p.ContainerPort != 8080 || p.Name != "http" {
		t.Errorf("container port = %+v", p)
	}
	vs := objs[1].(*model.VirtualService)
	r := vs.Spec.Http[0]
	if r.Timeout.AsDuration() != 1500*time.Millisecond || r.Route[0].Destination.Subset != "v2" ||
		r.Route[0].Destination.Port.Number != 9080 || r.Match[0].Headers["end-user"].GetExact() != "jason" {
		t.Errorf("virtual service route decoded wrong: %v", r)
	}
	if vs.Source.Line != 14 || vs.Source.FieldLine(model.ParsePath("spec.http[0].timeout")) != 23 {
		t.Errorf("vs line %d, timeout line %d", vs.Source.Line, vs.Source.FieldLine(model.ParsePath("spec.http[0].timeout")))
	}
}

func TestLoadBadDocuments(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    []diagKey
		objects int // good objects still loaded
	}{
		{"broken document does not hide its neighbours",
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: [unclosed\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n",
			[]diagKey{{"MC1001", 8, "did not find expected"}}, 2},
		{"mapping value in the wrong place", "a: b: c\n", []diagKey{{"MC1001", 1, "mapping values are not allowed"}}, 0},
		{"duplicate key", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\nkind: Service\n", []diagKey{{"MC1001", 4, "already set"}}, 0},
		{"tab indentation", "apiVersion: v1\nkind: Namespace\nmetadata:\n\tname: a\n", []diagKey{{"MC1001", 4, "tab"}}, 0},
		{"scalar document beside an object", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\njust a string\n", []diagKey{{"MC1002", 5, "this document is a string"}}, 1},
		{"List items null", "apiVersion: v1\nkind: List\nitems: null\n", []diagKey{{"MC1002", 3, "a List holds its objects in items, a list, but items is null: nothing is loaded from it"}}, 0},
		{"List items a map", "apiVersion: v1\nkind: List\nmetadata: {}\nitems:\n  a: {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n",
			[]diagKey{{"MC1002", 4, "but items is an object"}}, 0},
		{"List without items", "apiVersion: v1\nkind: List\n", []diagKey{{"MC1002", 1, "a List holds its objects in items, a list, but it has no items"}}, 0},
		{"typed list items a map", "apiVersion: v1\nkind: ServiceList\nitems: {}\n", []diagKey{{"MC1002", 3, "a ServiceList holds its objects in items"}}, 0},
		{"empty List", "apiVersion: v1\nkind: List\nitems: []\n", nil, 0},
		{"top-level JSON array of objects", `[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}}]`,
			[]diagKey{{"MC1002", 1, "this document is a list of 2 objects, not an object: kubectl refuses it"}}, 0},
		{"top-level YAML sequence of objects", "- apiVersion: v1\n  kind: Namespace\n  metadata: {name: a}\n", []diagKey{{"MC1002", 1, "a list of 1 object, not an object"}}, 0},
		{"missing apiVersion", "kind: Namespace\nmetadata: {name: a}\n", []diagKey{{"MC1002", 1, "apiVersion is missing"}}, 0},
		{"missing kind", "apiVersion: v1\nmetadata: {name: a}\n", []diagKey{{"MC1002", 1, "kind is missing"}}, 0},
		{"missing name", "apiVersion: v1\nkind: Service\nmetadata:\n  generateName: web-\n", []diagKey{{"MC1002", 3, "generateName"}}, 0},
		{"invalid name", "apiVersion: v1\nkind: Service\nmetadata:\n  name: Web_1\n", []diagKey{{"MC1002", 4, "not a valid Service name"}}, 0},
		{"service name must be a DNS-1035 label", "apiVersion: v1\nkind: Service\nmetadata:\n  name: 1web\n", []diagKey{{"MC1002", 4, "not a valid Service name"}}, 0},
		{"invalid namespace", "apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata:\n  name: default\n  namespace: Team.A\n", []diagKey{{"MC1002", 5, "not a valid namespace name"}}, 0},
		{"metadata of the wrong type", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels: [x]\n", []diagKey{{"MC1002", 5, "metadata.labels: expected a map"}}, 0},
		{"label value of the wrong type", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels:\n    ok: x\n    team: 7\n", []diagKey{{"MC1002", 7, "metadata.labels.team: expected a string, got a number (7)"}}, 0},
		{"a null label value is empty", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels: {team: null}\n", nil, 1},
		{"finalizers of the wrong type", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  finalizers: [x, {y: z}]\n", []diagKey{{"MC1002", 5, "metadata.finalizers[1]: expected a string, got an object"}}, 0},
		{"finalizers not a list", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  finalizers: x\n", []diagKey{{"MC1002", 5, "metadata.finalizers: expected a list, got"}}, 0},
		{"kubernetes field of the wrong type", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports:\n  - port: 80\n  - port: eighty\n", []diagKey{{"MC1002", 7, "spec.ports[1].port: expected an integer"}}, 0},
		{"kubernetes unknown fields are dropped with a warning", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {futureField: 1}\n",
			[]diagKey{{"MC1009", 4, `spec.futureField: unknown field "futureField"; the API server drops the field; the object is kept`}}, 1},
		{"kubernetes unknown fields at their line, metadata and lists included",
			"apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  lables: {app: web}\nspec:\n  ports:\n  - port: 80\n    bogus: 1\n",
			[]diagKey{
				{"MC1009", 5, `metadata.lables: unknown field "lables" (did you mean "labels"?)`},
				{"MC1009", 9, `spec.ports[0].bogus: unknown field "bogus"`},
			}, 1},
		{"an unknown field beside a wrong type: the object is left out",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {bogus: 1, ports: 80}\n",
			[]diagKey{{"MC1002", 4, "spec.ports: expected a list"}, {"MC1009", 4, `spec.bogus: unknown field "bogus"; the API server drops the field; the object is left out`}}, 0},
		{"an unknown metadata field beside a wrong type in the spec: both, the object left out",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web, lables: {a: b}}\nspec: {ports: 80}\n",
			[]diagKey{{"MC1009", 3, `metadata.lables: unknown field "lables" (did you mean "labels"?); the API server drops the field; the object is left out`}, {"MC1002", 4, "spec.ports: expected a list"}}, 0},
		{"a wrong type in the metadata: only that, the object left out",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: 5, lables: {a: b}}\nspec: {ports: [{port: 80}]}\n",
			[]diagKey{{"MC1002", 3, "metadata.labels: expected a map"}}, 0},
		{"a Secret's fields are all known", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, labels: {a: b}}\nimmutable: true\ntype: Opaque\ndata: {k: dg==}\nstringData: {j: v}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: t}\ndatta: {k: dg==}\n",
			[]diagKey{{"MC1009", 12, `datta: unknown field "datta" (did you mean "data"?)`}}, 2},
		{"istio unknown field with suggestion",
			"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n  subsets:\n  - name: v1\n    lables: {version: v1}\n",
			[]diagKey{{"MC1003", 8, `spec.subsets[0].lables: unknown field "lables" (did you mean "labels"?)`}}, 0},
		{"istio snake_case field",
			"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n  traffic_policy: {}\n",
			[]diagKey{{"MC1003", 6, `the API spells it "trafficPolicy"`}}, 0},
		{"istio bad enum",
			"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r}\nspec:\n  host: r\n  trafficPolicy:\n    loadBalancer:\n      simple: FASTEST\n",
			[]diagKey{{"MC1003", 8, `invalid value "FASTEST", want one of`}}, 0},
		{"istio enum given as a number",
			"apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: p}\nspec:\n  mtls: {mode: 3}\n",
			[]diagKey{{"MC1003", 5, "expected one of"}}, 0},
		{"istio wrong type and bad duration, all reported",
			"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r}\nspec:\n  hosts: r\n  http:\n  - timeout: 5 seconds\n",
			[]diagKey{{"MC1003", 5, "spec.hosts: expected a list"}, {"MC1003", 7, `invalid duration "5 seconds"`}}, 0},
		{"istio oneof set twice",
			"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r}\nspec:\n  hosts: [r]\n  http:\n  - match:\n    - uri:\n        exact: /a\n        prefix: /b\n",
			[]diagKey{{"MC1003", 10, "cannot both be set"}}, 0},
		{"istio uint32 out of range",
			"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: e}\nspec:\n  hosts: [a.example]\n  ports:\n  - {number: -1, name: http, protocol: HTTP}\n",
			[]diagKey{{"MC1003", 7, "negative"}}, 0},
		{"istio unknown top-level field",
			"apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: g}\nspecs: {}\n",
			[]diagKey{{"MC1003", 4, `unknown field "specs" (did you mean "spec"?)`}}, 0},
		{"istio version not served",
			"apiVersion: networking.istio.io/v2\nkind: Gateway\nmetadata: {name: g}\n",
			[]diagKey{{"MC1003", 1, "not served at networking.istio.io/v2"}}, 0},
		{"kubernetes version not served",
			"apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d}\n---\napiVersion: apps/v1beta2\nkind: Deployment\nmetadata: {name: d}\n",
			[]diagKey{{"MC1005", 1, "extensions/v1beta1 Deployment"}, {"MC1002", 5, "not served at apps/v1beta2"}}, 1},
		{"hnc fixed names",
			"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchyConfiguration\nmetadata: {name: parent, namespace: a}\n---\napiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: cfg}\n",
			[]diagKey{{"MC1003", 3, `must be named "hierarchy"`}, {"MC1003", 7, `must be named "config"`}}, 0},
		{"hnc strict fields and modes",
			"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchyConfiguration\nmetadata: {name: hierarchy, namespace: a}\nspec:\n  parnt: org\n---\napiVersion: hnc.x-k8s.io/v1alpha2\nkind: HNCConfiguration\nmetadata: {name: config}\nspec:\n  resources:\n  - {resource: secrets, mode: Copy}\n",
			[]diagKey{{"MC1003", 5, `unknown field "parnt" (did you mean "parent"?)`}, {"MC1003", 12, `invalid value "Copy"`}}, 0},
		{"hnc status is ignored", "apiVersion: hnc.x-k8s.io/v1alpha2\nkind: SubnamespaceAnchor\nmetadata: {name: c, namespace: p}\nstatus: {status: Ok}\n", nil, 1},
		{"duplicate across versions",
			"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: a}\nspec: {egress: [{hosts: [./*]}]}\n---\napiVersion: networking.istio.io/v1beta1\nkind: Sidecar\nmetadata: {name: default, namespace: a}\nspec: {egress: [{hosts: [./*]}]}\n",
			[]diagKey{{"MC1004", 6, "first definition (in.yaml:1) is kept"}}, 1},
		{"same name in two namespaces is no duplicate",
			"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: b}\n", nil, 2},
		{"unknown kinds reported once per kind",
			"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: b}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: c}\n",
			[]diagKey{{"MC1005", 1, "example.com/v1 Widget (2 objects); such objects count only"}, {"MC1005", 9, "networking.k8s.io/v1 Ingress (1 object): istiod's Kubernetes Ingress support is not modelled"}}, 3},
		{"Gateway API kinds decode strictly, at every served version",
			"apiVersion: gateway.networking.k8s.io/v1beta1\nkind: HTTPRoute\nmetadata: {name: a}\nspec: {parentRefs: [{name: gw}], rules: [{backendRefs: [{name: web, port: 80}]}]}\n---\napiVersion: gateway.networking.k8s.io/v1alpha2\nkind: TCPRoute\nmetadata: {name: b}\nspec: {rules: [{backendRefs: [{name: db, port: 5432, wieght: 1}]}]}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: c}\nspec: {gatewayClassName: istio, listeners: [{name: http, port: eighty, protocol: HTTP}]}\n",
			[]diagKey{{"MC1003", 9, `spec.rules[0].backendRefs[0].wieght: unknown field "wieght"`}, {"MC1003", 14, "spec.listeners[0].port"}}, 1},
		{"kinds that do not touch the mesh load quietly",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: b}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: c}\n---\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
			nil, 3},
		{"field errors in a list item point into the list",
			"apiVersion: v1\nkind: List\nitems:\n- apiVersion: networking.istio.io/v1\n  kind: Sidecar\n  metadata: {name: s}\n  spec:\n    egress:\n    - hosts: './*'\n",
			[]diagKey{{"MC1003", 9, "spec.egress[0].hosts: expected a list"}}, 0},
		{"alias bomb", aliasBomb(), []diagKey{{"MC1001", 1, "excessive aliasing"}}, 0},
		{"deep nesting", "a: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n", []diagKey{{"MC1001", 1, "max depth"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, ds := Bytes("in.yaml", []byte(tt.yaml))
			checkDiags(t, ds, tt.want)
			if len(objs) != tt.objects {
				t.Errorf("loaded %d objects, want %d", len(objs), tt.objects)
			}
			for _, d := range ds {
				if d.Object.File != "in.yaml" {
					t.Errorf("diagnostic %s has file %q", d.Code, d.Object.File)
				}
			}
		})
	}
}

// aliasBomb is a "billion laughs" document: ten levels of nine aliases.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		ref := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Repeat(ref+", ", 8)+ref)
	}
	return b.String()
}

func TestLoadPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ns := func(name string) string { return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + "}\n" }
	write("b/two.yaml", ns("two"))
	write("a/one.yml", ns("one"))
	write("a/deeper/three.json", `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "three"}}`)
	write("a/notes.txt", "not a manifest")
	write(".git/config.yaml", ns("hidden"))
	write("a/.hidden.yaml", ns("hidden2"))
	write("c/binary.yaml", "apiVersion: v1\x00\x01")
	write("c/latin1.yaml", "name: caf\xe9\n")
	write("c/big.yaml", ns("big")+strings.Repeat("# padding\n", 100))
	write("c/bom.yaml", "\xef\xbb\xbf"+ns("bom"))
	if err := os.Symlink("loop-b", filepath.Join(dir, "c", "loop-a.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop-a.yaml", filepath.Join(dir, "c", "loop-b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "c", "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.yaml", filepath.Join(dir, "c", "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	stdin := strings.NewReader(ns("from-stdin"))
	res, ds, err := Paths(context.Background(),
		[]string{filepath.Join(dir, "b"), filepath.Join(dir, "a"), filepath.Join(dir, "c"), "-", filepath.Join(dir, "b", "two.yaml"), filepath.Join(dir, "nope")},
		Options{Stdin: stdin, MaxFileSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range res.Objects {
		names = append(names, o.Meta().Name)
		if o.Meta().Seq != len(names)-1 {
			t.Errorf("%s has Seq %d", o.Meta().Name, o.Meta().Seq)
		}
	}
	// Input order is lexical by path; "<stdin>" sorts after absolute paths.
	if want := []string{"three", "one", "two", "bom", "from-stdin"}; !reflect.DeepEqual(names, want) {
		t.Errorf("objects %v, want %v", names, want)
	}
	rel := func(p string) string {
		if r, err := filepath.Rel(dir, p); err == nil {
			return r
		}
		return p
	}
	got := map[string]string{}
	for _, d := range ds {
		if d.Code != "MC1006" {
			t.Errorf("unexpected %s at %s: %s", d.Code, d.Object.File, d.Message)
			continue
		}
		got[rel(d.Object.File)] = d.Message
	}
	for file, frag := range map[string]string{
		"c/binary.yaml":   "is binary",
		"c/latin1.yaml":   "not UTF-8",
		"c/big.yaml":      "over the 200 bytes limit",
		"c/loop-a.yaml":   "too many levels of symbolic links",
		"c/loop-b":        "too many levels of symbolic links",
		"c/up":            "symlink loop",
		"c/dangling.yaml": "no such file",
		"nope":            "no such file",
	} {
		if !strings.Contains(got[file], frag) {
			t.Errorf("MC1006 for %s = %q, want it to contain %q", file, got[file], frag)
		}
	}
	if len(got) != 8 {
		t.Errorf("got MC1006 for %d paths, want 8: %v", len(got), got)
	}
	if len(res.Files) != 5 {
		t.Errorf("files read = %v, want 5", res.Files)
	}
}

func TestLoadDefaultSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: the limit is checked before anything is read.
	if err := f.Truncate(DefaultMaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, ds, err := Paths(context.Background(), []string{big}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkDiags(t, ds, []diagKey{{"MC1006", 0, "is 32.0 MiB, over the 32.0 MiB limit"}})
}

func TestLoadOrderIndependent(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"z.yaml", "m.yaml", "a.yaml"} {
		content := fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns%d}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shared}\n", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var first string
	for _, order := range [][]string{{"z.yaml", "m.yaml", "a.yaml"}, {"a.yaml", "z.yaml", "m.yaml"}} {
		for _, workers := range []int{1, 4} {
			var paths []string
			for _, n := range order {
				paths = append(paths, filepath.Join(dir, n))
			}
			got := loadedList(t, paths, workers, false)
			if first == "" {
				first = got
			} else if got != first {
				t.Errorf("order %v workers %d gave\n%s\nwant\n%s", order, workers, got, first)
			}
		}
	}
	if !strings.Contains(first, "Service shared/web@a.yaml:5") {
		t.Errorf("the first file by path should win the duplicate:\n%s", first)
	}
}

// loadedList loads paths with workers and lists the objects (identity, file
// and line) and the findings (code, file and line, and the message when
// messages is set), in their order.
func loadedList(t *testing.T, paths []string, workers int, messages bool) string {
	t.Helper()
	res, ds, err := Paths(context.Background(), paths, Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, o := range res.Objects {
		fmt.Fprintf(&b, "%s@%s:%d\n", o.Meta().ID(), filepath.Base(o.Meta().Source.File), o.Meta().Source.Line)
	}
	for _, d := range ds {
		fmt.Fprintf(&b, "%s %s:%d", d.Code, filepath.Base(d.Object.File), d.Object.Line)
		if messages {
			fmt.Fprintf(&b, " %s", d.Message)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Paths(ctx, []string{dir}, Options{}); err == nil {
		t.Error("want an error from a cancelled context")
	}
}

// TestDurations: Istio kinds take Go durations, as istiod's jsonpb decoder
// and the CRDs' CEL checks do, not only protojson's seconds.
func TestDurations(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string // the problem, "" for none
	}{
		{"1.5s", 1500 * time.Millisecond, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"24h", 24 * time.Hour, ""},
		{"0", 0, "at least 1ms"}, // parsed, then refused by istiod's rule for a timeout
		{"5 seconds", 0, "invalid duration"},
		{"30", 0, "invalid duration"}, // a number needs its unit
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			objs, ds := Bytes("in.yaml", []byte("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r}\nspec:\n  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n    timeout: \""+tt.in+"\"\n"))
			if tt.err != "" {
				checkDiags(t, ds, []diagKey{{"MC1003", 8, tt.err}})
				return
			}
			if len(ds) > 0 {
				t.Fatalf("diagnostics:\n%s", dump(ds))
			}
			if got := objs[0].(*model.VirtualService).Spec.Http[0].Timeout; got == nil || got.AsDuration() != tt.want {
				t.Errorf("timeout = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestVirtualServiceZeroTimeoutIsRejected: istiod's validation refuses a
// VirtualService route timeout under 1 ms or not in whole milliseconds,
// so the object is left out with MC1003 at the timeout's line, as schema
// problems are; 1ms itself and a route without timeout load.
func TestVirtualServiceZeroTimeoutIsRejected(t *testing.T) {
	for _, tt := range []struct {
		timeout string
		want    []diagKey
	}{
		{"0s", []diagKey{{"MC1003", 9, "spec.http[1].timeout: duration 0s is rejected by istiod's validation: it must be at least 1ms"}}},
		{"500us", []diagKey{{"MC1003", 9, "at least 1ms"}}},
		{"-1s", []diagKey{{"MC1003", 9, "at least 1ms"}}},
		{"1500us", []diagKey{{"MC1003", 9, "duration 1.5ms is rejected by istiod's validation: it must be whole milliseconds"}}},
		{"1ms", nil},
		{"10s", nil},
	} {
		t.Run(tt.timeout, func(t *testing.T) {
			objs, ds := Bytes("in.yaml", []byte("apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r}\nspec:\n  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n  - route: [{destination: {host: r}}]\n    timeout: "+tt.timeout+"\n"))
			checkDiags(t, ds, tt.want)
			if want := len(tt.want) == 0; (len(objs) == 1) != want {
				t.Errorf("loaded %d objects, want the VirtualService loaded: %v", len(objs), want)
			}
		})
	}
}

// TestIstiodWebhookRejectsPoolDurationsKeepaliveConfigMapAndMirrors: rules
// of istiod's validation the schemas leave out, checked against istiod's
// generator, which rejects each of these objects: every duration of a
// DestinationRule connection pool (top level, port level, subsets) and a
// VirtualService's retries.perTryTimeout and backoff at least 1 ms in whole
// milliseconds, except a TCP idle timeout under 1 ms (0s turns it off); an
// http2KeepAlive needs both interval and timeout; a configmap:// credential
// names a namespace, the DestinationRule's own, and a name; a route takes
// mirror or mirrors, not both. Each is MC1003 at the field's line and the
// object is left out; the near misses load.
func TestIstiodWebhookRejectsPoolDurationsKeepaliveConfigMapAndMirrors(t *testing.T) {
	dr := func(spec string) string {
		return "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: r, namespace: team}\nspec:\n  host: r\n" + spec
	}
	vs := func(route string) string {
		return "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r}\nspec:\n  hosts: [r]\n  http:\n  - route: [{destination: {host: r}}]\n" + route
	}
	for _, tt := range []struct {
		name, yaml string
		want       []diagKey // nil: the object loads
	}{
		{"http2KeepAlive without timeout", dr("  trafficPolicy:\n    connectionPool:\n      http:\n        http2KeepAlive:\n          interval: 10s\n"),
			[]diagKey{{"MC1003", 9, "spec.trafficPolicy.connectionPool.http.http2KeepAlive: http2KeepAlive without timeout is rejected by istiod's validation"}}},
		{"http2KeepAlive without interval", dr("  trafficPolicy: {connectionPool: {http: {http2KeepAlive: {timeout: 10s}}}}\n"),
			[]diagKey{{"MC1003", 6, "without interval"}}},
		{"http2KeepAlive timeout 0s", dr("  trafficPolicy:\n    connectionPool:\n      http:\n        http2KeepAlive:\n          interval: 10s\n          timeout: 0s\n"),
			[]diagKey{{"MC1003", 11, "http2KeepAlive.timeout: duration 0s is rejected by istiod's validation: it must be at least 1ms"}}},
		{"http2KeepAlive whole", dr("  trafficPolicy: {connectionPool: {http: {http2KeepAlive: {interval: 10s, timeout: 5s}}}}\n"), nil},
		{"http idleTimeout 0s", dr("  trafficPolicy:\n    connectionPool:\n      http:\n        idleTimeout: 0s\n"),
			[]diagKey{{"MC1003", 9, "spec.trafficPolicy.connectionPool.http.idleTimeout: duration 0s is rejected by istiod's validation: it must be at least 1ms"}}},
		{"http idleTimeout in microseconds", dr("  trafficPolicy: {connectionPool: {http: {idleTimeout: 1500us}}}\n"),
			[]diagKey{{"MC1003", 6, "whole milliseconds"}}},
		{"tcp idleTimeout 0s turns it off", dr("  trafficPolicy: {connectionPool: {tcp: {idleTimeout: 0s}}}\n"), nil},
		{"tcp idleTimeout under 1ms", dr("  trafficPolicy: {connectionPool: {tcp: {idleTimeout: 500us}}}\n"), nil},
		{"tcp idleTimeout in microseconds", dr("  trafficPolicy: {connectionPool: {tcp: {idleTimeout: 1500us}}}\n"),
			[]diagKey{{"MC1003", 6, "tcp.idleTimeout: duration 1.5ms is rejected"}}},
		{"tcp connectTimeout 0s", dr("  trafficPolicy: {connectionPool: {tcp: {connectTimeout: 0s}}}\n"), []diagKey{{"MC1003", 6, "tcp.connectTimeout"}}},
		{"tcp maxConnectionDuration 0s", dr("  trafficPolicy: {connectionPool: {tcp: {maxConnectionDuration: 0s}}}\n"), []diagKey{{"MC1003", 6, "tcp.maxConnectionDuration"}}},
		{"tcp keepalive time 0s", dr("  trafficPolicy: {connectionPool: {tcp: {tcpKeepalive: {time: 0s}}}}\n"), []diagKey{{"MC1003", 6, "tcpKeepalive.time"}}},
		{"tcp keepalive interval 0s", dr("  trafficPolicy: {connectionPool: {tcp: {tcpKeepalive: {interval: 0s}}}}\n"), []diagKey{{"MC1003", 6, "tcpKeepalive.interval"}}},
		{"port-level pool", dr("  trafficPolicy:\n    portLevelSettings:\n    - port: {number: 80}\n      connectionPool: {http: {idleTimeout: 0s}}\n"),
			[]diagKey{{"MC1003", 9, "spec.trafficPolicy.portLevelSettings[0].connectionPool.http.idleTimeout"}}},
		{"subset's port-level pool", dr("  subsets:\n  - name: a\n    trafficPolicy:\n      portLevelSettings:\n      - port: {number: 80}\n        connectionPool:\n          tcp: {connectTimeout: 0s}\n"),
			[]diagKey{{"MC1003", 12, "spec.subsets[0].trafficPolicy.portLevelSettings[0].connectionPool.tcp.connectTimeout"}}},
		{"configmap without namespace", dr("  trafficPolicy:\n    tls:\n      mode: SIMPLE\n      credentialName: configmap://name\n"),
			[]diagKey{{"MC1003", 9, `spec.trafficPolicy.tls.credentialName: credentialName "configmap://name" is rejected by istiod's validation: configmap:// takes a namespace and a name, configmap://team/NAME`}}},
		{"configmap with empty namespace", dr("  trafficPolicy: {tls: {mode: SIMPLE, credentialName: \"configmap:///name\"}}\n"), []diagKey{{"MC1003", 6, "takes a namespace and a name"}}},
		{"configmap with empty name", dr("  trafficPolicy: {tls: {mode: SIMPLE, credentialName: \"configmap://team/\"}}\n"), []diagKey{{"MC1003", 6, "takes a namespace and a name"}}},
		{"configmap in another namespace", dr("  subsets:\n  - name: a\n    trafficPolicy:\n      portLevelSettings:\n      - port: {number: 443}\n        tls: {mode: SIMPLE, credentialName: configmap://other/name}\n"),
			[]diagKey{{"MC1003", 11, `spec.subsets[0].trafficPolicy.portLevelSettings[0].tls.credentialName: credentialName "configmap://other/name" is rejected by istiod's validation: a configmap:// credential must be in the DestinationRule's namespace "team"`}}},
		{"configmap in its namespace", dr("  trafficPolicy: {tls: {mode: SIMPLE, credentialName: configmap://team/name}}\n"), nil},
		{"kubernetes secret without namespace", dr("  trafficPolicy: {tls: {mode: SIMPLE, credentialName: name}}\n"), nil},
		{"perTryTimeout 0s", vs("    retries:\n      attempts: 2\n      perTryTimeout: 0s\n"),
			[]diagKey{{"MC1003", 10, "spec.http[0].retries.perTryTimeout: duration 0s is rejected by istiod's validation: it must be at least 1ms"}}},
		{"perTryTimeout in microseconds", vs("    retries: {attempts: 2, perTryTimeout: 1500us}\n"), []diagKey{{"MC1003", 8, "whole milliseconds"}}},
		{"backoff 0s", vs("    retries: {attempts: 2, backoff: 0s}\n"), []diagKey{{"MC1003", 8, "retries.backoff"}}},
		{"perTryTimeout 2s", vs("    retries: {attempts: 2, perTryTimeout: 2s, backoff: 25ms}\n"), nil},
		{"mirror and mirrors", vs("    mirror: {host: s}\n    mirrors:\n    - destination: {host: s}\n"),
			[]diagKey{{"MC1003", 9, "spec.http[0].mirrors: a route with both mirror and mirrors is rejected by istiod's validation"}}},
		{"mirrors alone", vs("    mirrors:\n    - destination: {host: s}\n"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs, ds := Bytes("in.yaml", []byte(tt.yaml))
			checkDiags(t, ds, tt.want)
			if loaded := len(objs) == 1; loaded != (tt.want == nil) {
				t.Errorf("loaded: %v, want %v", loaded, tt.want == nil)
			}
		})
	}
}

// TestMixedRepository: in an application repository read file by file
// (--kustomize=off), files without Kubernetes objects and template files
// outside a chart are skipped and listed, excluded paths are not read, and
// the manifests load without a word. With Kustomize on, the kustomization
// at the top is rendered instead, and nothing else read.
func TestMixedRepository(t *testing.T) {
	dir := testfiles.Write(t, map[string]string{
		"package.json":                      `{"name": "shop", "version": "1.0.0"}`,
		"api/swagger.yaml":                  "swagger: '2.0'\ninfo: {title: shop}\npaths: {}\n",
		"kustomization.yaml":                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deploy/ns.yaml]\n",
		"deploy/ns.yaml":                    "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
		"deploy/sa.yaml":                    "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: web, namespace: shop}\n",
		"node_modules/x/package.json":       `{"name": "x"}`,
		"node_modules/x/broken.yaml":        "a: [\n",
		"loose/template.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Name }}\n",
		"deploy/generated/skip-me.yaml":     "a: [\n",
		"deploy/generated/keep/not-me.yaml": "a: [\n",
	})
	res, ds, err := Paths(context.Background(), []string{dir}, Options{Exclude: []string{"node_modules", "deploy/generated/**"}, Render: RenderOptions{NoKustomize: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) > 0 || len(res.Objects) != 2 {
		t.Errorf("%d objects, diagnostics %v", len(res.Objects), ds)
	}
	got := map[string]string{}
	for _, s := range res.Skipped {
		rel, _ := filepath.Rel(dir, s.File)
		got[filepath.ToSlash(rel)] = s.Reason
	}
	want := map[string]string{
		"package.json": diag.NotKubernetes, "api/swagger.yaml": diag.NotKubernetes, "loose/template.yaml": diag.HelmTemplate,
	}
	if !maps.Equal(got, want) {
		t.Errorf("skipped %v\nwant %v", got, want)
	}
	res, ds, _ = Paths(context.Background(), []string{dir}, Options{})
	if len(ds) > 0 || len(res.Objects) != 1 || len(res.Skipped) != 0 || !slices.Equal(res.Files, []string{dir}) {
		t.Errorf("the kustomization rendered: %d objects, files %v, skipped %v, diagnostics %v", len(res.Objects), res.Files, res.Skipped, ds)
	}
	// A real manifest that is only broken stays an error.
	res, ds, _ = Paths(context.Background(), []string{filepath.Join(dir, "deploy", "generated", "skip-me.yaml")}, Options{})
	if len(ds) != 1 || ds[0].Code != "MC1001" || len(res.Skipped) != 0 {
		t.Errorf("a broken file named on the command line: %v, skipped %v", ds, res.Skipped)
	}
}

// TestTopLevelListsOfObjects: a JSON array of objects is reported, not
// passed over as a file without Kubernetes objects; an array of anything
// else (package data, a list of names) still is.
func TestTopLevelListsOfObjects(t *testing.T) {
	for _, tc := range []struct {
		data    string
		skipped bool
	}{
		{`[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}]`, false},
		{`[{"metadata": {"name": "a"}}]`, false},
		{`["a", "b"]`, true},
		{`[{"name": "a", "version": "1.0"}]`, true},
	} {
		_, ds, skipped := newDecoder().decodeFile("f.json", []byte(tc.data))
		if skipped != tc.skipped || (!skipped && !slices.ContainsFunc(ds, diag.InvalidObject.Is)) {
			t.Errorf("%s: skipped %v, diagnostics:\n%s", tc.data, skipped, dump(ds))
		}
	}
}

// TestKubernetesKindsKeepNoMetadata: a Kubernetes object's metadata is
// decoded once, into its model.ObjectMeta, and left out of the typed
// object (decodeKind), whose metadata field must be the API's ObjectMeta,
// so that leaving it out loses no field and no check.
func TestKubernetesKindsKeepNoMetadata(t *testing.T) {
	for _, k := range model.Kinds() {
		if k.Family != model.Kubernetes || !k.Decoded() {
			continue
		}
		f, ok := fieldsOf(reflect.TypeOf(k.New()).Elem())["metadata"]
		if !ok || f.typ != reflect.TypeFor[metav1.ObjectMeta]() {
			t.Errorf("%s: metadata is not a metav1.ObjectMeta", k.Kind)
		}
	}
}

// TestFirstGatewayAPIFile: while one worker decodes the first Gateway API
// file, others set such files aside, and only such files.
func TestFirstGatewayAPIFile(t *testing.T) {
	route := []byte("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n")
	service := []byte("apiVersion: v1\nkind: Service\n")
	var f firstGatewayAPI
	for _, step := range []struct {
		name          string
		data          []byte
		release       bool
		wait, claimed bool
	}{
		{name: "a Service before", data: service},
		{name: "the first route", data: route, claimed: true},
		{name: "a route meanwhile", data: route, wait: true},
		{name: "a Service meanwhile", data: service},
		{name: "a route after", data: route, release: true},
	} {
		if step.release {
			f.release()
		}
		if wait, claimed := f.admit(step.data); wait != step.wait || claimed != step.claimed {
			t.Errorf("%s: wait, claimed = %v, %v; want %v, %v", step.name, wait, claimed, step.wait, step.claimed)
		}
	}
}

// TestLoadGatewayAPIFilesAnyWorkers: Gateway API files set aside while the
// first is decoded load as they do with one worker, findings included.
func TestLoadGatewayAPIFilesAnyWorkers(t *testing.T) {
	dir := t.TempDir()
	for i := range 12 {
		content := fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ns%d}\nspec: {ports: [{port: 80}]}\n", i)
		if i%3 != 1 {
			// Every third route has a weight the CRD refuses (MC1003).
			content += fmt.Sprintf("---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: web, namespace: ns%d}\nspec:\n  parentRefs: [{group: \"\", kind: Service, name: web}]\n  rules: [{backendRefs: [{name: web, port: 80, weight: %d}]}]\n", i, 1-(i%3)*1000001)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.yaml", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var first string
	for _, workers := range []int{1, 2, 4} {
		got := loadedList(t, []string{dir}, workers, true)
		if first == "" {
			first = got
		} else if got != first {
			t.Errorf("workers %d gave\n%s\nwant\n%s", workers, got, first)
		}
	}
	if got := strings.Count(first, "HTTPRoute"); got != 4 {
		t.Errorf("%d HTTPRoutes loaded, want 4:\n%s", got, first)
	}
	if got := strings.Count(first, "MC1003"); got != 4 {
		t.Errorf("%d MC1003 findings, want 4:\n%s", got, first)
	}
}
