package routecheck

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/request"
)

// Situations istiod's own simulation tests assert on sidecar routes
// (which VirtualService a host's virtual host takes, across namespaces,
// wildcards, Sidecar imports and creation times), written afresh as
// meshc requests: each host is asked for through the proxy's outbound
// route on a port, and the cluster it lands on is checked. "" means the
// host has no virtual host of its own: the request falls to allow_any.

// route is a VirtualService sending hosts to one destination.
type route struct {
	ns      string
	hosts   []string
	dest    string
	port    uint32 // destination port, 0: the listener's
	match   uint32 // match on this port only, 0: any
	created string // creation year
}

func (r route) manifest(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: vs%d\n  namespace: %s\n  creationTimestamp: \"%s-01-01T00:00:00Z\"\nspec:\n  hosts:\n",
		i, r.ns, cmp.Or(r.created, "2020"))
	for _, h := range r.hosts {
		fmt.Fprintf(&b, "  - %q\n", h)
	}
	b.WriteString("  http:\n  - route:\n    - destination:\n        host: " + r.dest + "\n")
	if r.port != 0 {
		fmt.Fprintf(&b, "        port: {number: %d}\n", r.port)
	}
	if r.match != 0 {
		fmt.Fprintf(&b, "    match:\n    - port: %d\n", r.match)
	}
	return b.String()
}

// routesMesh: namespaces default, not-default and arbitrary, injected,
// each with a client; three HTTP services on ports 80 and 8080; the
// routes; a Sidecar in sidecarNs importing egress, if any.
func routesMesh(routes []route, sidecarNs string, egress []string) string {
	var docs []string
	for _, ns := range []string{"default", "not-default", "arbitrary"} {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {istio-injection: enabled}\n", ns),
			fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: client\n  namespace: %s\nspec:\n  containers:\n  - name: app\n    image: app\n", ns))
	}
	for _, s := range []struct{ name, ns, ip string }{{"known", "default", "2.0.0.0"}, {"alt-known", "default", "2.0.0.1"}, {"not-default", "not-default", "2.0.0.2"}} {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  clusterIP: %s\n  ports:\n  - {name: http, port: 80}\n  - {name: http-alt, port: 8080}\n",
			s.name, s.ns, s.ip))
	}
	for i, r := range routes {
		docs = append(docs, r.manifest(i))
	}
	if sidecarNs != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata:\n  name: default\n  namespace: %s\nspec:\n  egress:\n  - hosts:\n", sidecarNs)
		for _, h := range egress {
			fmt.Fprintf(&b, "    - %q\n", h)
		}
		docs = append(docs, b.String())
	}
	return strings.Join(docs, "---\n")
}

const (
	known    = "known.default.svc.cluster.local"
	altKnown = "alt-known.default.svc.cluster.local"
)

func TestSidecarRoutesAsIstioSimulates(t *testing.T) {
	older, newer := "2019", "2021"
	cases := []struct {
		name      string
		routes    []route
		sidecarNs string
		egress    []string
		from      string
		port      uint32
		// want maps a host asked for (a wildcard's stand-in name) to the
		// cluster; "" is no virtual host of its own.
		want map[string]string
	}{
		{"simple port 80", []route{{ns: "default", hosts: []string{known}, dest: altKnown}}, "", nil, "default", 80,
			map[string]string{known: "outbound|80||" + altKnown}},
		{"simple port 8080", []route{{ns: "default", hosts: []string{known}, dest: altKnown}}, "", nil, "default", 8080,
			map[string]string{known: "outbound|8080||" + altKnown}},
		{"unknown host, port 80", []route{{ns: "default", hosts: []string{"foo.default.svc.cluster.local"}, dest: "foo.default.svc.cluster.local"}}, "", nil, "default", 80,
			map[string]string{"foo.default.svc.cluster.local": "outbound|80||foo.default.svc.cluster.local"}},
		{"unknown host, port 8080", []route{{ns: "default", hosts: []string{"foo.default.svc.cluster.local"}, dest: "foo.default.svc.cluster.local"}}, "", nil, "default", 8080,
			map[string]string{"foo.default.svc.cluster.local": ""}},
		{"unknown host, port 8080, matching 8080", []route{{ns: "default", hosts: []string{"foo.default.svc.cluster.local"}, dest: "foo.default.svc.cluster.local", match: 8080}}, "", nil, "default", 8080,
			map[string]string{"foo.default.svc.cluster.local": ""}},
		{"unknown host, port 8080, to 8080", []route{{ns: "default", hosts: []string{"foo.default.svc.cluster.local"}, dest: "foo.default.svc.cluster.local", port: 8080}}, "", nil, "default", 8080,
			map[string]string{"foo.default.svc.cluster.local": ""}},
		{"producer's rule, port 80", []route{{ns: "default", hosts: []string{known}, dest: altKnown}}, "", nil, "not-default", 80,
			map[string]string{known: "outbound|80||" + altKnown}},
		{"producer's rule, port 8080", []route{{ns: "default", hosts: []string{known}, dest: altKnown}}, "", nil, "not-default", 8080,
			map[string]string{known: "outbound|8080||" + altKnown}},
		{"consumer's rule, port 80", []route{{ns: "not-default", hosts: []string{known}, dest: altKnown}}, "", nil, "not-default", 80,
			map[string]string{known: "outbound|80||" + altKnown}},
		{"consumer's rule, port 8080", []route{{ns: "not-default", hosts: []string{known}, dest: altKnown}}, "", nil, "not-default", 8080,
			map[string]string{known: "outbound|8080||" + altKnown}},
		{"a third namespace's rule, port 80", []route{{ns: "arbitrary", hosts: []string{known}, dest: altKnown}}, "", nil, "not-default", 80,
			map[string]string{known: "outbound|80||" + altKnown}},
		{"a third namespace's rule, port 8080", []route{{ns: "arbitrary", hosts: []string{known}, dest: altKnown}}, "", nil, "not-default", 8080,
			map[string]string{known: "outbound|8080||" + altKnown}},
		{"three rules, the oldest wins, port 80", []route{
			{ns: "arbitrary", hosts: []string{known}, dest: "arbitrary.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "default.example.com"},
			{ns: "not-default", hosts: []string{known}, dest: "not-default.example.com", created: newer}}, "", nil, "not-default", 80,
			map[string]string{known: "outbound|80||arbitrary.example.com"}},
		{"three rules, the oldest wins, port 8080", []route{
			{ns: "arbitrary", hosts: []string{known}, dest: "arbitrary.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "default.example.com"},
			{ns: "not-default", hosts: []string{known}, dest: "not-default.example.com", created: newer}}, "", nil, "not-default", 8080,
			map[string]string{known: "outbound|8080||arbitrary.example.com"}},
		{"a wildcard of no service", []route{{ns: "default", hosts: []string{"*.unknown.example.com"}, dest: "arbitrary.example.com"}}, "", nil, "default", 80,
			map[string]string{altKnown: "outbound|80||" + altKnown, known: "outbound|80||" + known, "x.unknown.example.com": "outbound|80||arbitrary.example.com"}},
		{"a wildcard over services, with a Sidecar", []route{{ns: "default", hosts: []string{"*.cluster.local"}, dest: "arbitrary.example.com"}}, "default", []string{"*/*.cluster.local"}, "default", 80,
			map[string]string{altKnown: "outbound|80||arbitrary.example.com", known: "outbound|80||arbitrary.example.com", "x.cluster.local": ""}},
		{"the older wildcard, then an exact host", []route{
			{ns: "default", hosts: []string{"*.cluster.local"}, dest: "wild.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "explicit.example.com", created: newer}}, "", nil, "default", 80,
			map[string]string{altKnown: "outbound|80||wild.example.com", known: "outbound|80||explicit.example.com", "x.cluster.local": ""}},
		{"the older exact host, then a wildcard", []route{
			{ns: "default", hosts: []string{"*.cluster.local"}, dest: "wild.example.com", created: newer},
			{ns: "default", hosts: []string{known}, dest: "explicit.example.com", created: older}}, "", nil, "default", 80,
			map[string]string{altKnown: "outbound|80||wild.example.com", known: "outbound|80||explicit.example.com", "x.cluster.local": ""}},
		{"a wildcard and an exact host, with a Sidecar importing services only", []route{
			{ns: "default", hosts: []string{"*.cluster.local"}, dest: "wild.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "explicit.example.com", created: newer}}, "default", []string{"default/" + known, "default/" + altKnown}, "default", 80,
			map[string]string{altKnown: "outbound|80||wild.example.com", known: "outbound|80||explicit.example.com", "x.cluster.local": ""}},
		{"the wildcard in a namespace the Sidecar does not import", []route{
			{ns: "not-default", hosts: []string{"*.cluster.local"}, dest: "wild.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "explicit.example.com", created: newer}}, "default", []string{"default/" + known, "default/" + altKnown}, "default", 80,
			map[string]string{altKnown: "outbound|80||" + altKnown, known: "outbound|80||explicit.example.com", "x.cluster.local": ""}},
		{"a wildcard and an exact host across namespaces", []route{
			{ns: "not-default", hosts: []string{"*.cluster.local"}, dest: "wild.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "explicit.example.com", created: newer}}, "", nil, "default", 80,
			map[string]string{altKnown: "outbound|80||wild.example.com", known: "outbound|80||explicit.example.com", "x.cluster.local": ""}},
		{"a wildcard and an exact host of no service", []route{
			{ns: "default", hosts: []string{"*.tld"}, dest: "wild.example.com", created: older},
			{ns: "default", hosts: []string{"example.tld"}, dest: "explicit.example.com", created: newer}}, "", nil, "default", 80,
			map[string]string{known: "outbound|80||" + known, "x.tld": "outbound|80||wild.example.com", "x.example.tld": "outbound|80||wild.example.com"}},
		{"an exact host of no service, a wildcard Sidecar", []route{{ns: "default", hosts: []string{"arbitrary.svc.cluster.local"}, dest: "arbitrary.svc.cluster.local"}},
			"default", []string{"*/*.cluster.local"}, "default", 80,
			map[string]string{"arbitrary.svc.cluster.local": "outbound|80||arbitrary.svc.cluster.local"}},
		{"a wildcard, a Sidecar importing one service", []route{{ns: "default", hosts: []string{"*.cluster.local"}, dest: "arbitrary.example.com"}},
			"default", []string{"*/" + known}, "default", 80,
			map[string]string{known: "outbound|80||arbitrary.example.com", "x.cluster.local": ""}},
		{"a wildcard of no service, a Sidecar importing a name under it", []route{{ns: "default", hosts: []string{"*.example.org"}, dest: "arbitrary.example.com"}},
			"default", []string{"*/explicit.example.org", "*/" + altKnown}, "default", 80,
			map[string]string{known: "", altKnown: "outbound|80||" + altKnown, "x.example.org": "outbound|80||arbitrary.example.com"}},
		{"a Sidecar importing a wildcard from its own namespace", []route{
			{ns: "not-default", hosts: []string{"*.default.svc.cluster.local"}, dest: "arbitrary.example.com"},
			{ns: "default", hosts: []string{"explicit.default.svc.cluster.local"}, dest: "explicit.default.svc.cluster.local"}},
			"not-default", []string{"not-default/*.default.svc.cluster.local", "not-default/not-default.not-default.svc.cluster.local"}, "not-default", 80,
			map[string]string{"x.default.svc.cluster.local": "outbound|80||arbitrary.example.com", "explicit.default.svc.cluster.local": "outbound|80||arbitrary.example.com",
				"not-default.not-default.svc.cluster.local": "outbound|80||not-default.not-default.svc.cluster.local"}},
		{"two rules in one namespace, the oldest wins", []route{
			{ns: "default", hosts: []string{known}, dest: "old.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "new.example.com", created: newer}}, "", nil, "default", 80,
			map[string]string{known: "outbound|80||old.example.com"}},
		{"two rules across namespaces, the oldest wins", []route{
			{ns: "not-default", hosts: []string{known}, dest: "producer.example.com", created: older},
			{ns: "default", hosts: []string{known}, dest: "consumer.example.com", created: newer}}, "", nil, "default", 80,
			map[string]string{known: "outbound|80||producer.example.com"}},
		{"a rule for two hosts, a Sidecar importing one", []route{{ns: "default", hosts: []string{known, altKnown}, dest: "example.com"}},
			"default", []string{"*/" + known}, "default", 80,
			map[string]string{known: "outbound|80||example.com", altKnown: "outbound|80||example.com"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &File{Path: "routes"}
			for h, cluster := range tc.want {
				c := Case{Name: h, Call: request.Call{From: tc.from + "/client", Target: fmt.Sprintf("http://2.0.0.0:%d/", tc.port),
					Headers: map[string]string{"Host": h}}}
				if cluster == "" {
					vh := "allow_any"
					c.Expect.VirtualHost = &vh
				} else {
					c.Expect.Cluster = &cluster
				}
				f.Tests = append(f.Tests, c)
			}
			runIn(t, routesMesh(tc.routes, tc.sidecarNs, tc.egress), f)
		})
	}
}
