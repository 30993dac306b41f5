package diag

// gatewayEntries: MC6003 and up and MC7xxx: Sidecars, workload selectors, listeners and gateways.
var gatewayEntries = []*Entry{
	EgressHostMatchesNothing,
	SelectorMatchesNoWorkload,
	EmptyWorkloadSelector,
	ListenerConflict,
	CatchAllTCPCapture,
	ConflictingGateways,
	GatewayPortNotOnService,
	DuplicateGatewayCertificate,
	GatewayCredentialNotFound,
}

// The family's entries, in code order.
var (
	EgressHostMatchesNothing = &Entry{
		Code: "MC6003", Name: "EgressHostMatchesNothing", Severity: Warning,
		Summary: "A Sidecar egress host imports no service.",
		Doc: `An egress host (namespace/host) of a Sidecar names no service the proxies
using the Sidecar can import: no Service or ServiceEntry of that namespace
has a matching host, the ones that do are not exported to the Sidecar's
namespace, or they lack the egress listener's port. The entry does nothing;
usually the host or the namespace is misspelt, or the service moved, and
the proxies have no cluster or route for what the entry was meant to
import. The rule is judged only when the input holds services of the
namespace the entry means: "./" means the Sidecar's namespace, a named
namespace that one, and "*/" any namespace (then the input must hold some
service at all). A repository that keeps a namespace's Services elsewhere
gets no finding for entries naming that namespace, and "*/*" and exclusions
("~/") are never reported.`,
	}
	SelectorMatchesNoWorkload = &Entry{
		Code: "MC6004", Name: "SelectorMatchesNoWorkload", Severity: Warning, Istio: []string{"IST0127", "IST0101"},
		Summary: "A workload selector matches no Pod, workload template or WorkloadEntry of the input.",
		Doc: `A Sidecar or DestinationRule workloadSelector, a Gateway selector, or the
selector of a PeerAuthentication, RequestAuthentication, AuthorizationPolicy,
Telemetry, WasmPlugin or EnvoyFilter matches no workload, so istiod applies
the object to nothing: usually a typo in a label or a workload renamed.
Every Pod, workload template (Deployment, StatefulSet, DaemonSet,
ReplicaSet, Job) and WorkloadEntry counts, injected or not, since gateways
often are not.
The selector is judged against the namespaces it can reach: its own; every
namespace for a Gateway (istiod picks gateway workloads mesh-wide) and for a
policy in the root namespace (a Sidecar's or DestinationRule's never leaves
its namespace). A selector is only judged when the input
holds workloads in those namespaces: a repository of Istio objects alone,
whose workloads live elsewhere, gets no finding. A Gateway is judged only
when the input holds a gateway workload (injected with the gateway
template, labelled istio=...gateway as Istio's installers do, or selected
by another Gateway): application repositories often hold their Gateways
but not the gateway, which is installed apart. Fix the labels, or remove
the object.

A selector that applies to its own namespace only (a Sidecar's or
DestinationRule's anywhere, any policy's outside the root namespace) and
matches no workload there but workloads of other namespaces is reported
whether or not the input holds workloads of its own namespace: the object
was likely written in the wrong namespace. A Sidecar with a selector in the
root namespace is the usual case: istiod applies it to the root
namespace's workloads only; it reaches other namespaces only without a
selector, as their default.`,
	}
	EmptyWorkloadSelector = &Entry{
		Code: "MC6005", Name: "EmptyWorkloadSelector", Severity: Warning,
		Summary: "A workload selector has no labels, so it matches every workload it can reach.",
		Doc: `A selector without labels matches everything, which is rarely what was meant.
For a Sidecar it is still a selector Sidecar: it applies to every workload
of its namespace in place of the namespace default and competes with the
other selector Sidecars there (the oldest wins, see MC6002). A Gateway
without selector labels is served by every gateway workload of the mesh.
A DestinationRule with an empty workloadSelector applies to every workload
of its namespace. A policy (PeerAuthentication, AuthorizationPolicy,
RequestAuthentication, Telemetry, WasmPlugin, EnvoyFilter) applies to its
whole namespace, or to the whole mesh in the root namespace, as if it had
no selector. Give the selector labels, or remove it if the wide effect is
meant.`,
	}
	ListenerConflict = &Entry{
		Code: "MC7001", Name: "ListenerConflict", Severity: Warning,
		Summary: "Two services want the same outbound listener and one is dropped.",
		Doc: `A sidecar has one outbound listener per address and port: a service's VIP,
or 0.0.0.0 for HTTP ports and for services without a VIP. When two
services' ports land on the same listener with filter chains that match
the same connections (two TCP services with one VIP and port, two TCP
services without a VIP on one port, TLS services with the same SNI host),
istiod keeps the first service placed (oldest first) and drops the other's
chain without a message; a Mongo or MySQL port sharing a listener with
another protocol is dropped whole. Connections meant for the dropped
service reach the first one. meshc reports what its own listener building
drops, once per dropped port, listing the proxies of every scope where it
happens. Give the services distinct addresses or ports, or keep one out of
the proxies' scope with a Sidecar.`,
	}
	CatchAllTCPCapture = &Entry{
		Code: "MC7002", Name: "CatchAllTCPCapture", Severity: Warning, Istio: []string{"IST0134"},
		Summary: "A TCP service without an address takes the 0.0.0.0 listener of its port for every destination.",
		Doc: `A service port that is plain TCP (or sniffed, not HTTP), whose service has
no address of its own (typically a ServiceEntry with resolution DNS or
NONE and no addresses), is placed on the wildcard listener 0.0.0.0_<port>
with a chain that matches every connection. Every TCP connection a proxy
makes on that port that no address-specific listener takes (to other
external hosts, to IPs without a service) is then treated as this service:
with DNS resolution it is sent to the service's endpoints; with NONE it
goes on to its original destination but is counted, and given the
policies, as this service. Only the first such service on a port gets the
chain (MC7001 reports the others). Give the ServiceEntry addresses, use
TLS (chains then match the SNI host) or an HTTP protocol, or keep it out of
the proxies' scope with a Sidecar. Reported once per service port, listing
the proxies of every scope concerned. When the mesh config has every proxy
capture DNS (ISTIO_META_DNS_CAPTURE in defaultConfig.proxyMetadata), a
ServiceEntry istiod allocates an address to (resolution other than NONE,
no opt-out label) is not reported: the proxies use that address. istioctl
(IST0134) stays silent under ISTIO_META_DNS_AUTO_ALLOCATE, or when the
object's status carries allocated addresses, whatever the resolution;
with resolution NONE istiod does not use such addresses, so meshc reports
it.`,
	}
	ConflictingGateways = &Entry{
		Code: "MC7003", Name: "ConflictingGateways", Severity: Error, Istio: []string{"IST0145"},
		Summary: "Gateways on the same gateway workloads serve one host on one port.",
		Doc: `istiod merges every Gateway that selects a gateway workload, oldest first.
When a server with TLS names a host that an older Gateway's TLS server
already serves on the same port and bind, the newer server is dropped
whole: none of its hosts are served by it, and which one survives depends
on creation times. A server bound to another address is another listener
and meets neither (istiod remembers, per host, only the bind of the server
that named it last). Plain servers with a repeated host are merged instead,
so the VirtualServices bound to either Gateway answer for the host in
VirtualService order, which is rarely what two teams meant. Gateways share
a workload when both selectors match one Pod or workload template of the
input; when the input holds none of their workloads, Gateways with equal
selectors are taken to share theirs, as istioctl does. Serve each host and
port from one Gateway.`,
	}
	GatewayPortNotOnService = &Entry{
		Code: "MC7004", Name: "GatewayPortNotOnService", Severity: Warning, Istio: []string{"IST0162"},
		Summary: "A Gateway server port is exposed by no Service in front of the gateway workloads.",
		Doc: `A Gateway server listens on a port of its gateway workloads, but traffic
only reaches them through a Service that selects them. When no such
Service has the port, the server is unreachable. As istioctl does, a server
port counts as exposed when it is a TCP Service port's targetPort (the port
the gateway listens on) or the Service port itself. The check runs only
when the input holds the gateway workloads and at least one Service that
selects them; a repository without the gateway's Service gets no finding.
Add the port to the Service, or fix the server's port.`,
	}
	DuplicateGatewayCertificate = &Entry{
		Code: "MC7005", Name: "DuplicateGatewayCertificate", Severity: Warning, Istio: []string{"IST0138"},
		Summary: "Gateways on the same workloads use one certificate for different hosts.",
		Doc: `Two Gateways on the same gateway workloads terminate TLS with the same
certificate (the same credentialName, or the same serverCertificate and
privateKey files) for different hosts. HTTP/2 clients reuse a connection
for every host the certificate covers, so a request for a host of the
second Gateway can arrive on a connection whose SNI chose the first
Gateway's server, and gets a 404. Give each Gateway its own certificate,
or serve the hosts from one server. Servers of one Gateway, and servers
with the same hosts (MC7003), are not reported here.`,
	}
	GatewayCredentialNotFound = &Entry{
		Code: "MC7006", Name: "GatewayCredentialNotFound", Severity: Error, Istio: []string{"IST0101", "IST0161"},
		Summary: "A Gateway credentialName names no Secret in the gateway's namespace, or a Secret without a usable certificate.",
		Doc: `istiod's gateway reads a TLS server's credentialName from the namespace its
gateway workload runs in, not the Gateway's. When no Secret of that name is
there, or the Secret lacks a certificate and key (tls.crt and tls.key, or
cert and key), the server cannot serve TLS. A MUTUAL or OPTIONAL_MUTUAL
server also needs a CA certificate: ca.crt or cacert in the Secret, or in a
Secret named <credentialName>-cacert. Many repositories keep Secrets
elsewhere (sealed, external, made by cert-manager), so the check runs only
when the input holds the gateway workloads and carries Secrets in their
namespace; a cert-manager Certificate, a SealedSecret or an ExternalSecret
that makes the Secret counts as the Secret (its keys are not checked).
meshc reads a Secret's type and key names, never its values.
Credentials of other providers (a "://" scheme other than kubernetes://)
are not checked.`,
	}
)

// The messages of the Sidecar, selector, listener and gateway entries.
var (
	EgressHostImportsNothing = EgressHostMatchesNothing.Template("egress host %q of Sidecar %s imports no service: %s; the proxies using this Sidecar get no cluster or route for it; fix the host or namespace, or remove the entry",
		W("host").ID(), W("sidecar"), T("why")).Fielded()

	SelectorMatchesNothing = SelectorMatchesNoWorkload.Template("the selector {%s} of %s %s matches no Pod or workload in %s, so istiod applies it to nothing; fix the labels or remove the %[2]s",
		T("labels"), W("kind"), W("object"), T("where"))
	SelectorMatchesOnlyElsewhere = SelectorMatchesNoWorkload.Template("the selector {%s} of %s %s matches no workload of namespace %s, the only namespace it applies to, but matches %s elsewhere, to which it does not apply%s",
		T("labels"), W("kind"), W("object"), W("namespace"), T("workloads"), T("hint"))
	SelectorWithoutLabels = EmptyWorkloadSelector.Template("the selector of %s %s has no labels, so it matches every workload it can: %s; give it labels, or drop it if that is meant",
		W("kind"), W("object"), T("effect"))

	ListenerChainDropped = ListenerConflict.Template("port %[1]d of %[2]s (%[3]s) is dropped from outbound listener %[4]s, which %[5]s port %[6]d (%[7]s) already holds: %[8]s; connections meant for %[2]s reach %[5]s; give the services distinct addresses or ports",
		N("port").ID(), W("host").ID(), W("protocol"), W("listener").ID(), W("winner").ID(), N("winnerPort"), W("winnerProtocol"), T("why"))

	ChainMatchesEverything = CatchAllTCPCapture.Template("%[1]s (port %[2]d, %[3]s) has no address of its own, so its chain on outbound listener %[4]s matches every connection: any TCP traffic on port %[2]d that no other listener takes (other external hosts, IPs without a service) is sent %[5]s; give the ServiceEntry addresses, or use TLS with SNI or an HTTP protocol",
		W("host").ID(), N("port").ID(), W("protocol"), W("listener"), T("where"))

	TLSServerDropped = ConflictingGateways.Template("%s serves %s with TLS, as older %s already does on the same port for %s; istiod drops this server whole, so none of its hosts are served by it; keep one TLS server per host and port",
		W("server"), T("hosts"), T("earlier"), T("workloads"))
	ServersMerged = ConflictingGateways.Template("%s serves %s, as older %s already does on the same port for %s; istiod merges the servers, so the VirtualServices bound to either Gateway answer for %s, in VirtualService order; serve each host and port from one Gateway",
		W("server"), T("hosts"), T("earlier"), T("workloads"), W("them"))
	ServerProtocolConflict = ConflictingGateways.Template("%s (%s) listens on the port of %s (%s), merged first, on %s; istiod merges only HTTP servers with an HTTP one and none with TCP, so it drops this server whole and serves none of its hosts there, even if the older server has no routes; serve them on different ports or binds",
		W("server"), W("protocol"), W("earlier"), W("earlierProtocol"), T("workloads"))

	ServerPortNotExposed = GatewayPortNotOnService.Template("server %d of Gateway %s listens on port %d, but no Service in front of its gateway %s (%s) exposes that port or target port, so no traffic reaches it; add the port to the Service or fix the server's",
		N("server"), W("gateway"), N("port").ID(), W("workloadWord"), T("workloads")).Fielded()

	CertificateShared = DuplicateGatewayCertificate.Template("%s uses the %s that %s also uses, for other hosts (%s, there %s), on %s: HTTP/2 clients reuse one connection for every host a certificate covers, and requests reaching the other Gateway's server get 404; give each Gateway its own certificate, or serve the hosts from one server",
		W("server"), W("certificate").ID(), W("otherServer").ID(), T("hosts"), T("otherHosts"), T("workloads"))

	CredentialLacksKeys = GatewayCredentialNotFound.Template("server %[1]d of Gateway %[2]s uses credential %[3]s, but Secret %[4]s/%[3]s lacks %[5]s (it has %[6]s); istiod cannot serve TLS on this server; add the keys",
		N("server"), W("gateway"), W("credential").ID(), W("namespace").ID(), T("lacks"), T("has")).Fielded()
	CredentialAbsent = GatewayCredentialNotFound.Template("server %[1]d of Gateway %[2]s uses credential %[3]s, but no Secret %[3]s is in %[4]s, where its gateway workloads run and istiod reads it; the server cannot serve TLS; create the Secret there or fix the name",
		N("server"), W("gateway"), W("credential").ID(), T("namespaces")).Fielded()
)
