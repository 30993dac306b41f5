package diag

// routeEntries: MC5003 and up: VirtualServices and routes.
var routeEntries = []*Entry{
	UnreachableRoute,
	GatewayNotFound,
	DestinationPortRequired,
	VirtualServiceLeaksHosts,
	SidecarBypassedByRoute,
	VirtualServiceHostNotInGateway,
	RouteToUnknownPort,
	IngressRouteSkipsMeshRules,
	SidecarHidesRoutedHost,
	JWTClaimRouteWithoutAuthentication,
}

var (
	UnreachableRoute = &Entry{
		Code: "MC5003", Name: "UnreachableRoute", Severity: Warning, Istio: []string{"IST0130", "IST0131"},
		Summary: "A route or match of a VirtualService can never be used because an earlier one of the same VirtualService takes all its traffic.",
		Doc: `Envoy tries a VirtualService's HTTP routes in order and uses the first that
matches; TCP and TLS routes work the same way. A route without a match
block, or with a match of everything (uri prefix "/" and no other
condition), takes every request, so every route after it is dead. A match
written exactly like a match of an earlier route (its name aside) is dead
too, as is one whose uri an earlier route's uri prefix covers when their
other conditions are the same ("/api" before "/api/v1"); a route all of
whose matches are dead never runs. The same holds for an earlier match of
the same route: the later one never is what selects the route. Move the specific routes before the
general one, or delete the dead ones.`,
	}
	GatewayNotFound = &Entry{
		Code: "MC5004", Name: "GatewayNotFound", Severity: Error, Istio: []string{"IST0101", "IST0165"},
		Summary: "A VirtualService binds a Gateway that does not exist.",
		Doc: `spec.gateways and a match's gateways name Gateways as "namespace/name", or
"name" for one in the VirtualService's own namespace; "mesh" means the
sidecars. A Gateway that is not in the input binds nothing, so no gateway
serves the routes meant for it (an HTTP gateway answers 404). Fix the name
or the namespace, or add the Gateway. istioctl reports this whatever else the
input holds, and so does meshc. A name with "~" is one istiod makes for the
Gateways it derives from a Gateway API Gateway (istioctl's IST0165): such a
reference breaks when the Gateway API object changes; route through it with
an HTTPRoute.`,
	}
	DestinationPortRequired = &Entry{
		Code: "MC5005", Name: "DestinationPortRequired", Severity: Error, Istio: []string{"IST0112"},
		Summary: "A route destination gives no port, and its service has several.",
		Doc: `A destination without port.number is only unambiguous when its service has
one port. With several, a sidecar sends each request to the port it came in
on and a gateway to its server's port, which the service may not have; the
result depends on where the route runs. Name the port. Checked only when the
service is in the input. Unlike istioctl, a VirtualService that applies only
to sidecars is not reported when every port of the services it is for is a
port of the destination: the port a request came in on is then always one
the destination has.`,
	}
	VirtualServiceLeaksHosts = &Entry{
		Code: "MC5006", Name: "VirtualServiceLeaksHosts", Severity: Info,
		Summary: "A Sidecar imports a VirtualService for one host and gets its routes for other hosts it does not import.",
		Doc: `istiod imports a VirtualService into a Sidecar's scope as a whole when one
of its hosts matches the egress hosts. Its other hosts come along: the
proxies get routes for them (a virtual host on port 80 for names that are
not services of the scope) and clusters for their destinations, although
the Sidecar was written to leave them out. Split the VirtualService so that
each holds the hosts that belong together, or import the other hosts on
purpose.`,
	}
	SidecarBypassedByRoute = &Entry{
		Code: "MC5007", Name: "SidecarBypassedByRoute", Severity: Info,
		Summary: "A route destination adds a service to a Sidecar's scope that its egress hosts do not import.",
		Doc: `istiod adds the destinations of the VirtualServices a Sidecar imports to
the scope's services, without checking them against the egress hosts: the
proxies get a cluster (and its DestinationRule) for a service the Sidecar
does not list. Traffic routed by the VirtualService works; the Sidecar is
simply not the whole list of what the proxies reach. Import the service
explicitly so the Sidecar says what it does.`,
	}
	VirtualServiceHostNotInGateway = &Entry{
		Code: "MC5008", Name: "VirtualServiceHostNotInGateway", Severity: Warning, Istio: []string{"IST0132"},
		Summary: "A VirtualService binds a Gateway none of whose servers serves any of its hosts, or, bound to gateways only, has hosts none of them serves.",
		Doc: `A gateway takes a VirtualService's routes only for hosts that its servers
list (a server host "ns/host" counts only for VirtualServices of ns, "*/host"
and "host" for all; for a Gateway API Gateway, its listeners' hostnames, a
listener without one serving all). When no host of the VirtualService meets
a host of any server of the Gateway, the binding does nothing and requests
for those hosts get 404 at the gateway. A VirtualService bound to gateways only (not
"mesh") is also reported for the hosts none of its gateways serves: its
routes for them are never used. Add the host to a server, or fix the
VirtualService's hosts.`,
	}
	RouteToUnknownPort = &Entry{
		Code: "MC5009", Name: "RouteToUnknownPort", Severity: Error, Istio: []string{"IST0101"},
		Summary: "A route destination's port is not a port of its service.",
		Doc: `A destination's port.number must be one of its service's ports. Otherwise
the route names a cluster that istiod never builds (outbound|PORT||host), and
Envoy answers 503 (no cluster) for every request the route takes. Use one
of the service's port numbers. Checked only when the service is in the
input.`,
	}
	IngressRouteSkipsMeshRules = &Entry{
		Code: "MC5010", Name: "IngressRouteSkipsMeshRules", Severity: Warning, Istio: []string{"IST0140"},
		Summary: "A gateway route sends traffic to a host without a subset, while the host's mesh VirtualService routes by subset; gateway traffic skips those rules.",
		Doc: `A gateway applies only the VirtualServices bound to it, never the ones
bound to the mesh. When a gateway's VirtualService routes straight to a
service (no subset) and another VirtualService splits the service's traffic
into subsets for the sidecars, requests coming in through the gateway are
spread over all the service's endpoints: the canary weights, version pins
and the rest of the mesh rules do not apply to them. Route to the subsets
in the gateway's VirtualService too, or bind the mesh VirtualService to the
gateway as well.`,
	}
	SidecarHidesRoutedHost = &Entry{
		Code: "MC5011", Name: "SidecarHidesRoutedHost", Severity: Warning,
		Summary: "A VirtualService of a namespace routes for the mesh, and the Sidecar of that namespace's proxies does not import any of its hosts.",
		Doc: `A Sidecar's egress hosts decide which VirtualServices its proxies get: one
is imported only when one of its hosts matches the egress hosts (compared
with the VirtualService's namespace). A VirtualService written in the same
namespace for the mesh is usually meant for those proxies; when the Sidecar
imports none of its hosts, its routes, retries and fault rules never apply
to them and the traffic goes by the default route, if the host is reachable
at all. Import the host in the Sidecar, or drop the VirtualService.`,
	}
	JWTClaimRouteWithoutAuthentication = &Entry{
		Code: "MC5012", Name: "JWTClaimRouteWithoutAuthentication", Severity: Warning, Istio: []string{"IST0149"},
		Summary: "A gateway route matches on JWT claims, but no RequestAuthentication applies to the gateway's proxies.",
		Doc: `A match on a header "@request.auth.claims.NAME" reads the claims of a JWT
that a RequestAuthentication has validated on the same proxy. On a gateway
proxy without one, there are no claims: a match on a claim never holds
(and a withoutHeaders match on one always does), so the route does not do
what it says. Add a RequestAuthentication selecting the gateway's
workloads, in their namespace or the root namespace. Gateway workloads of
the input are checked one by one; when the input has none, the finding is
made only if no RequestAuthentication of the input selects the Gateway's
selector labels.`,
	}
)

// The messages of the route entries.
var (
	RouteAfterCatchAll = UnreachableRoute.Template("%s of %s is never used: %s before it %s, and the first route that matches wins; move it before %[3]s or remove it",
		W("route"), W("virtualService"), W("catchAll"), T("why"))
	RouteMatchesCovered = UnreachableRoute.Template("%s of %s is never used: each of its matches repeats or is covered by a match of an earlier route (%s), which takes the traffic first; remove it or move it before",
		W("route"), W("virtualService"), W("earlier"))
	MatchCovered = UnreachableRoute.Template("match[%d] of %s of %s never takes traffic: %s; remove it or move it before",
		N("match"), W("route"), W("virtualService"), T("how"))

	NoSuchGateway = GatewayNotFound.Template("%s binds gateway %q, but there is no Gateway %s%s, so no gateway serves the routes meant for it",
		W("virtualService"), W("ref"), W("gateway").ID(), T("hint")).Fielded()

	GatewayServesNoHost = VirtualServiceHostNotInGateway.Template("%s binds gateway %s, but no server of that Gateway serves any of its hosts (%s); the servers offer %s, so the gateway takes none of these routes",
		W("virtualService"), W("gateway").ID(), T("hosts"), T("offered"))
	GatewaysServeSomeHosts = VirtualServiceHostNotInGateway.Template("%s binds gateways only (%s), and none of them serves %s; its routes for %s are never used: add %[4]s to a server or remove %[4]s",
		W("virtualService"), T("gateways"), T("hosts"), W("them"))

	PortlessDestination = DestinationPortRequired.Template("%s routes to %s without a port%s, but the service has ports %s; a sidecar then uses the port the request came in on and a gateway its server's port: set port.number",
		W("virtualService"), W("host").ID(), T("more"), T("ports"))

	NoSuchServicePort = RouteToUnknownPort.Template("%s routes to port %d of %s, which has only %s; the route names cluster %s, which istiod never builds, so its requests fail with 503",
		W("virtualService"), N("port").ID(), W("host").ID(), T("ports"), W("cluster")).Fielded()

	SidecarImportsOtherHosts = VirtualServiceLeaksHosts.Template("Sidecar %s imports %s through host %s, and with it its routes for %s, which the Sidecar's egress hosts do not import; split the VirtualService or import %s on purpose",
		W("sidecar").ID(), W("virtualService"), W("via"), T("hosts").ID(), W("those"))

	RouteImportsHost = SidecarBypassedByRoute.Template("%s routes to %s, which Sidecar %s does not import; istiod adds it to the scope anyway, so these proxies get a cluster for it: import it in the Sidecar to say so",
		W("virtualService"), W("host").ID(), W("sidecar").ID())

	SidecarImportsNoHost = SidecarHidesRoutedHost.Template("%s routes %s for the mesh, but Sidecar %s, which applies to %s, imports none of its hosts%s, so its routes never apply there: import %s in the Sidecar or remove the VirtualService",
		W("virtualService"), T("hosts"), W("sidecar").ID(), T("proxies"), T("why"), W("theHosts"))

	GatewayRouteWithoutSubset = IngressRouteSkipsMeshRules.Template("%s sends traffic from gateway %s to %s without a subset, while %s routes that host by subset for the mesh; gateways do not apply mesh VirtualServices, so these requests skip %s rules and reach every endpoint: route to the subsets here too, or bind %s to the gateway",
		W("route"), T("gateways"), W("host").ID(), T("meshRoutes"), W("their"), W("them")).Fielded()

	ClaimRouteUnselected = JWTClaimRouteWithoutAuthentication.Template("%s routes on JWT claim %q through gateway %s, but no RequestAuthentication in the input selects its workloads (%s); without a validated token there are no claims, so the match never holds: add a RequestAuthentication selecting the gateway's workloads",
		W("route"), W("claim"), W("gateway").ID(), T("selector"))
	ClaimRouteUnauthenticated = JWTClaimRouteWithoutAuthentication.Template("%s routes on JWT claim %q through gateway %s, but no RequestAuthentication applies to its %s; without a validated token there are no claims, so the match never holds: add a RequestAuthentication selecting the gateway's workloads",
		W("route"), W("claim"), W("gateway").ID(), T("proxies"))
)
