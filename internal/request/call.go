// Package request answers "where does this request go?": it turns what a
// user asks (a proxy, a URL or host:port, a method, headers, TLS) into a
// connection as the proxy would see it, walks the proxy's Envoy
// configuration with internal/simulate, and reports each step with the
// Envoy resource names as meshc build writes them and the Istio object,
// rule and file:line behind it. meshc explain request and meshc test use
// it.
package request

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/simulate"
)

// Call is a request as a user asks it, on the command line or in a test
// file.
type Call struct {
	// From is the requesting proxy, "namespace/name", or "gateway
	// namespace/name" for a request arriving at a gateway from outside
	// the mesh.
	From string `json:"from" yaml:"from"`
	// Target is a URL (http://reviews:9080/api, https://x.example.com/)
	// or host:port / IP:port.
	Target string `json:"target" yaml:"target"`
	Method string `json:"method,omitempty" yaml:"method,omitempty"`
	// Headers are request headers; "host" sets the authority.
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	SNI     string            `json:"sni,omitempty" yaml:"sni,omitempty"`
	// TLS is plaintext, tls or mtls; default tls for https URLs,
	// plaintext otherwise.
	TLS  string `json:"tls,omitempty" yaml:"tls,omitempty"`
	ALPN string `json:"alpn,omitempty" yaml:"alpn,omitempty"`
	// Protocol is http, http2, grpc or tcp; default http for URLs, tcp
	// for host:port.
	Protocol string `json:"protocol,omitempty" yaml:"protocol,omitempty"`
	// Inbound sends the request into the proxy from outside.
	Inbound bool `json:"inbound,omitempty" yaml:"inbound,omitempty"`
}

// The values Call's enumerations take.
var (
	TLSModes  = []string{"plaintext", "tls", "mtls"}
	Protocols = []string{"http", "http2", "grpc", "tcp"}
)

// TargetForms lists the accepted forms of a target, for error messages.
const TargetForms = "http://HOST[:PORT][/PATH[?QUERY]], https://HOST[:PORT][/PATH], HOST:PORT or IP:PORT"

// UsageError is a call that cannot be made as written.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ParseFrom splits a FROM into the proxy's namespace and name, and
// whether it is a gateway; a name without namespace is in "default".
func ParseFrom(from string) (ns, name string, gateway bool, err error) {
	f := strings.Fields(from)
	if len(f) == 2 && f[0] == "gateway" {
		gateway, f = true, f[1:]
	}
	if len(f) != 1 {
		return "", "", false, usage("from %q: want [NAMESPACE/]NAME or gateway [NAMESPACE/]NAME", from)
	}
	ns, name, ok := strings.Cut(f[0], "/")
	if !ok {
		ns, name = "default", f[0]
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", false, usage("from %q: want [NAMESPACE/]NAME or gateway [NAMESPACE/]NAME", from)
	}
	return ns, name, gateway, nil
}

// target is a parsed TARGET.
type target struct {
	url              bool
	scheme, hostname string
	port             uint32
	// explicitPort says the port was written in the URL.
	explicitPort bool
	path         string
}

// parseTarget reads a URL or host:port.
func parseTarget(s string) (target, error) {
	bad := func(why string) error {
		return usage("target %q %s; want %s", s, why, TargetForms)
	}
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		u, err := url.Parse(s)
		if err != nil {
			return target{}, bad("is not a URL")
		}
		t := target{url: true, scheme: strings.ToLower(scheme), hostname: u.Hostname(), path: u.EscapedPath()}
		switch t.scheme {
		case "http":
			t.port = 80
		case "https":
			t.port = 443
		default:
			return target{}, bad("has scheme " + scheme)
		}
		if t.hostname == "" {
			return target{}, bad("has no host")
		}
		if p := u.Port(); p != "" {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return target{}, bad("has a bad port")
			}
			t.port, t.explicitPort = uint32(n), true
		}
		if t.path == "" {
			t.path = "/"
		}
		if u.RawQuery != "" {
			t.path += "?" + u.RawQuery
		}
		return t, nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil || h == "" || strings.ContainsAny(h, "/?#") {
		return target{}, bad("is neither a URL nor host:port")
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return target{}, bad("has a bad port")
	}
	return target{hostname: h, port: uint32(n), explicitPort: true, path: "/"}, nil
}

// outsideAddress is where a name the mesh does not know is taken to
// resolve: an address of no service (TEST-NET-3).
const outsideAddress = "203.0.113.1"

// Resolved is a call as the proxy sees it.
type Resolved struct {
	Request simulate.Request
	// Mode is outbound, inbound or gateway.
	Mode string
	// TLS is the call's TLS mode, Protocol its protocol, after defaults.
	TLS, Protocol string
	// Service is the mesh service the target's name resolved to, if any;
	// AddressNote says how the address was found.
	Service     *resolve.Service
	AddressNote string
}

// resolveCall turns a call from view's proxy into the connection and
// request the proxy sees.
func resolveCall(mesh *resolve.Mesh, view *resolve.ProxyView, c Call, gateway bool) (*Resolved, error) {
	t, err := parseTarget(c.Target)
	if err != nil {
		return nil, err
	}
	r := &Resolved{Mode: "outbound", TLS: c.TLS, Protocol: c.Protocol}
	switch {
	case gateway && c.Inbound:
		return nil, usage("a gateway takes requests from outside already: drop inbound")
	case gateway:
		r.Mode = "gateway"
	case c.Inbound:
		r.Mode = "inbound"
	}
	if r.Protocol == "" {
		r.Protocol = "tcp"
		if t.url {
			r.Protocol = "http"
		}
	}
	if r.TLS == "" {
		r.TLS = "plaintext"
		if t.scheme == "https" {
			r.TLS = "tls"
		}
	}
	if !slices.Contains(Protocols, r.Protocol) {
		return nil, usage("protocol %q: want one of %s", r.Protocol, strings.Join(Protocols, ", "))
	}
	if !slices.Contains(TLSModes, r.TLS) {
		return nil, usage("tls %q: want one of %s", r.TLS, strings.Join(TLSModes, ", "))
	}
	if c.ALPN != "" && r.TLS == "plaintext" {
		return nil, usage("alpn %q: ALPN is offered in a TLS handshake only (add tls: tls or mtls)", c.ALPN)
	}
	req := simulate.Request{Port: t.port, Method: strings.ToUpper(c.Method), Path: t.path, SNI: c.SNI, Inbound: c.Inbound}
	if req.Method == "" {
		req.Method = "GET"
	}
	req.Host = t.hostname
	if t.explicitPort && (!t.url || t.port != map[string]uint32{"http": 80, "https": 443}[t.scheme]) {
		req.Host = net.JoinHostPort(t.hostname, strconv.Itoa(int(t.port)))
	}
	for k, v := range c.Headers {
		k = strings.ToLower(k)
		if k == "host" || k == ":authority" {
			req.Host = v
			continue
		}
		if req.Headers == nil {
			req.Headers = map[string]string{}
		}
		req.Headers[k] = v
	}
	switch r.Protocol {
	case "http":
		req.Protocol = simulate.HTTP
	case "http2", "grpc":
		req.Protocol = simulate.HTTP2
	case "tcp":
		req.Protocol = simulate.TCP
	}
	if r.Protocol == "grpc" {
		if _, ok := req.Headers["content-type"]; !ok {
			if req.Headers == nil {
				req.Headers = map[string]string{}
			}
			req.Headers["content-type"] = "application/grpc"
		}
	}
	if r.TLS != "plaintext" {
		req.TLS, req.MTLS = true, r.TLS == "mtls"
		req.ALPN = alpn(c.ALPN, r.TLS, r.Protocol)
		if req.SNI == "" && r.TLS == "tls" {
			req.SNI = stripPort(req.Host)
		}
	}
	r.Service, req.Address, r.AddressNote = lookup(mesh, view.Proxy.Namespace, t.hostname)
	switch r.Mode {
	case "gateway", "inbound":
		// The connection arrives at the workload: its own address, on the
		// port its Service sends the target's port to.
		if ips := view.Proxy.IPs; len(ips) > 0 {
			req.Address, r.AddressNote = ips[0], "the proxy's address"
		} else {
			req.Address, r.AddressNote = "0.0.0.0", "the manifests give the proxy no address"
		}
		served := r.Service
		if r.Mode == "gateway" {
			// Clients outside reach the gateway through its own Service,
			// whatever name they ask for; a target naming an address a
			// server binds reaches that server's listener.
			served, req.Source = nil, outsideAddress
			if boundAddress(view, t.hostname) {
				req.Address, r.AddressNote = t.hostname, "an address a Gateway server binds"
			}
		}
		req.Port = workloadPort(mesh, view.Proxy, served, t.port)
	}
	r.Request = req
	return r, nil
}

// alpn is what a client offers: the given list, else what a client of
// the protocol offers (an Istio sidecar's istio-* values under mutual
// TLS).
func alpn(given, tls, proto string) []string {
	if given != "" {
		return strings.Split(given, ",")
	}
	http1, http2, other := "http/1.1", "h2", ""
	if tls == "mtls" {
		http1, http2, other = "istio-http/1.1", "istio-h2", "istio"
	}
	p := other
	switch proto {
	case "http":
		p = http1
	case "http2", "grpc":
		p = http2
	}
	if p == "" {
		return nil
	}
	return []string{p}
}

func stripPort(authority string) string {
	if h, _, err := net.SplitHostPort(authority); err == nil {
		return h
	}
	return authority
}

// lookup resolves a name as a client's DNS would in namespace ns: an IP
// as is; a name through the pod's search domains (ns.svc.SUFFIX,
// svc.SUFFIX, SUFFIX) and then as written, to the first mesh service of
// that name; the service's VIP, or a headless service's first endpoint.
// A name the mesh does not know resolves outside it.
func lookup(mesh *resolve.Mesh, ns, name string) (*resolve.Service, string, string) {
	if a, err := netip.ParseAddr(name); err == nil {
		for _, s := range mesh.Services {
			if slices.Contains(s.Addresses, a.String()) {
				return s, a.String(), "an address of " + string(s.Host)
			}
		}
		return nil, a.String(), ""
	}
	suffix := mesh.Config.DomainSuffix
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	for _, h := range []string{name + "." + ns + ".svc." + suffix, name + ".svc." + suffix, name + "." + suffix, name} {
		svcs := mesh.ServicesNamed(host.Name(h))
		if len(svcs) == 0 {
			continue
		}
		s := svcs[0]
		if addr := firstAddress(s); addr != "" {
			return s, addr, h
		}
		for _, e := range s.Endpoints {
			if _, err := netip.ParseAddr(e.Address); err == nil {
				return s, e.Address, h + ", headless: its first endpoint"
			}
		}
		return s, outsideAddress, h + " has no address the manifests give: " + outsideAddress + " stands in"
	}
	return nil, outsideAddress, "not a mesh service: " + outsideAddress + " stands in, outside the mesh"
}

// firstAddress is a service's first VIP, "" for none.
func firstAddress(s *resolve.Service) string {
	for _, a := range s.Addresses {
		if a != "" && a != "0.0.0.0" {
			return a
		}
	}
	return ""
}

// workloadPort is the port a workload receives a service port on: the
// target port of the service it serves on it, else the port itself.
func workloadPort(mesh *resolve.Mesh, p *resolve.Proxy, s *resolve.Service, port uint32) uint32 {
	if p.Object == nil {
		return port
	}
	for _, sp := range mesh.ServedPorts(p.Object) {
		if sp.Port.Number == port && sp.Target != 0 && (s == nil || sp.Service == s || sp.Service.Host == s.Host) {
			return sp.Target
		}
	}
	return port
}

// Prepare finds a call's proxy in a compiled mesh and resolves the call
// from it. A FROM naming no proxy is an error listing the nearest names;
// a bad target or option a *UsageError.
func Prepare(run *compile.Result, c Call) (*resolve.ProxyView, *Resolved, error) {
	ns, name, gateway, err := ParseFrom(c.From)
	if err != nil {
		return nil, nil, err
	}
	v, err := run.Proxy(ns, name)
	if err != nil {
		return nil, nil, &UsageError{err}
	}
	switch {
	case gateway && v.Proxy.Type != resolve.RouterProxy:
		return nil, nil, usage("%s is a sidecar, not a gateway: drop \"gateway\"", v.Proxy.ID())
	case v.Proxy.Type == resolve.RouterProxy && !c.Inbound:
		// A gateway has no application of its own: requests come from
		// outside.
		gateway = true
	}
	r, err := resolveCall(run.Mesh, v, c, gateway)
	if err != nil {
		return nil, nil, err
	}
	return v, r, nil
}

// BuildOptions are how a call's proxy configuration is built: as an xDS
// server sends it, names as meshc build writes them.
func BuildOptions() compile.BuildOptions { return compile.BuildOptions{Format: "xds"} }

// boundAddress says whether addr is an address a Gateway server of the
// router binds.
func boundAddress(view *resolve.ProxyView, addr string) bool {
	return slices.ContainsFunc(view.Gateways, func(gs resolve.GatewayServer) bool {
		return gs.Bind() == addr
	})
}
