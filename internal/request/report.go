package request

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	meshv1 "istio.io/api/mesh/v1alpha1"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/host"
	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/resolve"
	"github.com/meshc/meshc/internal/simulate"
)

// Report is where a request went: the JSON of meshc explain request
// (docs/explain-request.md). The step fields name the Envoy resources
// as meshc build writes them; a field is absent when the walk did not
// reach the step or the resource has no name.
type Report struct {
	From               string           `json:"from"`
	Request            RequestInfo      `json:"request"`
	Listener           string           `json:"listener,omitempty"`
	FilterChain        string           `json:"filterChain,omitempty"`
	RouteConfiguration string           `json:"routeConfiguration,omitempty"`
	VirtualHost        string           `json:"virtualHost,omitempty"`
	Route              string           `json:"route,omitempty"`
	Action             *Action          `json:"action,omitempty"`
	Cluster            string           `json:"cluster,omitempty"`
	WeightedClusters   []WeightedTarget `json:"weightedClusters,omitempty"`
	Clusters           []Cluster        `json:"clusters,omitempty"`
	Endpoints          []Endpoint       `json:"endpoints,omitempty"`
	StoppedAt          string           `json:"stoppedAt,omitempty"`
	Reason             string           `json:"reason,omitempty"`
	Objects            []Object         `json:"objects,omitempty"`
	// Steps are the walk's steps, for the text report.
	Steps []simulate.Step `json:"-"`
	// RouteRule is the VirtualService rule of the route taken, if any.
	RouteRule *Object `json:"-"`
}

// RequestInfo is the request as the proxy received it.
type RequestInfo struct {
	Mode     string            `json:"mode"`
	Address  string            `json:"address"`
	Port     uint32            `json:"port"`
	Resolved string            `json:"resolved,omitempty"`
	Protocol string            `json:"protocol"`
	TLS      string            `json:"tls"`
	SNI      string            `json:"sni,omitempty"`
	ALPN     []string          `json:"alpn,omitempty"`
	Host     string            `json:"host,omitempty"`
	Method   string            `json:"method,omitempty"`
	Path     string            `json:"path,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
}

// Action is what the route or TCP proxy does.
type Action struct {
	Kind           string   `json:"kind"`
	Status         uint32   `json:"status,omitempty"`
	RedirectScheme string   `json:"redirectScheme,omitempty"`
	RedirectHost   string   `json:"redirectHost,omitempty"`
	RedirectPort   uint32   `json:"redirectPort,omitempty"`
	RedirectPath   string   `json:"redirectPath,omitempty"`
	Body           string   `json:"body,omitempty"`
	PrefixRewrite  string   `json:"prefixRewrite,omitempty"`
	RegexRewrite   string   `json:"regexRewrite,omitempty"`
	HostRewrite    string   `json:"hostRewrite,omitempty"`
	Path           string   `json:"path,omitempty"`
	Authority      string   `json:"authority,omitempty"`
	Timeout        string   `json:"timeout,omitempty"`
	Retries        string   `json:"retries,omitempty"`
	Mirrors        []string `json:"mirrors,omitempty"`
	Fault          bool     `json:"fault,omitempty"`
	HeadersToAdd   []string `json:"requestHeadersToAdd,omitempty"`
	HeadersRemoved []string `json:"requestHeadersToRemove,omitempty"`
}

// WeightedTarget is one cluster of a weighted split.
type WeightedTarget struct {
	Name   string `json:"name"`
	Weight uint32 `json:"weight"`
}

// Cluster is a cluster the action sends to and how it connects.
type Cluster struct {
	Name string `json:"name"`
	// Weight is its share of a weighted split.
	Weight uint32 `json:"weight,omitempty"`
	// Type is the discovery type; empty when the configuration has no
	// such cluster.
	Type             string   `json:"type,omitempty"`
	LoadBalancer     string   `json:"loadBalancer,omitempty"`
	TLS              string   `json:"tls,omitempty"`
	SNI              string   `json:"sni,omitempty"`
	Pool             []string `json:"pool,omitempty"`
	OutlierDetection []string `json:"outlierDetection,omitempty"`
}

// Endpoint is one endpoint of a cluster the action sends to.
type Endpoint struct {
	Cluster  string `json:"cluster"`
	Address  string `json:"address"`
	Port     uint32 `json:"port,omitempty"`
	Locality string `json:"locality,omitempty"`
	TLSMode  string `json:"tlsMode,omitempty"`
	Weight   uint32 `json:"weight,omitempty"`
}

// Object is an Istio object behind a step.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	// Rule is the field that decided ("spec.http[0]", "spec.servers[1]",
	// "egress host ./*").
	Rule string `json:"rule,omitempty"`
	// Why says which step it decided, in a few words.
	Why string `json:"why,omitempty"`
}

func (o Object) String() string {
	return simulate.Origin{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Rule: o.Rule, File: o.File, Line: o.Line}.String()
}

// Explain walks a resolved call through cfg, the configuration of view's
// proxy, and reports it.
func Explain(mesh *resolve.Mesh, view *resolve.ProxyView, cfg *envoycfg.Config, from string, r *Resolved) *Report {
	tr := simulate.Run(cfg, r.Request)
	req := r.Request
	rep := &Report{From: from, Steps: tr.Steps, StoppedAt: string(tr.StoppedAt), Reason: tr.Reason,
		Request: RequestInfo{Mode: r.Mode, Address: req.Address, Port: req.Port, Resolved: r.AddressNote, Protocol: r.Protocol,
			TLS: r.TLS, SNI: req.SNI, ALPN: req.ALPN}}
	if req.Protocol != simulate.TCP {
		rep.Request.Host, rep.Request.Method, rep.Request.Path, rep.Request.Headers = req.Host, req.Method, req.Path, req.Headers
	}
	rep.Listener = tr.Name(simulate.Listener)
	rep.FilterChain = tr.Name(simulate.FilterChain)
	rep.RouteConfiguration = tr.Name(simulate.RouteConfiguration)
	rep.VirtualHost = tr.Name(simulate.VirtualHost)
	rep.Route = tr.Name(simulate.Route)
	if a := tr.Action; a != nil {
		rep.Action = &Action{Kind: string(a.Kind), Status: a.Status, RedirectScheme: a.RedirectScheme, RedirectHost: a.RedirectHost,
			RedirectPort: a.RedirectPort, RedirectPath: a.RedirectPath, Body: a.Body, PrefixRewrite: a.PrefixRewrite,
			RegexRewrite: a.RegexRewrite, HostRewrite: a.HostRewrite, Path: a.Path, Authority: a.Authority, Timeout: a.Timeout, Retries: a.Retries, Mirrors: a.Mirrors,
			Fault: a.Fault, HeadersToAdd: a.RequestHeadersToAdd, HeadersRemoved: a.RequestHeadersToRemove}
		rep.Cluster = a.Cluster
		for _, w := range a.Weighted {
			rep.WeightedClusters = append(rep.WeightedClusters, WeightedTarget{Name: w.Cluster, Weight: w.Weight})
		}
		if len(a.Weighted) > 0 {
			rep.Cluster = ""
		}
	}
	for _, tg := range tr.Targets {
		p := tg.Policy
		rep.Clusters = append(rep.Clusters, Cluster{Name: tg.Cluster, Weight: tg.Weight, Type: tg.Type, LoadBalancer: p.LoadBalancer,
			TLS: p.TLS, SNI: p.SNI, Pool: p.Pool, OutlierDetection: p.OutlierDetection})
		for _, e := range tg.Endpoints {
			rep.Endpoints = append(rep.Endpoints, Endpoint{Cluster: tg.Cluster, Address: e.Address, Port: e.Port, Locality: e.Locality, TLSMode: e.TLSMode, Weight: e.Weight})
		}
	}
	rep.objects(mesh, view, tr, r)
	rep.explainStop(mesh, view, r)
	if rep.StoppedAt == string(simulate.Route) {
		if by := routeAuthors(cfg, rep.RouteConfiguration, rep.VirtualHost); by != "" {
			rep.Reason += "; its routes come from " + by
		}
	}
	return rep
}

// routeAuthors names the VirtualServices whose rules make up a virtual
// host's routes, each once with its file and line.
func routeAuthors(cfg *envoycfg.Config, routeConfig, virtualHost string) string {
	rc := cfg.Route(routeConfig)
	var names []string
	for _, vh := range rc.GetVirtualHosts() {
		if vh.GetName() != virtualHost {
			continue
		}
		for i := range vh.GetRoutes() {
			o, ok := cfg.RouteOrigin(envoycfg.RouteRef{Config: routeConfig, VirtualHost: virtualHost, Index: i})
			if !ok {
				continue
			}
			ref := o.Object.Ref()
			n := fmt.Sprintf("%s %s/%s (%s:%d)", ref.Kind, ref.Namespace, ref.Name, ref.File, ref.Line)
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return strings.Join(names, ", ")
}

// objects lists the Istio objects behind the walk, in step order: the
// Gateway server a gateway request arrived at, the VirtualService rule
// of the route, the Sidecar egress host that imported each destination,
// and the DestinationRule that shaped each cluster.
func (rep *Report) objects(mesh *resolve.Mesh, view *resolve.ProxyView, tr *simulate.Trace, r *Resolved) {
	add := func(o Object) {
		if !slices.Contains(rep.Objects, o) {
			rep.Objects = append(rep.Objects, o)
		}
	}
	if r.Mode == "gateway" {
		if gs, ok := gatewayServer(mesh, view, r); ok {
			ref := gs.Gateway.RefAt(model.ParsePath(fmt.Sprintf("spec.servers[%d]", gs.Index)))
			add(Object{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, File: ref.File, Line: ref.Line,
				Rule: fmt.Sprintf("spec.servers[%d]", gs.Index), Why: fmt.Sprintf("server on port %d", gs.Port)})
		}
	}
	for _, s := range tr.Steps {
		if s.Origin == nil {
			continue
		}
		o := Object{Kind: s.Origin.Kind, Namespace: s.Origin.Namespace, Name: s.Origin.Name, File: s.Origin.File, Line: s.Origin.Line, Rule: s.Origin.Rule}
		switch s.Stage {
		case simulate.Route:
			o.Why = "route"
			rr := o
			rep.RouteRule = &rr
		case simulate.Cluster:
			continue // the DestinationRule below says more
		default:
			o.Why = string(s.Stage)
		}
		add(o)
	}
	for _, tg := range tr.Targets {
		id, ok := resolve.ParseClusterID(tg.Cluster)
		h := string(id.Host)
		if !ok || r.Mode == "inbound" {
			continue
		}
		if sc := view.Scope; sc.Choice.Sidecar != nil {
			if imp, ok := sc.Import(host.Name(h)); ok {
				sd := sc.Choice.Sidecar
				ref := sd.Ref()
				why := "imports " + h
				rule := "egress host " + imp.Entry
				if imp.Entry == "" && imp.ViaVirtualService != nil {
					rule = "a VirtualService route (" + imp.ViaVirtualService.Namespace + "/" + imp.ViaVirtualService.Name + ")"
				}
				add(Object{Kind: "Sidecar", Namespace: sd.Namespace, Name: sd.Name, File: ref.File, Line: ref.Line, Rule: rule, Why: why})
			}
		}
		d, ok := view.Scope.DestinationRule(host.Name(h))
		if !ok || d.Rule == nil {
			continue
		}
		dr := d.Rule.PolicyFrom
		if dr == nil && len(d.Rule.From) > 0 {
			dr = d.Rule.From[0]
		}
		if dr == nil {
			continue
		}
		subset := id.Subset
		o := Object{Kind: dr.Kind, Namespace: dr.Namespace, Name: dr.Name, Why: fmt.Sprintf("policy of %s (found in the %s)", h, d.Lookup.Step)}
		ref := dr.Ref()
		if subset != "" {
			for _, from := range d.Rule.From {
				if i := slices.IndexFunc(from.Spec.GetSubsets(), func(s *networking.Subset) bool { return s.GetName() == subset }); i >= 0 {
					dr, o.Name, o.Namespace = from, from.Name, from.Namespace
					o.Rule = fmt.Sprintf("spec.subsets[%d]", i)
					ref = dr.RefAt(model.ParsePath(o.Rule))
					break
				}
			}
		}
		o.File, o.Line = ref.File, ref.Line
		add(o)
	}
}

// gatewayServer is the Gateway server a gateway request arrived at: the
// first on the request's port whose hosts take its authority, among the
// servers bound to the request's address, or, when none is, the unbound
// ones (as Envoy picks a listener: the exact address before the wildcard).
func gatewayServer(mesh *resolve.Mesh, view *resolve.ProxyView, r *Resolved) (resolve.GatewayServer, bool) {
	name := strings.ToLower(stripPort(r.Request.Host))
	if r.Request.SNI != "" {
		name = strings.ToLower(r.Request.SNI)
	}
	onPort := func(gs resolve.GatewayServer) bool {
		p := r.Request.Port
		return gs.Port == p || workloadPort(mesh, view.Proxy, nil, gs.Port) == p
	}
	bind := ""
	if slices.ContainsFunc(view.Gateways, func(gs resolve.GatewayServer) bool { return onPort(gs) && gs.Bind() == r.Request.Address }) {
		bind = r.Request.Address
	}
	for _, gs := range view.Gateways {
		if !onPort(gs) || gs.Bind() != bind {
			continue
		}
		for _, h := range gs.Hosts {
			if _, after, ok := strings.Cut(h, "/"); ok {
				h = after
			}
			if h == "*" || h == name || (strings.HasPrefix(h, "*.") && strings.HasSuffix(name, h[1:])) {
				return gs, true
			}
		}
	}
	return resolve.GatewayServer{}, false
}

// explainStop says in the user's terms why a request went nowhere, or
// fell to a catch-all: a host the Sidecar does not import or the mesh
// does not know, an unknown destination blocked by REGISTRY_ONLY, a
// gateway port no server binds.
func (rep *Report) explainStop(mesh *resolve.Mesh, view *resolve.ProxyView, r *Resolved) {
	authority := strings.ToLower(stripPort(r.Request.Host))
	if r.Request.Protocol == simulate.TCP {
		authority = ""
	}
	why := func() string {
		if w := hidden(mesh, view, authority, r); w != "" {
			return w
		}
		if s := r.Service; s != nil {
			if _, ok := view.Scope.Service(s.Host); ok {
				return fmt.Sprintf("%s is in the proxy's scope, but not for this port and protocol", s.Host)
			}
		}
		if authority == "" {
			return fmt.Sprintf("%s:%d is no service's address", r.Request.Address, r.Request.Port)
		}
		return authority + " is not a service in the mesh"
	}
	blockedBy := "outboundTrafficPolicy is REGISTRY_ONLY" + registryOnlyBy(mesh, view)
	switch {
	case r.Mode != "outbound":
		if rep.StoppedAt == string(simulate.Listener) && r.Mode == "gateway" {
			var ports []string
			for _, gs := range view.Gateways {
				if p := strconv.Itoa(int(gs.Port)); !slices.Contains(ports, p) {
					ports = append(ports, p)
				}
			}
			rep.Reason += "; the gateway's servers are on ports " + cmp.Or(strings.Join(ports, ", "), "(none)")
		}
	case rep.VirtualHost == "block_all":
		rep.StoppedAt = string(simulate.VirtualHost)
		rep.Reason = fmt.Sprintf("no virtual host for %s in route %s: %s; block_all answers it: %s", r.Request.Host, rep.RouteConfiguration, why(), blockedBy)
	case rep.VirtualHost == "allow_any":
		rep.Reason = fmt.Sprintf("no virtual host for %s in route %s: %s; allow_any passes it to its original destination", r.Request.Host, rep.RouteConfiguration, why())
	case rep.StoppedAt == string(simulate.VirtualHost):
		rep.Reason = fmt.Sprintf("no virtual host for %s in route %s: %s", r.Request.Host, rep.RouteConfiguration, why())
	case rep.Cluster == "BlackHoleCluster":
		rep.StoppedAt = string(simulate.Cluster)
		rep.Reason = "BlackHoleCluster: " + why()
		if registryOnlyBy(mesh, view) != "" {
			rep.Reason += ": " + blockedBy
		}
	case rep.Cluster == "PassthroughCluster" && rep.StoppedAt == "":
		rep.Reason = "PassthroughCluster: " + why() + ": the proxy passes it to its original destination"
	}
}

// registryOnlyBy says who set REGISTRY_ONLY: the Sidecar, else the mesh
// config; "" when nobody did.
func registryOnlyBy(mesh *resolve.Mesh, view *resolve.ProxyView) string {
	if sc := view.Scope.Choice.Sidecar; sc != nil && sc.Spec.GetOutboundTrafficPolicy().GetMode() == networking.OutboundTrafficPolicy_REGISTRY_ONLY {
		return " (Sidecar " + sc.Namespace + "/" + sc.Name + ")"
	}
	if mesh.Config.GetOutboundTrafficPolicy().GetMode() == meshv1.MeshConfig_OutboundTrafficPolicy_REGISTRY_ONLY {
		return " (mesh config)"
	}
	return ""
}

// hidden says why a service of the mesh is not in the proxy's scope: the
// Sidecar imports other hosts, or the service is not exported to the
// proxy's namespace. "" when the host is no service or is in scope.
func hidden(mesh *resolve.Mesh, view *resolve.ProxyView, authority string, r *Resolved) string {
	s := r.Service
	if s == nil {
		if svcs := mesh.ServicesNamed(host.Name(authority)); len(svcs) > 0 {
			s = svcs[0]
		}
	}
	if s == nil {
		return ""
	}
	sc := view.Scope
	if _, ok := sc.Service(s.Host); ok {
		return ""
	}
	if !mesh.Reachable(s.Host, view.Proxy.Namespace) {
		return fmt.Sprintf("%s is not exported to namespace %s", s.Host, view.Proxy.Namespace)
	}
	if sd := sc.Choice.Sidecar; sd != nil {
		var hosts []string
		for _, l := range sc.Listeners {
			for _, h := range l.Hosts {
				if !slices.Contains(hosts, h) {
					hosts = append(hosts, h)
				}
			}
		}
		return fmt.Sprintf("the Sidecar %s/%s imports only %s", sd.Namespace, sd.Name, strings.Join(hosts, " and "))
	}
	return fmt.Sprintf("%s is not visible to the proxy", s.Host)
}
