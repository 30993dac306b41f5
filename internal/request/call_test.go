package request

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/testfiles"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want target
		err  string
	}{
		{"http://reviews:9080/api?x=1", target{url: true, scheme: "http", hostname: "reviews", port: 9080, explicitPort: true, path: "/api?x=1"}, ""},
		{"https://api.example.com", target{url: true, scheme: "https", hostname: "api.example.com", port: 443, path: "/"}, ""},
		{"HTTP://x/", target{url: true, scheme: "http", hostname: "x", port: 80, path: "/"}, ""},
		{"10.0.0.1:5432", target{hostname: "10.0.0.1", port: 5432, explicitPort: true, path: "/"}, ""},
		{"[fd00::1]:80", target{hostname: "fd00::1", port: 80, explicitPort: true, path: "/"}, ""},
		{"db.shop:5432", target{hostname: "db.shop", port: 5432, explicitPort: true, path: "/"}, ""},
		{"reviews", target{}, "neither a URL nor host:port"},
		{"reviews:http", target{}, "bad port"},
		{"reviews:0", target{}, "bad port"},
		{"ftp://x/", target{}, "has scheme ftp"},
		{"http:///x", target{}, "has no host"},
		{"http://x:99999/", target{}, "bad port"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseTarget(tc.in)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), TargetForms) {
					t.Fatalf("error %v, want %q with the accepted forms", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.want:
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseFrom(t *testing.T) {
	for _, tc := range []struct {
		in, ns, name string
		gateway      bool
		err          bool
	}{
		{"shop/cart", "shop", "cart", false, false},
		{"cart", "default", "cart", false, false},
		{"gateway istio-system/ingress", "istio-system", "ingress", true, false},
		{"gateway ingress", "default", "ingress", true, false},
		{"shop/", "", "", false, true},
		{"a/b/c", "", "", false, true},
		{"sidecar shop/cart", "", "", false, true},
	} {
		ns, name, gw, err := ParseFrom(tc.in)
		if (err != nil) != tc.err || ns != tc.ns || name != tc.name || gw != tc.gateway {
			t.Errorf("%q: %q %q %v %v", tc.in, ns, name, gw, err)
		}
	}
}

const lookupMesh = `apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Pod
metadata: {name: cart, namespace: shop}
spec: {containers: [{name: app, image: app}]}
status: {podIP: 10.1.0.9}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.0.0.10, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: other}
spec: {clusterIP: 10.0.0.11, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: shop}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: tcp, port: 5432}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: shop, labels: {app: db}}
spec: {containers: [{name: db, image: db}]}
status: {podIP: 10.1.0.20}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: shop}
spec:
  hosts: [api.example.com]
  addresses: [240.0.0.1]
  ports: [{name: https, number: 443, protocol: TLS}]
  location: MESH_EXTERNAL
  resolution: DNS
`

// TestResolve: names resolve as a pod's DNS would, in the client's
// namespace first; defaults follow the target's form.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	run, err := compile.Run(ctx, compile.Inputs{Paths: []string{testfiles.Write(t, map[string]string{"m.yaml": lookupMesh})}}, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Address, Host, SNI, TLS, Protocol, Mode string
		Port                                    uint32
		ALPN                                    []string
	}
	for _, tc := range []struct {
		call Call
		want got
	}{
		{Call{From: "shop/cart", Target: "http://web/"}, got{"10.0.0.10", "web", "", "plaintext", "http", "outbound", 80, nil}},
		{Call{From: "shop/cart", Target: "http://web.other:80/"}, got{"10.0.0.11", "web.other", "", "plaintext", "http", "outbound", 80, nil}},
		{Call{From: "shop/cart", Target: "http://web.shop.svc.cluster.local:8080/"}, got{"10.0.0.10", "web.shop.svc.cluster.local:8080", "", "plaintext", "http", "outbound", 8080, nil}},
		{Call{From: "shop/cart", Target: "db:5432"}, got{"10.1.0.20", "db:5432", "", "plaintext", "tcp", "outbound", 5432, nil}},
		{Call{From: "shop/cart", Target: "https://api.example.com/"}, got{"240.0.0.1", "api.example.com", "api.example.com", "tls", "http", "outbound", 443, []string{"http/1.1"}}},
		{Call{From: "shop/cart", Target: "http://nowhere.example/"}, got{outsideAddress, "nowhere.example", "", "plaintext", "http", "outbound", 80, nil}},
		{Call{From: "shop/cart", Target: "http://10.0.0.10/", Headers: map[string]string{"Host": "web"}}, got{"10.0.0.10", "web", "", "plaintext", "http", "outbound", 80, nil}},
		{Call{From: "shop/cart", Target: "http://web/", Protocol: "grpc", TLS: "mtls"}, got{"10.0.0.10", "web", "", "mtls", "grpc", "outbound", 80, []string{"istio-h2"}}},
		{Call{From: "shop/cart", Target: "http://web/", Inbound: true}, got{"10.1.0.9", "web", "", "plaintext", "http", "inbound", 80, nil}},
	} {
		t.Run(tc.call.Target, func(t *testing.T) {
			_, r, err := Prepare(run, tc.call)
			if err != nil {
				t.Fatal(err)
			}
			q := r.Request
			if d := cmp.Diff(tc.want, got{q.Address, q.Host, q.SNI, r.TLS, r.Protocol, r.Mode, q.Port, q.ALPN}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	for _, c := range []Call{
		{From: "shop/card", Target: "http://web/"},
		{From: "gateway shop/cart", Target: "http://web/"},
		{From: "shop/cart", Target: "http://web/", ALPN: "h2"},
		{From: "shop/cart", Target: "http://web/", TLS: "ssl"},
	} {
		if _, _, err := Prepare(run, c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
