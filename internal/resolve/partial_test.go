package resolve

import (
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/host"
)

// TestStandInProxies: which namespaces a stand-in speaks for, and that
// stand-ins stay out of Proxies and Views.
func TestStandInProxies(t *testing.T) {
	m := mesh(t, "",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: injected, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: injected}\nspec: {containers: [{name: c, image: i}]}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: labelled-empty, labels: {istio-injection: enabled}}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: plain-empty}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: switched-off, labels: {istio-injection: disabled}}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: switched-off}\nspec: {ports: [{port: 80}]}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: app}\nspec: {ports: [{port: 80}]}",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v, namespace: config-only}\nspec: {hosts: [a.app.svc.cluster.local], http: [{route: [{destination: {host: a.app.svc.cluster.local}}]}]}",
		"apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: istio-system}\nspec: {egress: [{hosts: [\"./*\"]}]}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: dns, namespace: kube-system}\nspec: {ports: [{port: 53}]}",
	)
	var got []string
	for _, sc := range m.Scopes {
		for _, p := range sc.Proxies {
			if p.StandIn {
				got = append(got, p.ID()+" "+sc.Choice.Reason)
			}
		}
	}
	slices.Sort(got)
	want := []string{"app/* root namespace default", "config-only/* root namespace default", "labelled-empty/* root namespace default"}
	if !slices.Equal(got, want) {
		t.Errorf("stand-ins %q, want %q", got, want)
	}
	if len(m.Proxies) != 1 || len(m.Views) != 1 || m.Proxies[0].ID() != "injected/web" {
		t.Errorf("stand-ins leaked into Proxies or Views: %d proxies, %d views", len(m.Proxies), len(m.Views))
	}
}

// TestDescribes: a Kubernetes host is judged when the input holds its
// namespace's services, or declares namespaces without it; other hosts
// always are.
func TestDescribes(t *testing.T) {
	m := mesh(t, "",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: config}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: app}\nspec: {ports: [{port: 80}]}",
	)
	for h, want := range map[host.Name]bool{
		"a.app.svc.cluster.local":    true,  // its namespace's services are here
		"b.app.svc.cluster.local":    true,  // a missing service of that namespace
		"b.config.svc.cluster.local": false, // a namespace whose Services live elsewhere
		"b.typo.svc.cluster.local":   true,  // a namespace that does not exist
		"api.example.com":            true,  // only a ServiceEntry can define it
		"a.b.c.svc.cluster.local":    true,  // not a Kubernetes service name
		"*.config.svc.cluster.local": true,
	} {
		if got := m.Describes(h); got != want {
			t.Errorf("Describes(%s) = %v, want %v", h, got, want)
		}
	}
	// Namespaces an anchor creates, or objects live in, exist: their
	// Services may be kept elsewhere.
	hnc := mesh(t, "",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app}",
		"apiVersion: hnc.x-k8s.io/v1alpha2\nkind: SubnamespaceAnchor\nmetadata: {name: child, namespace: app}",
		"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d, namespace: implied}\nspec: {host: x}",
	)
	for _, h := range []host.Name{"x.child.svc.cluster.local", "x.implied.svc.cluster.local", "x.istio-system.svc.cluster.local"} {
		if hnc.Describes(h) {
			t.Errorf("Describes(%s) = true for a namespace that exists without Services in the input", h)
		}
	}
	if !hnc.Describes("x.gone.svc.cluster.local") || !hnc.DeclaresNamespaces() {
		t.Error("a namespace that does not exist, in an input declaring namespaces, is described")
	}
	undeclared := mesh(t, "", "apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: app}\nspec: {ports: [{port: 80}]}")
	if undeclared.Describes("b.other.svc.cluster.local") {
		t.Error("without Namespace objects, a namespace without Services in the input is not described")
	}
}
