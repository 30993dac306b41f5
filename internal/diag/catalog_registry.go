package diag

// registryEntries: MC3002 and up: the service registry, hosts, exportTo and ports.
var registryEntries = []*Entry{
	HiddenFromOwnNamespace,
	ExportToUnknownNamespace,
	NonFQDNDottedHost,
	ShortHostResolvesElsewhere,
	PortNameWithoutProtocol,
	ExternalNamePortName,
	WorkloadPortProtocolConflict,
	WorkloadTargetPortConflict,
	ServiceEntryProtocolConflict,
}

var (
	HiddenFromOwnNamespace = &Entry{
		Code: "MC3002", Name: "HiddenFromOwnNamespace", Severity: Warning,
		Summary: "A Service's or ServiceEntry's exportTo hides it from its own namespace.",
		Doc: `A service is visible in its own namespace only when its exportTo holds "."
(or the namespace's own name) or "*". An exportTo of "~", or a list that
names only other namespaces, hides it from the proxies next to it: their
calls to it go to the passthrough cluster or fail, and routes and
DestinationRules written for it in that namespace do not apply. This is
checked on the networking.istio.io/exportTo annotation of a Kubernetes
Service (which istiod never validates) and on a ServiceEntry's
spec.exportTo, when the object sets one (the mesh default is a choice of
the mesh, not of the object). Add "." to the list if the namespace's own
workloads should reach the service.`,
	}
	ExportToUnknownNamespace = &Entry{
		Code: "MC3003", Name: "ExportToUnknownNamespace", Severity: Warning,
		Summary: "An exportTo names a namespace that does not exist in the input.",
		Doc: `An exportTo entry names exactly one namespace, with no wildcards, prefixes or
hierarchy. An entry naming a namespace that does not exist exports the
object to nobody there, usually because of a typo or a renamed namespace,
and the namespace that was meant does not see it. This is checked on the
networking.istio.io/exportTo annotation of Services and on the exportTo of
ServiceEntries, VirtualServices and DestinationRules, and only when the
input declares namespaces (holds at least one Namespace object), since a
repository of Istio objects alone says nothing about which namespaces
exist. A namespace exists when a Namespace object declares it, an HNC
subnamespace anchor creates it, objects of the input live in it, it is the
mesh's root namespace, or every cluster has it (default, kube-system,
kube-public, kube-node-lease).`,
	}
	NonFQDNDottedHost = &Entry{
		Code: "MC3004", Name: "NonFQDNDottedHost", Severity: Warning,
		Summary: "A host such as reviews.default is neither short nor fully qualified, and matches no service while its .svc.<domain> form would.",
		Doc: `istiod expands only host names without a dot: reviews becomes
reviews.<namespace>.svc.cluster.local, but reviews.default is taken as
written, and no Kubernetes service is named that. So a VirtualService host,
a DestinationRule host or a Sidecar egress host written as name.namespace
applies to nothing, while the service it meant exists. Write the fully
qualified name the message suggests. Route destinations written this way
are reported by MC5002, which fires for any destination no proxy can reach.`,
	}
	ShortHostResolvesElsewhere = &Entry{
		Code: "MC3005", Name: "ShortHostResolvesElsewhere", Severity: Warning,
		Summary: "A short host expands into the object's own namespace, where no such service exists, while one with that name exists in another namespace.",
		Doc: `A short host (no dot) in a VirtualService or DestinationRule is expanded
with the namespace of the object that holds it, not of the service meant:
host reviews in a DestinationRule of istio-system means
reviews.istio-system.svc.cluster.local. When that service does not exist
but a Service of that name lives in another namespace, the object most
likely meant that one and applies to nothing. Write the fully qualified
name the message suggests. The expanded service is taken to be missing
only when the input holds Services of the object's namespace (or declares
Namespaces without it), as for MC5002. Route destinations are left to MC5002, which
reports every destination no proxy can reach; reporting them here too
would put two findings on one field.`,
	}
	PortNameWithoutProtocol = &Entry{
		Code: "MC3006", Name: "PortNameWithoutProtocol", Severity: Info,
		Summary: "A Service port's name does not select a protocol and it has no appProtocol, so istiod sniffs it.",
		Doc: `istiod takes a Kubernetes Service port's protocol from its appProtocol,
else from its name: "<protocol>" or "<protocol>-<suffix>" with protocol one
of http, http2, https, grpc, grpc-web, tcp, tls, mongo, mysql, redis, udp.
A port that selects none (an empty name, "web", "httptest") gets protocol
sniffing: proxies wait for the first bytes to guess HTTP or TCP, which
adds latency and breaks protocols where the server speaks first. Ports 25,
53, 3306 and 27017 are taken as TCP instead and are not reported. Name the
port for its protocol (http-web, tcp-db) or set appProtocol; a name that
carries the protocol past its first word (jaeger-collector-grpc), where
istiod does not look, gets a proposal that starts with it
(grpc-jaeger-collector). As istioctl
does, Services in system namespaces (kube-system, kube-public,
kube-node-lease, local-path-storage), Services of the control plane (label
istio, or release=istio), Services managed by a Gateway controller and
ExternalName Services (see MC3007) are skipped.`,
		Istio: []string{"IST0118"},
	}
	ExternalNamePortName = &Entry{
		Code: "MC3007", Name: "ExternalNamePortName", Severity: Warning,
		Summary: "An ExternalName Service has a port named tcp or one whose name selects no protocol.",
		Doc: `An ExternalName Service has no cluster IP, so proxies cannot tell its TCP
traffic from other traffic to the same port by address; a port named
exactly tcp, or one whose name and appProtocol select no protocol (so it is
sniffed), may then not be forwarded to the external name correctly. Name
the port for the application protocol it carries (http, https, tls-...) or
set appProtocol, so that HTTP can be routed by Host header and TLS by SNI.
This is istioctl's rule for ExternalName Services; their other ports are
not checked by MC3006.`,
		Istio: []string{"IST0150"},
	}
	WorkloadPortProtocolConflict = &Entry{
		Code: "MC3008", Name: "WorkloadPortProtocolConflict", Severity: Warning,
		Summary: "Services selecting one workload declare the same port number with different protocols.",
		Doc: `When several Services select the same workload, istiod builds that
workload's inbound listeners from all of them, one protocol per port. If
they declare one port number with different protocols (TCP and UDP, or
names and appProtocols that select different protocols, such as http and
tcp), only one protocol is applied to the port and traffic arriving through
the other Service is handled with the wrong one. Make the Services agree,
or use different port numbers. Only workloads with a sidecar in the input
are checked; without Pods or Deployments this is silent, as istioctl is.`,
		Istio: []string{"IST0116"},
	}
	WorkloadTargetPortConflict = &Entry{
		Code: "MC3009", Name: "WorkloadTargetPortConflict", Severity: Warning,
		Summary: "Services selecting one workload send different service ports to the same workload port.",
		Doc: `Services selecting the same workload that forward different service ports
to one targetPort (or one Service that maps two of its ports to it) make
istiod build a single inbound chain for that workload port from the first
of them; the settings of the other service port, its protocol and name,
are lost for the traffic it brings. Use the same service port number for
the same targetPort in every such Service. A targetPort left unset means
the port's own number; a named one is resolved on each workload's
container ports (istioctl compares names as written). Only workloads with
a sidecar in the input are checked, as istioctl does.`,
		Istio: []string{"IST0137"},
	}
	ServiceEntryProtocolConflict = &Entry{
		Code: "MC3010", Name: "ServiceEntryProtocolConflict", Severity: Warning,
		Summary: "ServiceEntries (or a ServiceEntry and a Service) define one host and port with different protocols.",
		Doc: `When several ServiceEntries, or a ServiceEntry and a Kubernetes Service,
define the same host and port number with different protocols and are
visible in a common namespace, proxies there use one of them for the host
(see MC3001 for which) and build the port's listener with its protocol;
the other declaration's protocol is ignored, so its traffic is proxied as
HTTP when it is TCP, or the other way round. Declare the port with the
same protocol everywhere, or keep the declarations apart with exportTo.
The protocol is compared as istiod reads it (an empty or unknown protocol
is sniffed).`,
		Istio: []string{"IST0177"},
	}
)

// The messages of the registry entries.
var (
	ExportHidesOwnNamespace = HiddenFromOwnNamespace.Template("the exportTo of %s %s hides it from its own namespace %s: %s, so proxies there do not see it and their routes and DestinationRules for it do not apply; %s if they should reach it",
		W("kind"), W("object"), W("namespace"), T("why"), T("fix"))

	ExportToNowhere = ExportToUnknownNamespace.Template("the exportTo of %s %s names %s, which no Namespace object, subnamespace anchor or object of the input declares; exporting there reaches nobody: check the spelling",
		W("kind"), W("object"), T("namespaces"))

	DottedHostNotExpanded = NonFQDNDottedHost.Template("%s %s names host %s, which istiod does not expand because it has a dot, and no service has that name; write %s%s",
		W("kind"), W("object"), W("host").ID(), W("prefix"), W("full")).Fielded()

	ShortHostElsewhere = ShortHostResolvesElsewhere.Template("%[1]s %[2]s names short host %[3]s, which istiod expands in the object's own namespace to %[4]s, where no such service exists; a Service named %[3]s exists in %[5]s: %[6]s",
		W("kind"), W("object"), W("host").ID(), W("expanded"), T("namespaces"), T("fix")).Fielded()

	PortSniffed = PortNameWithoutProtocol.Template("port %[1]d (name %[2]q) of Service %[3]s selects no protocol, so istiod sniffs it (HTTP if the first bytes look like it, else TCP); name it <protocol>[-<suffix>], e.g. http-%[4]s or tcp-%[4]s, or set appProtocol",
		N("port").ID(), W("name"), W("service"), W("suffix"))
	PortSniffedNamed = PortNameWithoutProtocol.Template("port %d (name %q) of Service %s selects no protocol, so istiod sniffs it (HTTP if the first bytes look like it, else TCP): istiod reads the protocol only from the name's first word; name it %[5]s or set appProtocol: %[4]s",
		N("port").ID(), W("name"), W("service"), W("protocol"), W("rename"))

	ExternalNamePortUnnamed = ExternalNamePortName.Template("port %d (name %q) of ExternalName Service %s %s; an ExternalName service has no cluster IP, so its TCP traffic may not be forwarded to %s correctly: name the port for the protocol it carries (http, https, tls-...) or set appProtocol",
		N("port").ID(), W("name"), W("service"), T("why"), W("target"))

	WorkloadPortProtocols = WorkloadPortProtocolConflict.Template("Services %s select %s and declare port %d with different protocols (%s); the workload's inbound port gets one protocol, so traffic through the other Service is handled wrongly: make the protocols agree or use different port numbers",
		T("services").ID(), T("workloads"), N("port").ID(), T("protocols"))

	WorkloadTargetPorts = WorkloadTargetPortConflict.Template("%s %s and %s different service ports to workload port %d (%s); istiod builds one inbound chain for that workload port from one of them: use the same service port for it everywhere",
		T("services").ID(), T("select"), W("send"), N("port").ID(), T("ports"))

	HostPortProtocols = ServiceEntryProtocolConflict.Template("host %s port %d is declared with different protocols (%s); proxies that see these declarations use one of them for the host and build the port with its protocol, ignoring the others': declare the same protocol, or keep them apart with exportTo",
		W("host").ID(), N("port").ID(), T("protocols"))
)
