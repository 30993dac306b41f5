package diag

// gatewayAPIEntries: MC71xx: the Kubernetes Gateway API as istiod converts
// it, and the status conditions istiod would write.
var gatewayAPIEntries = []*Entry{
	GatewayClassNotCompiled,
	GatewayNotAccepted,
	ListenerNotProgrammed,
	ListenerConflicted,
	CertificateRefUnresolved,
	RouteNotAccepted,
	RouteParentNotFound,
	BackendRefNotPermitted,
	BackendRefNotFound,
	RouteRuleInvalid,
	ListenerSetNotAccepted,
	MeshParentPortUnknown,
	BackendTLSPolicyNotAccepted,
	BackendTLSPolicyCARefUnresolved,
	BackendTrafficPolicyNotApplied,
	AlphaGatewayAPIOff,
	AmbientNotCompiled,
}

// The family's entries, in code order.
var (
	GatewayClassNotCompiled = &Entry{
		Code: "MC7101", Name: "GatewayClassNotCompiled", Severity: Info,
		Summary: "A Gateway API Gateway's class is not one meshc compiles; the Gateway and its routes are passed over.",
		Doc: `istiod compiles the Gateways whose GatewayClass names its controller
(istio.io/gateway-controller): the built-in class "istio", or a
GatewayClass of the input naming that controller. A Gateway of another
class belongs to another controller (or is Istio's remote class), so
meshc makes no
gateway proxy, listener or route of it, and the routes attached only to
it get none either. The rest of the input compiles. Nothing to fix when
the Gateway is meant for another implementation. Ambient waypoint and
east-west Gateways are MC7118, not this.`,
	}
	GatewayNotAccepted = &Entry{
		Code: "MC7102", Name: "GatewayNotAccepted", Severity: Warning,
		Summary: "istiod would set a Gateway's Accepted or Programmed condition to False: a bad address, no valid listener.",
		Doc: `istiod reports a Gateway as not Accepted when none of its listeners is
valid, or when its spec.addresses cannot be used (istiod binds a Gateway
to Services only by a Hostname address; IP and named addresses of a
manually deployed Gateway are ignored). A Gateway whose address names no
Service of the input is reported too: istiod finds no gateway workload
and leaves it not Programmed. Fix the listeners or addresses.`,
	}
	ListenerNotProgrammed = &Entry{
		Code: "MC7103", Name: "ListenerNotProgrammed", Severity: Warning,
		Summary: "A Gateway listener istiod would not accept or program: an unsupported protocol, missing TLS, route kinds it cannot serve.",
		Doc: `istiod sets a listener's Accepted, Programmed or ResolvedRefs condition to
False when its protocol is not one it serves (HTTP, HTTPS, TLS, TCP), when
an HTTPS or TLS listener has no tls section (istiod then builds no server
for it), or when allowedRoutes.kinds names a route kind the protocol
cannot carry (ResolvedRefs InvalidRouteKinds). Certificate problems are
MC7105 and conflicts MC7104. Fix the listener.`,
	}
	ListenerConflicted = &Entry{
		Code: "MC7104", Name: "ListenerConflicted", Severity: Warning,
		Summary: "Two listeners of a Gateway cannot coexist on one port; the later one is not programmed.",
		Doc: `Listeners on one port must be distinct: HTTP-like listeners (HTTP, HTTPS,
TLS) by hostname, TCP listeners not at all, and an HTTP-like listener never
shares a port with a TCP one. istiod keeps the first listener in spec
order and marks each later one that collides with a kept listener
Conflicted (HostnameConflict or ProtocolConflict); it builds no server for
it and routes cannot attach to it. Give the listener another port or
hostname.`,
	}
	CertificateRefUnresolved = &Entry{
		Code: "MC7105", Name: "CertificateRefUnresolved", Severity: Error,
		Summary: "A listener's TLS certificateRef cannot be resolved: a missing Secret, not a Secret, no certificate keys, a malformed certificate, or another namespace without a ReferenceGrant.",
		Doc: `An HTTPS or TLS-terminating listener reads its certificates from the
Secrets its tls.certificateRefs name. istiod sets the listener's
ResolvedRefs condition to False (InvalidCertificateRef, or
RefNotPermitted for a Secret of another namespace that no ReferenceGrant
in that namespace opens to Gateways of the listener's namespace) and the
listener is not Programmed. A Secret must hold tls.crt and tls.key (or
cert and key) that parse as a certificate and its private key; meshc
judges them when it loads the Secret and keeps only the verdict, never
the values. A Secret absent from an input that holds Secrets of its
namespace is one istiod would not find: the listener is reported and not
programmed, as istiod leaves it. Where the input holds no Secret of that
namespace, meshc takes the Secret to be kept in the cluster, as most
repositories keep them, and programs the listener.
The Gateway's spec.tls.frontend validation names one CA for client
certificates (a ConfigMap, or a Secret, with ca.crt or cacert): a CA of
another kind, one missing (by the same rule), one holding no PEM certificate, or
one of another namespace that no ReferenceGrant opens (to all
ConfigMaps or Secrets: istiod checks a grant's name against the CA's
name with "-cacert" added) leaves every terminating listener it applies
to unprogrammed, and Accepted False (NoValidCACertificate).
The Gateway's spec.tls.backend.clientCertificateRef is checked the same
way (a Secret with a certificate and key; another namespace's needs a
ReferenceGrant): istiod sets the Gateway's ResolvedRefs to False
(InvalidClientCertificateRef, RefNotPermitted) for a bad one. It presents
no client certificate to backends either way.`,
	}
	RouteNotAccepted = &Entry{
		Code: "MC7106", Name: "RouteNotAccepted", Severity: Warning,
		Summary: "A route's parentRef is not accepted: no listener of its Gateway admits it (hostname, namespace, section, port or kind), or its parent Service does not exist.",
		Doc: `A route attaches to a Gateway through a parentRef; istiod accepts it on each
listener whose sectionName and port match the reference, whose hostname
meets one of the route's hostnames, whose allowedRoutes admit the route's
namespace and whose kinds admit the route's kind. When no listener does,
istiod sets the parent's Accepted condition to False with the reason of
the closest listener (NotAllowedByListeners, NoMatchingListenerHostname,
NoMatchingParent) and makes no route of it for that Gateway. A mesh
route's parentRef to a Service or ServiceEntry that does not exist is
not accepted either (NoMatchingParent), and the sidecars get nothing of it;
that check runs only when the input holds Services (ServiceEntries) of
the parent's namespace. Fix the reference, the hostnames, or the
listener's allowedRoutes.`,
	}
	RouteParentNotFound = &Entry{
		Code: "MC7107", Name: "RouteParentNotFound", Severity: Error,
		Summary: "A route's parentRef names a Gateway or ListenerSet that does not exist.",
		Doc: `The Gateway or ListenerSet a parentRef names (in the route's namespace
unless the reference gives one) is not in the input, so the route
attaches to nothing there and istiod writes no status for that parent.
Usually a typo or a namespace left out. A Gateway of a class meshc does
not compile is MC7101 and is not reported here. The check runs only when
the input holds some Gateway API Gateway.`,
	}
	BackendRefNotPermitted = &Entry{
		Code: "MC7108", Name: "BackendRefNotPermitted", Severity: Error,
		Summary: "A route's backendRef names a Service of another namespace that no ReferenceGrant opens to it.",
		Doc: `A route may send traffic to a backend of another namespace only when a
ReferenceGrant in that namespace allows references from the route's kind
and namespace to Services (all of them, or that one by name). Without
one, istiod sets the route's ResolvedRefs condition to False
(RefNotPermitted) and the backend's share of requests gets a 500. Add the
ReferenceGrant in the backend's namespace, or move the route.`,
	}
	BackendRefNotFound = &Entry{
		Code: "MC7109", Name: "BackendRefNotFound", Severity: Error,
		Summary: "A route's backendRef names a Service that does not exist, or a kind istiod cannot route to.",
		Doc: `istiod sets the route's ResolvedRefs condition to False (BackendNotFound,
InvalidKind) when a backendRef names no Service of the input, or a kind
it does not route to in its default configuration (InferencePool and
Backend need istiod features turned on); requests for that backend's
share get a 500. A port the Service does not have is MC5009, reported
at the rule. The check of a missing Service runs only when the input
holds Services of that namespace.`,
	}
	RouteRuleInvalid = &Entry{
		Code: "MC7110", Name: "RouteRuleInvalid", Severity: Error,
		Summary: "A route rule istiod cannot convert: an unsupported filter, a header value with control characters, a backendRef without port or with a hostname for a name.",
		Doc: `istiod converts every rule of a route or none: a rule with a filter it does
not support (ExtensionRef, or a filter of the wrong kind for the place),
a header value holding control characters, a Service backendRef without
a port or with a dotted hostname as its name, makes istiod drop every
rule of the route for its Gateways, and set the route's ResolvedRefs
condition to False. Fix the rule.`,
	}
	MeshParentPortUnknown = &Entry{
		Code: "MC7112", Name: "MeshParentPortUnknown", Severity: Warning,
		Summary: "A mesh route's parentRef names a port its Service or ServiceEntry does not have; the route never applies.",
		Doc: `A mesh (GAMMA) route whose parentRef gives a port applies only to requests
for the parent Service on that port: istiod adds the port to every match
of the route. istiod accepts a port the Service does not have, but no
sidecar sends traffic for the Service on it, so the route never
applies and the Service's traffic keeps its other routes. Name one of
the Service's ports (spec.ports[].port, not the target port), or leave
the port out to cover all of them.`,
	}
	ListenerSetNotAccepted = &Entry{
		Code: "MC7113", Name: "ListenerSetNotAccepted", Severity: Warning,
		Summary: "A ListenerSet its parent Gateway does not accept: the Gateway's allowedListeners leave its namespace out; none of its listeners is programmed.",
		Doc: `A ListenerSet adds listeners to a Gateway only when the Gateway lets its
namespace do so: spec.allowedListeners.namespaces.from is Same (the
Gateway's own namespace), All, or Selector (namespaces whose labels
match). A Gateway without allowedListeners accepts no ListenerSet.
istiod sets the ListenerSet's Accepted condition to False (NotAllowed)
and makes nothing of its listeners, so the routes attached to them
carry no traffic. Widen the Gateway's allowedListeners, or move the
ListenerSet.`,
	}
	BackendTLSPolicyNotAccepted = &Entry{
		Code: "MC7114", Name: "BackendTLSPolicyNotAccepted", Severity: Warning,
		Summary: "A BackendTLSPolicy's targetRef istiod does not accept: no such Service or ServiceEntry, no port of that sectionName, or an older policy for the same target; that target gets no TLS from it.",
		Doc: `istiod turns a BackendTLSPolicy into a DestinationRule for each Service or
ServiceEntry its targetRefs name (in the policy's namespace), so that
gateways and sidecars originate TLS to them. A targetRef to something
else, to a Service or ServiceEntry that does not exist, or with a
sectionName that names none of its ports, is not accepted
(TargetNotFound). Of two policies naming the same target (and section),
the older one wins (creation time, then name) and the other is not
accepted for it (Conflicted). An unknown wellKnownCACertificates value
makes the policy not accepted (Invalid), though istiod still applies it
with the system's CAs. The check of a missing Service runs only when the
input holds Services of that namespace.`,
	}
	BackendTLSPolicyCARefUnresolved = &Entry{
		Code: "MC7115", Name: "BackendTLSPolicyCARefUnresolved", Severity: Error,
		Summary: "A BackendTLSPolicy's caCertificateRef cannot be used: not a ConfigMap, missing, or without a CA certificate; istiod then fails every TLS connection to the targets.",
		Doc: `A BackendTLSPolicy validates its backends' certificates against the CA of
the ConfigMap its first caCertificateRef names (key ca.crt or cacert),
in the policy's namespace. istiod supports no other kind (a Secret is
refused, InvalidKind). When the ConfigMap is missing or has no CA key
(InvalidCACertificateRef), istiod still applies the policy but with the
credential invalid://, which no proxy can load: every TLS connection to
the targeted backends fails. A ConfigMap absent from the input counts as
missing only when the input holds ConfigMaps of the policy's namespace.
Fix the reference or the ConfigMap.`,
	}
	BackendTrafficPolicyNotApplied = &Entry{
		Code: "MC7116", Name: "BackendTrafficPolicyNotApplied", Severity: Warning,
		Summary: "An XBackendTrafficPolicy, or part of one, istiod does not apply: a targetRef that is not an existing Service, sessionPersistence, or a Service an older policy already has.",
		Doc: `With PILOT_ENABLE_ALPHA_GATEWAY_API (meshc --alpha-gateway-api), istiod
turns an XBackendTrafficPolicy's retryConstraint into the retry budget
of a DestinationRule it generates for each Service its targetRefs name
in the policy's namespace. A targetRef to anything else (a ServiceEntry
included) or to a Service that does not exist is not accepted
(TargetNotFound). sessionPersistence is accepted but not implemented:
no session affinity comes of it. Of several policies naming one Service
only the oldest (creation time, then namespace and name) is applied;
istiod reports the others as accepted all the same. The check of a
missing Service runs only when the input holds Services of that
namespace.`,
	}
	AlphaGatewayAPIOff = &Entry{
		Code: "MC7117", Name: "AlphaGatewayAPIOff", Severity: Info,
		Summary: "An experimental Gateway API object istiod reads only with PILOT_ENABLE_ALPHA_GATEWAY_API: without --alpha-gateway-api it has no effect.",
		Doc: `istiod watches the experimental kinds of gateway.networking.x-k8s.io
(XBackendTrafficPolicy) only when it runs with
PILOT_ENABLE_ALPHA_GATEWAY_API=true, which is off by default. meshc
follows the default and makes nothing of such an object. If the
cluster's istiod runs with the setting, pass --alpha-gateway-api (or
alphaGatewayAPI: true in .meshc.yaml).`,
	}
	AmbientNotCompiled = &Entry{
		Code: "MC7118", Name: "AmbientNotCompiled", Severity: Info,
		Summary: "The input has ambient waypoint or east-west Gateways: meshc checks them, but compiles no ambient data plane (ztunnel, waypoint, HBONE) configuration.",
		Doc: `Gateways of class istio-waypoint (controller istio.io/mesh-controller)
and istio-east-west (istio.io/eastwest-controller) are ambient mode's
waypoint proxies and east-west gateways. meshc checks their listeners
and models the Deployment and Service istiod would deploy for them, and
the mesh routes meant for waypoints convert as for sidecars; but it
builds no Envoy configuration for waypoints, east-west gateways or
ztunnels, and its findings say nothing of the traffic they carry. Said
once per run.`,
	}
)

// The messages of the Gateway API entries.
var (
	ClassNotCompiled = GatewayClassNotCompiled.Template("Gateway %s has class %q (controller %s), which meshc does not compile; it compiles %s; no gateway proxy or route is made of this Gateway",
		W("gateway"), W("class").ID(), W("controller"), T("compiled"))

	GatewayAddressUnusable = GatewayNotAccepted.Template("istiod would not accept Gateway %s (%s): %s",
		W("gateway"), W("reason").ID(), T("why"))

	ListenerRejected = ListenerNotProgrammed.Template("listener %q of Gateway %s is not programmed (%s: %s)",
		W("listener").ID(), W("gateway"), W("reason").ID(), T("why")).Fielded()

	ListenerCollides = ListenerConflicted.Template("listener %q of Gateway %s (port %d, %s) conflicts with earlier listener %q (%s): istiod builds no server for it and no route attaches to it",
		W("listener").ID(), W("gateway"), N("port"), W("reason"), W("winner"), T("why")).Fielded()

	CertificateRefBad = CertificateRefUnresolved.Template("listener %q of Gateway %s: certificateRef %s cannot be resolved (%s: %s); the listener is not programmed",
		W("listener").ID(), W("gateway"), W("ref").ID(), W("reason"), T("why")).Fielded()

	ParentRefRejected = RouteNotAccepted.Template("%s %s is not accepted by %s (%s): %s; istiod makes no route of it there",
		W("kind"), W("route"), W("parent").ID(), W("reason"), T("why")).Fielded()

	ParentRefMissing = RouteParentNotFound.Template("%s %s names parent Gateway %s, which does not exist; the route attaches to nothing there",
		W("kind"), W("route"), W("parent").ID()).Fielded()

	SetParentRefMissing = RouteParentNotFound.Template("%s %s names parent ListenerSet %s, which does not exist; the route attaches to nothing there",
		W("kind"), W("route"), W("parent").ID()).Fielded()

	BackendDenied = BackendRefNotPermitted.Template("%s %s sends to %s, but no ReferenceGrant in namespace %s allows %ss of namespace %s to reference it; istiod answers its share of requests with 500",
		W("kind"), W("route"), W("backend").ID(), W("namespace"), W("kindAgain"), W("routeNamespace")).Fielded()

	BackendMissing = BackendRefNotFound.Template("%s %s sends to %s: %s; its share of requests gets a 500",
		W("kind"), W("route"), W("backend").ID(), T("why")).Fielded()

	RuleNotConverted = RouteRuleInvalid.Template("%s %s: %s; istiod converts none of the route's rules",
		W("kind"), W("route"), T("why").ID()).Fielded()

	MeshPortMissing = MeshParentPortUnknown.Template("%s %s attaches to port %d of %s, which has no such port; the route never applies",
		W("kind"), W("route"), N("port").ID(), W("parent")).Fielded()

	ListenerSetNotAllowed = ListenerSetNotAccepted.Template("ListenerSet %s is not accepted by Gateway %s (NotAllowed): %s; none of its listeners is programmed",
		W("listenerSet"), W("gateway").ID(), T("why"))

	AmbientListenerRejected = ListenerNotProgrammed.Template("listener %q of %s Gateway %s is not accepted (%s: %s)",
		W("listener").ID(), W("what"), W("gateway"), W("reason").ID(), T("why")).Fielded()

	SetListenerRejected = ListenerNotProgrammed.Template("listener %q of ListenerSet %s is not programmed (%s: %s)",
		W("listener").ID(), W("listenerSet"), W("reason").ID(), T("why")).Fielded()

	SetListenerCollides = ListenerConflicted.Template("listener %q of ListenerSet %s (port %d, %s) conflicts with earlier listener %q of its Gateway or a ListenerSet before it (%s): istiod builds no server for it and no route attaches to it",
		W("listener").ID(), W("listenerSet"), N("port"), W("reason"), W("winner"), T("why")).Fielded()

	FrontendCARefBad = CertificateRefUnresolved.Template("listener %q of %s %s: the Gateway's frontend caCertificateRef %s cannot be resolved (%s: %s); the listener is not programmed",
		W("listener").ID(), W("kind"), W("owner"), W("ref").ID(), W("reason"), T("why")).Fielded()

	PolicyTargetRejected = BackendTLSPolicyNotAccepted.Template("BackendTLSPolicy %s: targetRef %s is not accepted (%s: %s); the policy gives it no TLS",
		W("policy"), W("target").ID(), W("reason"), T("why")).Fielded()

	PolicyValidationInvalid = BackendTLSPolicyNotAccepted.Template("BackendTLSPolicy %s is not accepted (%s: %s)",
		W("policy"), W("reason").ID(), T("why")).Fielded()

	PolicyCARefBad = BackendTLSPolicyCARefUnresolved.Template("BackendTLSPolicy %s: caCertificateRef %s cannot be used (%s: %s); istiod sets the CA to invalid://, so every TLS connection to its targets fails",
		W("policy"), W("ref").ID(), W("reason"), T("why")).Fielded()

	TrafficPolicyTargetRejected = BackendTrafficPolicyNotApplied.Template("XBackendTrafficPolicy %s: targetRef %s is not accepted (%s: %s); the policy gives it nothing",
		W("policy"), W("target").ID(), W("reason"), T("why")).Fielded()

	TrafficPolicyFieldUnsupported = BackendTrafficPolicyNotApplied.Template("XBackendTrafficPolicy %s: istiod does not support %s and accepts the policy without it",
		W("policy"), W("field").ID()).Fielded()

	TrafficPolicyShadowed = BackendTrafficPolicyNotApplied.Template("XBackendTrafficPolicy %s is not applied to %s: istiod applies only the oldest policy of a Service, XBackendTrafficPolicy %q",
		W("policy"), W("host").ID(), W("winner")).Fielded()

	AlphaPolicyNotRead = AlphaGatewayAPIOff.Template("%s %s is not read: istiod reads it only with PILOT_ENABLE_ALPHA_GATEWAY_API=true (meshc --alpha-gateway-api)",
		W("kind").ID(), W("policy"))

	AmbientGateways = AmbientNotCompiled.Template("%d ambient Gateway(s) (%s): meshc checks them and models what istiod deploys, but compiles no waypoint, east-west or ztunnel configuration",
		N("count"), T("gateways").ID())

	ClientCertificateRefBad = CertificateRefUnresolved.Template("Gateway %s: spec.tls.backend.clientCertificateRef %s cannot be resolved (%s: %s); istiod sets the Gateway's ResolvedRefs to False",
		W("gateway"), W("ref").ID(), W("reason"), T("why")).Fielded()

	SetCertificateRefBad = CertificateRefUnresolved.Template("listener %q of ListenerSet %s: certificateRef %s cannot be resolved (%s: %s); the listener is not programmed",
		W("listener").ID(), W("listenerSet"), W("ref").ID(), W("reason"), T("why")).Fielded()
)
