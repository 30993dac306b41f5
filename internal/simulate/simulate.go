// Package simulate follows a connection, and the HTTP request on it,
// through one proxy's Envoy configuration in memory the way Envoy would:
// the listener it lands on (original destination hand-off from
// virtualOutbound, virtualInbound for traffic from outside, a gateway's
// bound port), the filter chain (destination port and address, server
// name, transport and application protocols, source, default chain), the
// terminal network filter (HTTP connection manager or TCP proxy), the
// route configuration (inline or by RDS name), the virtual host (Envoy's
// domain matching), the first route that matches, its action, and the
// clusters and endpoints it sends to. Each step names the resource as
// the build wrote it and, where the build recorded one, the Istio object
// that wrote it; a request that matches nothing says where it stopped and
// why. No Envoy binary is involved.
package simulate

import (
	"fmt"
	"net/netip"
	"strings"

	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/meshc/meshc/internal/envoycfg"
)

// Protocol is what a client speaks once connected.
type Protocol string

const (
	// HTTP is HTTP/1.1.
	HTTP Protocol = "http"
	// HTTP2 is HTTP/2 (gRPC included); in plain text, with prior
	// knowledge (h2c).
	HTTP2 Protocol = "http2"
	// TCP is an opaque byte stream.
	TCP Protocol = "tcp"
)

// Request is one connection and, for HTTP, one request on it.
type Request struct {
	// Address and Port are where the connection goes: the destination
	// the application dialed (a service VIP, a pod IP), or the address
	// and port a gateway or an inbound listener receives it on.
	Address string
	Port    uint32
	// Source is the client's address and port, for chains that match on
	// them; empty is a client elsewhere.
	Source     string
	SourcePort uint32
	// Inbound sends the connection into the proxy from outside, through
	// virtualInbound, rather than from its own application.
	Inbound  bool
	Protocol Protocol
	// TLS says the client starts TLS, offering SNI and ALPN.
	TLS bool
	// MTLS says the client also presents a certificate, as a sidecar
	// does under Istio mutual TLS.
	MTLS bool
	SNI  string
	ALPN []string
	// Host (the authority), Method and Path (with any query) of an HTTP
	// request; Headers are further request headers, by lower-case name.
	Host, Method, Path string
	Headers            map[string]string
}

// Stage is a step of the walk.
type Stage string

// The stages, in the order the walk takes them.
const (
	Listener           Stage = "listener"
	FilterChain        Stage = "filterChain"
	NetworkFilter      Stage = "networkFilter"
	RouteConfiguration Stage = "routeConfiguration"
	VirtualHost        Stage = "virtualHost"
	Route              Stage = "route"
	Cluster            Stage = "cluster"
)

// Step is one resource or element the request went through.
type Step struct {
	Stage Stage
	// Name is the resource's or element's name as the build wrote it
	// (a filter chain or route may have none).
	Name string
	// Index is the position of a filter chain or route among its
	// siblings; -1 for a listener's default chain and for other stages.
	Index int
	// Detail says why this one, in a few words.
	Detail string
	// Origin is the Istio object that wrote it, when known.
	Origin *Origin
}

// Origin is an Istio object, and the rule in it when known.
type Origin struct {
	Kind, Namespace, Name string
	// Rule is the field that wrote the step ("spec.http[1]"), File and
	// Line where it is written; empty when only the object is known.
	Rule string
	File string
	Line int
}

func (o Origin) String() string {
	s := o.Kind + " " + o.Namespace + "/" + o.Name
	if o.Rule != "" {
		s += " " + o.Rule
	}
	if o.File != "" {
		s += fmt.Sprintf(" (%s:%d)", o.File, o.Line)
	}
	return s
}

// Trace is where a request went.
type Trace struct {
	Steps []Step
	// Action is what the route or TCP proxy does; nil when the walk
	// stopped before one.
	Action *Action
	// Targets are the clusters the action sends to, with their
	// endpoints: one, or each of a weighted split.
	Targets []Target
	// StoppedAt is the first stage that matched nothing, Reason why;
	// both empty when the request reached an action.
	StoppedAt Stage
	Reason    string
}

// Step finds the step of a stage.
func (t *Trace) Step(s Stage) (Step, bool) {
	for _, st := range t.Steps {
		if st.Stage == s {
			return st, true
		}
	}
	return Step{}, false
}

// Name is the name of the step of a stage, "" without one.
func (t *Trace) Name(s Stage) string {
	st, _ := t.Step(s)
	return st.Name
}

func (t *Trace) add(s Step) { t.Steps = append(t.Steps, s) }

func (t *Trace) stop(s Stage, format string, args ...any) *Trace {
	t.StoppedAt, t.Reason = s, fmt.Sprintf(format, args...)
	return t
}

// ActionKind is what an action does with a request.
type ActionKind string

// The kinds of action.
const (
	Forward        ActionKind = "forward"
	Redirect       ActionKind = "redirect"
	DirectResponse ActionKind = "directResponse"
)

// Action is a route's or TCP proxy's action, with what it changes about
// the request.
type Action struct {
	Kind ActionKind
	// Cluster is the one cluster of a forward; Weighted the split when
	// there are several (Cluster is then empty).
	Cluster  string
	Weighted []Weighted
	// Redirect: the location's parts that change, and the status.
	RedirectScheme, RedirectHost, RedirectPath string
	RedirectPort                               uint32
	// Status is a redirect's or direct response's code; Body a direct
	// response's inline body.
	Status uint32
	Body   string
	// PrefixRewrite, RegexRewrite and HostRewrite rewrite the forwarded
	// (for PrefixRewrite, also a redirected) request's path and authority.
	PrefixRewrite, RegexRewrite, HostRewrite string
	regexRewrite                             *matcherv3.RegexMatchAndSubstitute
	// Path (with query) and Authority are the request's as the action
	// forwards it, rewrites applied.
	Path, Authority string
	// Timeout is the route timeout ("0s": none); Retries the retry policy
	// ("2 on connect-failure,..."); Mirrors the mirrored clusters.
	Timeout string
	Retries string
	Mirrors []string
	// Fault says the route injects faults; RequestHeadersToAdd and
	// RequestHeadersToRemove are its header changes ("name: value").
	Fault                                       bool
	RequestHeadersToAdd, RequestHeadersToRemove []string
}

// Weighted is one target of a weighted split.
type Weighted struct {
	Cluster string
	Weight  uint32
}

// Target is a cluster the action sends to.
type Target struct {
	Cluster string
	// Weight is the cluster's share of a split; 0 for a single cluster.
	Weight uint32
	// Type is the cluster's discovery type (EDS, STATIC, STRICT_DNS,
	// ORIGINAL_DST...); empty when the configuration has no such cluster.
	Type string
	// Origin is the DestinationRule that shaped the cluster, if any.
	Origin *Origin
	// Policy is how the cluster connects; zero when the configuration
	// has no such cluster.
	Policy    Policy
	Endpoints []Endpoint
}

// Policy is what a DestinationRule's traffic policy becomes in a
// cluster, each part empty when unset.
type Policy struct {
	// LoadBalancer is the policy (ROUND_ROBIN, LEAST_REQUEST...).
	LoadBalancer string
	// TLS is "TLS", "mutual TLS" (a client certificate too) or "Istio
	// mutual TLS to endpoints with tlsMode istio"; SNI what it sends.
	TLS, SNI string
	// Pool lists the connection limits below Envoy's maximum
	// ("max connections 100"); OutlierDetection its settings.
	Pool, OutlierDetection []string
}

// Endpoint is one endpoint of a cluster.
type Endpoint struct {
	Address string
	Port    uint32
	// Locality is "region/zone/subzone", empty parts left empty.
	Locality string
	// TLSMode is the endpoint's tlsMode label ("istio" when the client
	// sends mutual TLS), empty without one.
	TLSMode string
	Weight  uint32
}

// Run walks req through cfg.
func Run(cfg *envoycfg.Config, req Request) *Trace {
	t := &Trace{}
	dst, err := netip.ParseAddr(req.Address)
	if err != nil {
		return t.stop(Listener, "destination %q is not an IP address", req.Address)
	}
	l, why := pickListener(cfg, dst, req)
	if l == nil {
		return t.stop(Listener, "%s", why)
	}
	t.add(Step{Stage: Listener, Name: l.GetName(), Index: -1, Detail: why})
	conn := detect(l, req)
	fc, index, why := pickChain(l, dst, conn, req)
	if fc == nil {
		return t.stop(FilterChain, "no filter chain of %s matches: %s", l.GetName(), why)
	}
	t.add(Step{Stage: FilterChain, Name: fc.GetName(), Index: index, Detail: why, Origin: metadataOrigin(fc.GetMetadata())})
	if why := handshake(fc, req); why != "" {
		return t.stop(NetworkFilter, "%s", why)
	}
	terminal(cfg, t, fc, req, dst)
	return t
}

// String renders a trace on one line per step, for tests and logs.
func (t *Trace) String() string {
	var b strings.Builder
	for _, s := range t.Steps {
		fmt.Fprintf(&b, "%s %q", s.Stage, s.Name)
		if s.Index >= 0 {
			fmt.Fprintf(&b, " [%d]", s.Index)
		}
		if s.Detail != "" {
			b.WriteString(" (" + s.Detail + ")")
		}
		if s.Origin != nil {
			b.WriteString(" from " + s.Origin.String())
		}
		b.WriteByte('\n')
	}
	if a := t.Action; a != nil {
		fmt.Fprintf(&b, "action %s %s%v status %d\n", a.Kind, a.Cluster, a.Weighted, a.Status)
	}
	for _, tg := range t.Targets {
		fmt.Fprintf(&b, "target %s (%s) %d endpoints\n", tg.Cluster, tg.Type, len(tg.Endpoints))
	}
	if t.StoppedAt != "" {
		fmt.Fprintf(&b, "stopped at %s: %s\n", t.StoppedAt, t.Reason)
	}
	return b.String()
}
