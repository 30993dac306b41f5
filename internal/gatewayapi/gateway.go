package gatewayapi

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// Gateway is a Gateway API Gateway istiod compiles, as the conversion saw
// it: for explain and the analyzers.
type Gateway struct {
	Object     *model.KubeGateway
	Controller string
	// Managed is true when istiod deploys the gateway itself (no
	// spec.addresses, or one IP address); Services are the hostnames of
	// the Services the generated Istio Gateways bind to.
	Managed  bool
	Services []string
	// Deployment and Service are what istiod's deployment controller
	// would create (nil when the input has them, or unmanaged).
	Deployment *model.Workload
	Service    *model.Service
	Conditions []Condition
	Listeners  []*Listener
	// Rejected are the route parentRefs naming the Gateway that no
	// listener accepts, with istiod's reason.
	Rejected []Rejection
	// Backends are the hosts the routes attached to its listeners send
	// to, sorted: the backend policies of those hosts apply to it.
	Backends []string
	// Users ("Kind namespace/name") and MeshRoutes are, for a waypoint,
	// the Services and ServiceEntries that use it and the mesh routes
	// attached to them.
	Users      []string
	MeshRoutes []Attachment
	// Ignored are, for a waypoint, the routes whose parentRef names it:
	// istiod attaches no route to a waypoint's listeners.
	Ignored []Attachment
}

// Rejection is a route's parentRef a Gateway does not accept.
type Rejection struct {
	Kind            string
	Object          *model.ObjectMeta
	Reason, Message string
}

// Listener is one listener of a Gateway.
type Listener struct {
	Name     string
	Index    int
	Port     int32
	Protocol string
	Hostname string
	// ListenerSet is the "namespace/name" of the ListenerSet that adds
	// the listener to the Gateway, "" for the Gateway's own.
	ListenerSet string
	// Istio is the Istio Gateway istiod makes of the listener; nil when
	// it makes none (a conflict, HTTPS without tls).
	Istio      *model.Gateway
	Conditions []Condition
	// Routes are the routes attached to the listener, in the order
	// attached.
	Routes []Attachment
}

// Attachment is a route attached to a listener.
type Attachment struct {
	Kind   string
	Object *model.ObjectMeta
}

// Condition is a status condition istiod would set.
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// parentInfo is a listener routes can attach to.
type parentInfo struct {
	gw *Gateway
	// owner names the object the listener is written in, as findings
	// name it ("Gateway ns/name", "ListenerSet ns/name").
	owner    string
	listener *Listener
	// internalName is the generated Istio Gateway's "namespace/name".
	internalName     string
	allowedKinds     []gwv1.RouteGroupKind
	hostnames        []string // the server's hosts, "namespace/host"
	originalHostname string
	section          string
	port             int32
	protocol         gwv1.ProtocolType
}

// parentKey names a route parent: a Gateway or a ListenerSet.
type parentKey struct {
	kind string
	nsName
}

// The controllers of ambient mode's Gateways: waypoints and east-west
// gateways.
const (
	ControllerWaypoint = "istio.io/mesh-controller"
	ControllerEastWest = "istio.io/eastwest-controller"
)

// builtinClasses are the GatewayClasses istiod creates, with their
// controllers, when the cluster has none of that name. The ambient ones
// exist only when istiod runs ambient mode (and multi-network, for
// east-west); a Gateway of such a class is taken to say it does.
var builtinClasses = map[string]string{
	"istio":           ControllerIstio,
	"istio-remote":    "istio.io/unmanaged-gateway",
	"istio-waypoint":  ControllerWaypoint,
	"istio-east-west": ControllerEastWest,
}

// ambientControllers name what meshc calls the Gateways of each ambient
// controller.
var ambientControllers = map[string]string{ControllerWaypoint: "waypoint", ControllerEastWest: "east-west"}

// AmbientKind is "waypoint" or "east-west" for the controller of an
// ambient Gateway, "" for any other.
func AmbientKind(ctl string) string { return ambientControllers[ctl] }

// controller is the controller of a class, "" when no class of that name
// exists.
func (c *converter) controller(class string) string {
	if gc := c.classes[class]; gc != nil {
		return string(gc.Spec.ControllerName)
	}
	return builtinClasses[class]
}

// compiledClasses names the classes meshc compiles, for MC7101.
func (c *converter) compiledClasses() string {
	set := map[string]bool{}
	for name, ctl := range builtinClasses {
		if ctl == ControllerIstio && c.classes[name] == nil {
			set[fmt.Sprintf("%q", name)] = true
		}
	}
	for name, gc := range c.classes {
		if gc.Spec.ControllerName == ControllerIstio {
			set[fmt.Sprintf("%q", name)] = true
		}
	}
	return "the classes of controller " + ControllerIstio + " (" + joinSorted(set) + ")"
}

// gateways converts every Gateway, in namespace/name order
// (docs/semantics/gateway-api.md §G2).
// Gateways of the ambient classes are checked and modelled, but no Envoy
// configuration is compiled for them: one MC7118 says so.
func (c *converter) gateways() {
	var ambient []string
	var first *model.KubeGateway
	for _, kgw := range c.kgwList {
		class := string(kgw.Spec.GatewayClassName)
		ctl := c.controller(class)
		if what := ambientControllers[ctl]; what != "" {
			ambient = append(ambient, what+" "+kgw.Namespace+"/"+kgw.Name)
			first = cmp.Or(first, kgw)
		} else if ctl != ControllerIstio {
			c.report(ClassNotCompiled(kgw, class, cmp.Or(ctl, "none: no GatewayClass of that name"), c.compiledClasses()))
			continue
		}
		c.gateway(kgw, ctl)
	}
	if first != nil {
		c.report(diag.AmbientGateways.At(first.RefAt(model.ParsePath("spec.gatewayClassName")), len(ambient), strings.Join(ambient, ", ")))
	}
}

// ClassNotCompiled is the MC7101 finding about a Gateway.
func ClassNotCompiled(kgw *model.KubeGateway, class, ctl, compiled string) diag.Diagnostic {
	return diag.ClassNotCompiled.At(kgw.RefAt(model.ParsePath("spec.gatewayClassName")), kgw.Namespace+"/"+kgw.Name, class, ctl, compiled)
}

func (c *converter) gateway(kgw *model.KubeGateway, ctl string) {
	gw := &Gateway{Object: kgw, Controller: ctl, Managed: managed(&kgw.Spec)}
	c.gws = append(c.gws, gw)
	name := kgw.Namespace + "/" + kgw.Name
	accepted := Condition{Type: "Accepted", Status: true, Reason: "Accepted", Message: "Resource accepted"}
	programmed := Condition{Type: "Programmed", Status: true, Reason: "Programmed", Message: "Resource programmed"}
	var addrErr string
	if gw.Managed {
		gw.Services = []string{c.serviceHost(deploymentName(kgw, ctl), kgw.Namespace)}
	} else {
		var skipped []string
		for _, a := range kgw.Spec.Addresses {
			if a.Type != nil && *a.Type != gwv1.HostnameAddressType {
				skipped = append(skipped, a.Value)
				continue
			}
			h := a.Value
			if !strings.Contains(h, ".") {
				h = c.serviceHost(h, kgw.Namespace)
			}
			gw.Services = append(gw.Services, h)
		}
		if len(skipped) > 0 {
			addrErr = fmt.Sprintf("only Hostname is supported, ignoring %v", skipped)
			accepted = Condition{Type: "Accepted", Reason: "UnsupportedAddress", Message: addrErr}
			c.report(diag.GatewayAddressUnusable.At(kgw.RefAt(model.ParsePath("spec.addresses")), name, "UnsupportedAddress",
				addrErr+": istiod binds a manually deployed Gateway only to Services named by Hostname addresses"))
		}
		for _, h := range gw.Services {
			if !c.serviceExists(h, kgw.Namespace) {
				c.report(diag.GatewayAddressUnusable.At(kgw.RefAt(model.ParsePath("spec.addresses")), name, "NoService",
					fmt.Sprintf("address %s names no Service of the input, so no gateway workload serves the Gateway and it is not programmed", h)))
			}
		}
		if len(gw.Services) == 0 {
			gw.Conditions = []Condition{accepted, {Type: "Programmed", Reason: "Invalid", Message: addrErr}}
			if bad := c.backendClientCertificate(kgw); bad != nil {
				gw.Conditions = append(gw.Conditions, *bad)
			}
			return
		}
	}
	sa := ""
	if gw.Managed {
		sa = cmp.Or(kgw.Annotations[annServiceAccountSet], defaultName(kgw, ctl))
	}
	sets := c.attachedSets(kgw, ctl)
	merged := slices.Clone(kgw.Spec.Listeners)
	for _, ls := range sets {
		for _, e := range ls.Spec.Listeners {
			merged = append(merged, entryListener(e))
		}
	}
	conflicts := listenerConflicts(merged)
	valid := 0
	own := listenerOwner{kind: "Gateway", meta: &kgw.ObjectMeta, path: model.Path{}.Key("spec").Key("listeners"), gw: &kgw.ObjectMeta, gwTLS: kgw.Spec.TLS, ctl: ctl}
	for i, l := range kgw.Spec.Listeners {
		if c.addListener(gw, own, i, l, conflicts, sa) {
			valid++
		}
	}
	at := len(kgw.Spec.Listeners)
	for _, ls := range sets {
		o := listenerOwner{kind: "ListenerSet", meta: &ls.ObjectMeta, path: model.Path{}.Key("spec").Key("listeners"), base: at,
			gw: &kgw.ObjectMeta, gwTLS: kgw.Spec.TLS, ctl: ctl}
		for i := range ls.Spec.Listeners {
			c.addListener(gw, o, i, merged[at+i], conflicts, sa)
		}
		at += len(ls.Spec.Listeners)
	}
	if addrErr == "" && len(kgw.Spec.Listeners) > 0 && valid < len(kgw.Spec.Listeners) {
		if valid == 0 {
			accepted = Condition{Type: "Accepted", Reason: "ListenersNotValid", Message: "None of the Gateway's listeners are valid"}
			c.report(diag.GatewayAddressUnusable.At(kgw.Ref(), name, "ListenersNotValid", "none of its listeners is valid"))
		} else {
			accepted.Reason, accepted.Message = "ListenersNotValid", "One or more of the Gateway's listeners are invalid"
		}
	}
	resolved := Condition{Type: "ResolvedRefs", Status: true, Reason: "ResolvedRefs", Message: "All references resolved"}
	if bad := c.backendClientCertificate(kgw); bad != nil {
		resolved = *bad
	}
	gw.Conditions = []Condition{accepted, programmed, resolved}
	if insecureFrontend(kgw.Spec.TLS) {
		gw.Conditions = append(gw.Conditions, Condition{Type: "InsecureFrontendValidationMode", Status: true, Reason: "ConfigurationChanged",
			Message: "Gateway is operating in AllowInsecureFallback mode for frontend validation"})
	}
	if gw.Managed {
		c.deploy(gw, merged)
	}
}

// managed reports whether istiod deploys the Gateway itself: no address,
// or a single IP address.
func managed(spec *gwv1.GatewaySpec) bool {
	switch len(spec.Addresses) {
	case 0:
		return true
	case 1:
		t := spec.Addresses[0].Type
		return t == nil || *t == gwv1.IPAddressType
	}
	return false
}

// serviceExists reports whether a hostname is a Service or ServiceEntry
// host of the input, or cannot be judged (the input holds no Services of
// its namespace).
func (c *converter) serviceExists(h, defaultNs string) bool {
	if c.hostnames[h] {
		return true
	}
	name, rest, ok := strings.Cut(h, ".")
	if !ok {
		return c.services.get(nsName{defaultNs, h}) != nil || !c.services.has(defaultNs)
	}
	ns, suffix, _ := strings.Cut(rest, ".")
	if suffix != "svc."+c.opts.DomainSuffix {
		return true // not a cluster Service name: not judged
	}
	return c.services.get(nsName{ns, name}) != nil || !c.services.has(ns)
}

// listener builds the Istio server of a listener and its conditions; ok
// is false when istiod would not program it. The server is nil when
// istiod makes none.
func (c *converter) listener(o listenerOwner, ln *Listener, l gwv1.Listener, path model.Path) (*networking.Server, bool) {
	name := o.name()
	ok := true
	accepted := Condition{Type: "Accepted", Status: true, Reason: "Accepted", Message: "No errors found"}
	programmed := Condition{Type: "Programmed", Status: true, Reason: "Programmed", Message: "No errors found"}
	resolved := Condition{Type: "ResolvedRefs", Status: true, Reason: "ResolvedRefs", Message: "No errors found"}
	tls, tlsErrs := c.serverTLS(o, l, path)
	if len(tlsErrs) > 0 {
		resolved = Condition{Type: "ResolvedRefs", Reason: tlsErrs[0].reason, Message: tlsErrs[0].message}
		programmed = Condition{Type: "Programmed", Reason: "Invalid", Message: "Bad TLS configuration"}
		ok = false
		if caReasons[tlsErrs[0].reason] {
			accepted = Condition{Type: "Accepted", Reason: "NoValidCACertificate", Message: tlsErrs[0].message}
		}
		for _, e := range tlsErrs {
			at := cmp.Or(e.at, o.meta).RefAt(e.path)
			if e.ca {
				c.report(diag.FrontendCARefBad.At(at, string(l.Name), o.kind, name, e.ref, e.reason, e.message))
				continue
			}
			c.report(o.templates().cert.At(at, string(l.Name), name, e.ref, e.reason, e.message))
		}
	}
	proto, perr := listenerProtocol(o.ctl, l.Protocol)
	if perr != "" {
		accepted = Condition{Type: "Accepted", Reason: "UnsupportedProtocol", Message: perr}
		ok = false
		c.report(o.templates().rejected.At(o.meta.RefAt(path.Key("protocol")), string(l.Name), name, "UnsupportedProtocol", perr))
	}
	if why := unexpectedAmbientListener(o.ctl, l); why != "" {
		// istiod refuses the listener in its status but still programs it.
		accepted = Condition{Type: "Accepted", Reason: "UnsupportedProtocol", Message: why}
		c.report(diag.AmbientListenerRejected.At(o.meta.RefAt(path), string(l.Name), ambientControllers[o.ctl], name, "UnsupportedProtocol", why))
	}
	if _, all := supportedKinds(l); !all {
		resolved = Condition{Type: "ResolvedRefs", Reason: "InvalidRouteKinds", Message: "Invalid route kinds"}
		c.report(o.templates().rejected.At(o.meta.RefAt(path.Key("allowedRoutes").Key("kinds")), string(l.Name), name, "InvalidRouteKinds",
			"allowedRoutes.kinds names a route kind a "+string(l.Protocol)+" listener cannot carry; routes of that kind are not accepted"))
	}
	if !ok && programmed.Status {
		programmed = Condition{Type: "Programmed", Reason: "Invalid", Message: "The listener is not accepted"}
	}
	ln.Conditions = []Condition{accepted, programmed, {Type: "Conflicted", Reason: "NoConflicts", Message: "No errors found"}, resolved}
	if tls == nil && (l.Protocol == gwv1.HTTPSProtocolType || l.Protocol == gwv1.TLSProtocolType) {
		c.report(o.templates().rejected.At(o.meta.RefAt(path), string(l.Name), name, "NoTLS",
			"the protocol is "+string(l.Protocol)+" but the listener has no tls section, so istiod builds no server for it and no route attaches to it"))
		return nil, ok
	}
	if perr != "" {
		proto = ""
	}
	return &networking.Server{
		Port:  &networking.Port{Name: "default", Number: uint32(l.Port), Protocol: proto},
		Hosts: c.serverHosts(o.meta.Namespace, l),
		Tls:   tls,
	}, ok
}

// caReasons are the ResolvedRefs reasons for which istiod also sets a
// listener's Accepted condition to False (NoValidCACertificate); a
// certificate reference refused for lack of a grant is among them.
var caReasons = map[string]bool{"InvalidCACertificateRef": true, "InvalidCACertificateKind": true, "RefNotPermitted": true}

// hbonePort is the port of ambient's HBONE tunnels.
const hbonePort = 15008

// unexpectedAmbientListener says why istiod's status refuses a listener of
// an ambient Gateway: a waypoint expects a single HBONE listener on 15008;
// an east-west gateway that, terminating TLS, or TLS passthrough ones.
func unexpectedAmbientListener(ctl string, l gwv1.Listener) string {
	mode := func() gwv1.TLSModeType {
		if l.TLS == nil || l.TLS.Mode == nil {
			return ""
		}
		return *l.TLS.Mode
	}
	switch ctl {
	case ControllerWaypoint:
		if l.Port != hbonePort || l.Protocol != "HBONE" {
			return `Expected a single listener on port 15008 with protocol "HBONE"`
		}
	case ControllerEastWest:
		hbone := l.Port == hbonePort && l.Protocol == "HBONE" && mode() == gwv1.TLSModeTerminate
		passthrough := l.Port != hbonePort && l.Protocol == gwv1.TLSProtocolType && mode() == gwv1.TLSModePassthrough
		if !hbone && !passthrough {
			return `East-west gateway listeners must be either port 15008 with protocol "HBONE" and TLS.Mode == Terminate, or TLS with TLS.Mode == Passthrough`
		}
	}
	return ""
}

// listenerProtocol maps a listener protocol to Istio's for a Gateway of
// controller ctl; the error says why istiod refuses it.
func listenerProtocol(ctl string, p gwv1.ProtocolType) (string, string) {
	switch p {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType, gwv1.TLSProtocolType, gwv1.TCPProtocolType:
		return string(p), ""
	case "HBONE":
		if ambientControllers[ctl] != "" {
			return string(p), ""
		}
		return "", fmt.Sprintf("protocol %q is only supported for waypoint proxies", p)
	}
	up := strings.ToUpper(string(p))
	switch gwv1.ProtocolType(up) {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType, gwv1.TLSProtocolType, gwv1.TCPProtocolType, "HBONE":
		return "", fmt.Sprintf("protocol %q is unsupported. hint: %q (uppercase) may be supported", p, up)
	}
	return "", fmt.Sprintf("protocol %q is unsupported", p)
}

func routeKind(kind string) gwv1.RouteGroupKind {
	g := gwv1.Group(model.GroupGatewayAPI)
	return gwv1.RouteGroupKind{Group: &g, Kind: gwv1.Kind(kind)}
}

// supportedKinds are the route kinds a listener admits: those its
// protocol carries, narrowed by allowedRoutes.kinds; all is false when
// allowedRoutes names a kind the protocol cannot carry.
func supportedKinds(l gwv1.Listener) (kinds []gwv1.RouteGroupKind, all bool) {
	var supported []gwv1.RouteGroupKind
	switch l.Protocol {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		supported = []gwv1.RouteGroupKind{routeKind("HTTPRoute"), routeKind("GRPCRoute")}
	case gwv1.TCPProtocolType:
		supported = []gwv1.RouteGroupKind{routeKind("TCPRoute")}
	case gwv1.TLSProtocolType:
		supported = []gwv1.RouteGroupKind{routeKind("TLSRoute")}
		if l.TLS != nil && l.TLS.Mode != nil && *l.TLS.Mode == gwv1.TLSModeTerminate {
			supported = append(supported, routeKind("TCPRoute"))
		}
	}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		return supported, true
	}
	var out []gwv1.RouteGroupKind
	for _, s := range supported {
		if slices.ContainsFunc(l.AllowedRoutes.Kinds, func(k gwv1.RouteGroupKind) bool { return kindEqual(s, k) }) {
			out = append(out, s)
		}
	}
	return out, len(out) == len(l.AllowedRoutes.Kinds)
}

func kindEqual(a, b gwv1.RouteGroupKind) bool {
	ga, gb := model.GroupGatewayAPI, model.GroupGatewayAPI
	if a.Group != nil {
		ga = string(*a.Group)
	}
	if b.Group != nil {
		gb = string(*b.Group)
	}
	return ga == gb && a.Kind == b.Kind
}

// serverHosts are the Istio server hosts of a listener: its hostname (or
// "*") in each namespace its allowedRoutes admit (docs/semantics/gateway-api.md §G2.3).
func (c *converter) serverHosts(ns string, l gwv1.Listener) []string {
	h := "*"
	if l.Hostname != nil && *l.Hostname != "" {
		h = string(*l.Hostname)
	}
	var out []string
	for _, n := range c.allowedNamespaces(ns, l.AllowedRoutes) {
		if n != "" {
			out = append(out, n+"/"+h)
		}
	}
	if len(out) == 0 {
		return []string{"~/" + h}
	}
	return out
}

// allowedNamespaces are the namespaces a listener admits routes from: its
// own by default, "*" for All, the matching namespaces for a selector.
func (c *converter) allowedNamespaces(ns string, ar *gwv1.AllowedRoutes) []string {
	if ar == nil || ar.Namespaces == nil || ar.Namespaces.From == nil || *ar.Namespaces.From == gwv1.NamespacesFromSame {
		return []string{ns}
	}
	if *ar.Namespaces.From == gwv1.NamespacesFromAll || ar.Namespaces.Selector == nil {
		return []string{"*"}
	}
	sel, err := metav1.LabelSelectorAsSelector(ar.Namespaces.Selector)
	if err != nil {
		return nil
	}
	var out []string
	for name, lbls := range c.opts.Namespaces {
		if sel.Matches(namespaceLabels(name, lbls)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// conflict is why a listener is conflicted.
type conflict struct {
	reason, winner, why string
}

// listenerConflicts finds the listeners that collide with an earlier kept
// listener (docs/semantics/gateway-api.md §G2.2), by index.
func listenerConflicts(ls []gwv1.Listener) map[int]conflict {
	out := map[int]conflict{}
	var kept []int
	for i, l := range ls {
		j := slices.IndexFunc(kept, func(k int) bool { return !distinct(l, ls[k]) })
		if j < 0 {
			kept = append(kept, i)
			continue
		}
		w := ls[kept[j]]
		reason, why := "HostnameConflict", fmt.Sprintf("both are %s on port %d for hostname %s", l.Protocol, l.Port, hostnameOr(l))
		if l.Protocol != w.Protocol || l4(l.Protocol) && l4(w.Protocol) {
			reason, why = "ProtocolConflict", fmt.Sprintf("%s and %s cannot share port %d", w.Protocol, l.Protocol, l.Port)
		}
		out[i] = conflict{reason: reason, winner: string(w.Name), why: why}
	}
	return out
}

func l4(p gwv1.ProtocolType) bool { return p == gwv1.TCPProtocolType || p == gwv1.UDPProtocolType }

func httpLike(p gwv1.ProtocolType) bool {
	return p == gwv1.HTTPProtocolType || p == gwv1.HTTPSProtocolType || p == gwv1.TLSProtocolType
}

func hostnameOr(l gwv1.Listener) string {
	if l.Hostname == nil || *l.Hostname == "" {
		return "*"
	}
	return string(*l.Hostname)
}

// distinct reports whether two listeners can share a Gateway.
func distinct(a, b gwv1.Listener) bool {
	switch {
	case a.Port != b.Port:
		return true
	case l4(a.Protocol) && httpLike(b.Protocol), httpLike(a.Protocol) && l4(b.Protocol), l4(a.Protocol) && l4(b.Protocol):
		return false
	case httpLike(a.Protocol) && httpLike(b.Protocol):
		return hostnameOr(a) != hostnameOr(b)
	}
	return a.Protocol != b.Protocol
}

// deploy makes the Deployment and Service istiod's deployment controller
// would create for a managed Gateway, unless the input has them
// (docs/semantics/gateway-api.md §G2.5). An ambient Gateway's are made
// from istiod's waypoint template and kept for explain only: meshc
// compiles no waypoint or east-west proxy, nor adds their Service to the
// registry.
func (c *converter) deploy(gw *Gateway, listeners []gwv1.Listener) {
	kgw := gw.Object
	ambient := ambientControllers[gw.Controller] != ""
	name := deploymentName(kgw, gw.Controller)
	infraLabels, infraAnns := infrastructure(kgw)
	lbls := maps.Clone(infraLabels)
	if _, ok := lbls["istio.io/dataplane-mode"]; !ok && !ambient {
		lbls["istio.io/dataplane-mode"] = "none"
	}
	lbls[labelGatewayName] = kgw.Name
	lbls[labelGatewayClass] = string(kgw.Spec.GatewayClassName)
	svcLabels := maps.Clone(lbls)
	managedBy := "istio.io-gateway-controller"
	svcType := corev1.ServiceTypeLoadBalancer
	switch gw.Controller {
	case ControllerWaypoint:
		managedBy, svcType = "istio.io-mesh-controller", corev1.ServiceTypeClusterIP
	case ControllerEastWest:
		managedBy = "istio.io-eastwest-controller"
	}
	lbls["gateway.istio.io/managed"] = managedBy
	if !ambient {
		svcLabels = lbls
	}
	anns := map[string]string{}
	for k, v := range infraAnns {
		switch k {
		case "kubectl.kubernetes.io/last-applied-configuration", annNameOverride, annServiceAccountSet, "gateway.istio.io/controller-version":
			continue
		}
		anns[k] = v
	}
	svcAnns := anns
	if ambient {
		svcAnns = maps.Clone(anns)
		svcAnns["networking.istio.io/traffic-distribution"] = cmp.Or(svcAnns["networking.istio.io/traffic-distribution"], "PreferClose")
	}
	path := model.Path{}.Key("metadata")
	if c.services.get(nsName{kgw.Namespace, name}) == nil {
		svc := &model.Service{ObjectMeta: derived("v1", "Service", kgw.Namespace, name, &kgw.ObjectMeta, path, "")}
		svc.Labels, svc.Annotations = svcLabels, svcAnns
		svc.Spec = corev1.ServiceSpec{Selector: map[string]string{labelGatewayName: kgw.Name}, Ports: servicePorts(listeners),
			Type: corev1.ServiceType(cmp.Or(kgw.Annotations[annServiceType], string(svcType)))}
		if len(kgw.Spec.Addresses) == 1 && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			svc.Spec.LoadBalancerIP = kgw.Spec.Addresses[0].Value
		}
		gw.Service = svc
		if !ambient {
			c.out = append(c.out, svc)
		}
	}
	if c.deployedByHand(kgw, name) {
		return
	}
	podLabels := map[string]string{"sidecar.istio.io/inject": "false", "service.istio.io/canonical-name": name, "service.istio.io/canonical-revision": "latest"}
	if ambient {
		podLabels["istio.io/dataplane-mode"] = "none"
	}
	maps.Copy(podLabels, lbls)
	podAnns := map[string]string{"istio.io/rev": "default", "prometheus.io/path": "/stats/prometheus", "prometheus.io/port": "15020", "prometheus.io/scrape": "true"}
	maps.Copy(podAnns, anns)
	args := []string{"proxy", "router"}
	if ambient {
		args = []string{"proxy", "waypoint"}
	}
	d := &model.Workload{ObjectMeta: derived("apps/v1", "Deployment", kgw.Namespace, name, &kgw.ObjectMeta, path, "")}
	d.Labels, d.Annotations = lbls, anns
	d.Template = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnns},
		Spec: corev1.PodSpec{ServiceAccountName: cmp.Or(kgw.Annotations[annServiceAccountSet], defaultName(kgw, gw.Controller)),
			Containers: []corev1.Container{{Name: "istio-proxy", Args: args, Ports: []corev1.ContainerPort{
				{Name: "metrics", ContainerPort: 15020, Protocol: corev1.ProtocolTCP},
				{Name: "status-port", ContainerPort: 15021, Protocol: corev1.ProtocolTCP},
				{Name: "http-envoy-prom", ContainerPort: 15090, Protocol: corev1.ProtocolTCP},
			}}}},
	}
	gw.Deployment = d
	if !ambient {
		c.out = append(c.out, d)
	}
}

// deployedByHand reports whether the input deploys the gateway itself: a
// workload of the Deployment's name, or one labelled with the Gateway's
// name, in its namespace.
func (c *converter) deployedByHand(kgw *model.KubeGateway, name string) bool {
	return slices.ContainsFunc(c.workloads, func(w *model.Workload) bool {
		return w.Namespace == kgw.Namespace && (w.Name == name && w.Kind == "Deployment" || w.Template.Labels[labelGatewayName] == kgw.Name)
	})
}

// infrastructure are the labels and annotations istiod puts on what it
// deploys: spec.infrastructure's, else the Gateway's own; keys under
// gateway.networking.k8s.io/ are dropped from spec.infrastructure's.
func infrastructure(kgw *model.KubeGateway) (lbls, anns map[string]string) {
	infra := kgw.Spec.Infrastructure
	if infra == nil {
		infra = &gwv1.GatewayInfrastructure{}
	}
	return infraMap(infra.Labels, kgw.Labels), infraMap(infra.Annotations, kgw.Annotations)
}

// infraMap is one of spec.infrastructure's maps without the
// gateway.networking.k8s.io/ keys, or, when it is not given, the
// Gateway's own.
func infraMap[K, V ~string](given map[K]V, own map[string]string) map[string]string {
	out := map[string]string{}
	if given == nil {
		maps.Copy(out, own)
		return out
	}
	for k, v := range given {
		if !strings.HasPrefix(string(k), "gateway.networking.k8s.io/") {
			out[string(k)] = string(v)
		}
	}
	return out
}

// servicePorts are the ports of the Service istiod deploys: the status
// port, then each listener port once, named after its first listener.
func servicePorts(ls []gwv1.Listener) []corev1.ServicePort {
	tcp := "tcp"
	out := []corev1.ServicePort{{Name: "status-port", Port: 15021, Protocol: corev1.ProtocolTCP, AppProtocol: &tcp}}
	used := map[string]bool{"status-port": true}
	seen := map[int32]bool{}
	for i, l := range ls {
		port := int32(l.Port)
		if seen[port] {
			continue
		}
		seen[port] = true
		name := strings.ReplaceAll(string(l.Name), ".", "-")
		if len(name) > 63 {
			name = name[:63]
		}
		if name == "" {
			name = fmt.Sprintf("%s-%d", strings.ToLower(string(l.Protocol)), i)
		}
		name = uniquePortName(name, port, used)
		app := strings.ToLower(string(l.Protocol))
		out = append(out, corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP, AppProtocol: &app})
	}
	return out
}

// uniquePortName keeps port names unique within 63 characters, adding the
// port number (and "x"s) to a repeated name.
func uniquePortName(name string, port int32, used map[string]bool) string {
	candidate := name
	for suffix := fmt.Sprintf("-%d", port); used[candidate]; suffix += "x" {
		trimmed := name
		if len(trimmed)+len(suffix) > 63 {
			trimmed = trimmed[:63-len(suffix)]
		}
		candidate = trimmed + suffix
	}
	used[candidate] = true
	return candidate
}
