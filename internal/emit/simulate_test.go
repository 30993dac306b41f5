package emit

import (
	"cmp"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/simulate"
)

// call is a connection an application makes through its sidecar: to
// ip:port, speaking plain HTTP (with a Host and path), TLS (with an SNI
// in host) or opaque TCP.
type call struct {
	ip        string
	port      uint32
	kind      string // "http", "tls" or "tcp"
	host, uri string
}

// outcome is where Envoy sends a call: the cluster, and for HTTP the
// route's name.
type outcome struct {
	route, cluster string
}

// walk follows a call through a sidecar's config with the request
// simulator.
func walk(t *testing.T, cfg *Config, c call) outcome {
	t.Helper()
	res, err := cfg.Resources()
	if err != nil {
		t.Fatal(err)
	}
	req := simulate.Request{Address: c.ip, Port: c.port, Protocol: simulate.TCP}
	switch c.kind {
	case "http":
		req.Protocol, req.Host, req.Path = simulate.HTTP, c.host, cmp.Or(c.uri, "/")
	case "tls":
		req.TLS, req.SNI = true, c.host
	}
	tr := simulate.Run(res, req)
	if tr.StoppedAt != "" {
		return outcome{}
	}
	out := outcome{route: tr.Name(simulate.Route), cluster: tr.Action.Cluster}
	if len(tr.Action.Weighted) > 0 {
		out.cluster = tr.Action.Weighted[0].Cluster
	}
	return out
}

// sidecarCalls checks where each call lands.
func sidecarCalls(t *testing.T, cfg *Config, calls []call, want func(call) outcome) {
	t.Helper()
	for _, c := range calls {
		got, w := walk(t, cfg, c), want(c)
		if got != w {
			t.Errorf("%s call to %s:%d (host %q, uri %q) lands at %+v, want %+v", c.kind, c.ip, c.port, c.host, c.uri, got, w)
		}
	}
}

// TestC47HeadlessCalls: docs/semantics/cases.md C47, the calls: every port of a
// headless service, whatever the protocol, reaches the service's cluster
// when the application dials a pod.
func TestC47HeadlessCalls(t *testing.T) {
	cfg := compile(t, Options{Format: XDS}, "default/client", injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: headless, namespace: default}
spec:
  clusterIP: None
  selector: {app: headless}
  ports: [{name: http, port: 80}, {name: auto, port: 81}, {name: tcp, port: 82}, {name: tls, port: 83}, {name: https, port: 84}]`,
		`apiVersion: v1
kind: Pod
metadata: {name: headless-0, namespace: default, labels: {app: headless}}
spec: {containers: [{name: app, image: x}]}
status: {podIP: 1.2.3.4}`)
	const fqdn host.Name = "headless.default.svc.cluster.local"
	sidecarCalls(t, cfg, everyPortCalls(fqdn), defaultRouteTo(fqdn))
}

// everyPortCalls are docs/semantics/cases.md C47's calls to 1.2.3.4 on ports 80 to 84 (http,
// auto, tcp, tls, https): HTTP, TLS and TCP where each port takes them,
// TLS naming the host in its short form.
func everyPortCalls(h host.Name) []call {
	short := strings.TrimSuffix(string(h), ".svc.cluster.local")
	return []call{
		{ip: "1.2.3.4", port: 80, kind: "http", host: string(h)},
		{ip: "1.2.3.4", port: 81, kind: "http", host: string(h)},
		{ip: "1.2.3.4", port: 81, kind: "tls", host: string(h)},
		{ip: "1.2.3.4", port: 81, kind: "tcp"},
		{ip: "1.2.3.4", port: 82, kind: "tcp"},
		{ip: "1.2.3.4", port: 83, kind: "tls", host: short},
		{ip: "1.2.3.4", port: 84, kind: "tls", host: short},
	}
}

// defaultRouteTo expects a call at h's cluster for its port, by the
// default route for HTTP.
func defaultRouteTo(h host.Name) func(call) outcome {
	return func(c call) outcome {
		o := outcome{cluster: resolve.ClusterName(c.port, "", h)}
		if c.kind == "http" {
			o.route = "default"
		}
		return o
	}
}

// TestC48AliasCalls: docs/semantics/cases.md C48, the calls: every call to the
// concrete VIP reaches the concrete service; the alias's VirtualService
// applies only to HTTP with exactly the alias's name as Host, and a TCP
// VirtualService on the alias changes nothing.
func TestC48AliasCalls(t *testing.T) {
	docs := []string{injectedNs, clientPod,
		`apiVersion: v1
kind: Service
metadata: {name: alias, namespace: default}
spec: {type: ExternalName, externalName: concrete.default.svc.cluster.local}`,
		`apiVersion: v1
kind: Service
metadata: {name: concrete, namespace: default}
spec: {clusterIP: 1.2.3.4, ports: [{name: http, port: 80}, {name: auto, port: 81}, {name: tcp, port: 82}, {name: tls, port: 83}, {name: https, port: 84}]}`}
	const alias, concrete host.Name = "alias.default.svc.cluster.local", "concrete.default.svc.cluster.local"
	to := defaultRouteTo(concrete)
	t.Run("no VirtualService", func(t *testing.T) {
		sidecarCalls(t, compile(t, Options{Format: XDS}, "default/client", docs...), everyPortCalls(alias), to)
	})
	t.Run("HTTP VirtualService on the alias", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", append(docs, `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: alias, namespace: default}
spec:
  hosts: [alias.default.svc.cluster.local]
  http:
  - name: route1
    match: [{uri: {prefix: /one}}]
    route: [{destination: {host: concrete.default.svc.cluster.local}}]`)...)
		sidecarCalls(t, cfg, []call{
			{ip: "1.2.3.4", port: 80, kind: "http", host: string(alias), uri: "/one"},
		}, func(c call) outcome { return outcome{route: "route1", cluster: resolve.ClusterName(80, "", concrete)} })
		sidecarCalls(t, cfg, []call{
			{ip: "1.2.3.4", port: 80, kind: "http", host: "alias.default", uri: "/one"},
			{ip: "1.2.3.4", port: 80, kind: "http", host: string(concrete), uri: "/one"},
			{ip: "1.2.3.4", port: 81, kind: "http", host: string(alias), uri: "/one"},
			{ip: "1.2.3.4", port: 81, kind: "http", host: "alias.default", uri: "/one"},
			{ip: "1.2.3.4", port: 81, kind: "http", host: string(concrete), uri: "/one"},
		}, to)
	})
	t.Run("TCP VirtualService on the alias", func(t *testing.T) {
		cfg := compile(t, Options{Format: XDS}, "default/client", append(docs, `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: alias, namespace: default}
spec:
  hosts: [alias.default.svc.cluster.local]
  tcp:
  - route: [{destination: {host: concrete.default.svc.cluster.local, port: {number: 80}}}]`)...)
		sidecarCalls(t, cfg, []call{{ip: "1.2.3.4", port: 82, kind: "tcp"}}, to)
	})
}
