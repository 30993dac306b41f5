package diag

// destinationRuleEntries: MC4004 and up: DestinationRules.
var destinationRuleEntries = []*Entry{
	DestinationRuleHostNotFound,
	UnreachableDestinationRuleExport,
	SelectorRuleDropsSubsets,
	SubsetSelectsNoWorkload,
	NoCACertificates,
	MTLSDisabledForStrictServer,
}

var (
	DestinationRuleHostNotFound = &Entry{
		Code: "MC4004", Name: "DestinationRuleHostNotFound", Severity: Warning, Istio: []string{"IST0174"},
		Summary: "A DestinationRule's host matches no Kubernetes Service or ServiceEntry.",
		Doc: `The host of a DestinationRule, after short-name expansion in the rule's
namespace, must be the hostname of a service (a Kubernetes Service or a
ServiceEntry host, or a name under a wildcard ServiceEntry host); a
wildcard rule host must cover at least one service. Otherwise istiod builds
no cluster the rule applies to and its policies and subsets are silently
unused: often a typo, a host written "name.namespace" (which is not
expanded), or a service that was renamed or removed. Because many
repositories hold Istio objects without their Services, meshc judges a host
of the Kubernetes form "name.NS.svc.<domain>" (or "*.NS.svc.<domain>")
only when the input holds at least one Service, ServiceEntry or workload of
namespace NS, or declares Namespaces and NS is neither among them nor
created by HNC (the namespace does not exist); any other (external) host only when the input
holds at least one ServiceEntry; and never the bare "*" host. A short host
naming a Service of another namespace, or a "name.namespace" host whose
".svc" form is a service, is reported as MC3005 or MC3004 instead, which
name the fix.`,
	}
	UnreachableDestinationRuleExport = &Entry{
		Code: "MC4005", Name: "UnreachableDestinationRuleExport", Severity: Warning,
		Summary: "A DestinationRule is exported to namespaces whose proxies never consult it.",
		Doc: `A proxy in namespace P looks for a DestinationRule in P itself, then among
the rules of the service's namespace exported to P, then among those of the
root namespace. A rule that lives neither in the root namespace nor in the
namespace of the service its host names is therefore used only by proxies
of its own namespace: exporting it elsewhere has no effect, and the
namespaces listed get none of its policies or subsets. A rule with a
workloadSelector is likewise used only in its own namespace, whatever its
exportTo. Move the rule next to the service (or into the root namespace) to
apply it to other namespaces, or drop the export. meshc judges a rule whose
host does not name its namespace only when the input holds services for
the host.`,
	}
	SelectorRuleDropsSubsets = &Entry{
		Code: "MC4006", Name: "SelectorRuleDropsSubsets", Severity: Warning,
		Summary: "A workload-selector DestinationRule wins for some workloads but lacks subsets of the plain rule it replaces for them.",
		Doc: `For the workloads its workloadSelector matches, a DestinationRule with a
selector replaces the plain (selector-less) rule for the same host. istiod
merges a later plain rule into a selector rule only when the plain rule's
exportTo lists "." explicitly; otherwise the two stay apart and the
selected workloads see only the selector rule's subsets. Routes from those
workloads to a subset that only the plain rule defines point at a cluster
their proxy does not have, and fail with 503. Copy the subsets into the
selector rule. The diagnostic names the subsets lost and the workloads.`,
	}
	SubsetSelectsNoWorkload = &Entry{
		Code: "MC4007", Name: "SubsetSelectsNoWorkload", Severity: Warning, Istio: []string{"IST0173"},
		Summary: "A DestinationRule subset's labels match no workload of the host's service.",
		Doc: `A subset's endpoints are the service's endpoints whose workload labels
include the subset's labels, i.e. the workloads matched by the service
selector and the subset labels together. When no Pod, workload template or
WorkloadEntry of the service matches, the subset's cluster is empty and
requests routed to it fail with 503 (no healthy upstream). Usually a
version label that was changed on one side only. meshc judges a subset only
when the input holds workloads the service selects, so a repository that
carries no workloads is not reported, and leaves out the labels istiod adds
to endpoints from the cluster (topology.kubernetes.io/region and zone,
topology.istio.io/subzone, cluster and network, kubernetes.io/hostname),
which manifests do not show. A rule gets one finding however many of its
subsets select nothing: it names the first five with their labels and
counts the others.`,
	}
	NoCACertificates = &Entry{
		Code: "MC4008", Name: "NoCACertificates", Severity: Warning, Istio: []string{"IST0128", "IST0129"},
		Summary: "A DestinationRule originates TLS (SIMPLE or MUTUAL) to a server inside the mesh without caCertificates, so the server is checked against the proxy's system CAs.",
		Doc: `With tls.mode SIMPLE or MUTUAL and no caCertificates, no credentialName
and no insecureSkipVerify, istiod tells the proxy to verify the server's
certificate against the operating system's CA bundle of the proxy image.
For a server on the internet that is the right check, and meshc says
nothing: the rule's host is a MESH_EXTERNAL ServiceEntry, or in no
registry. For a server inside the mesh (a Kubernetes Service, or a
MESH_INTERNAL ServiceEntry) it rarely is: such a server's certificate
seldom comes from a public CA, and the handshake fails. Set caCertificates
(or credentialName) to the CA that signs the server's certificate.
Reported for the top-level policy (IST0128), each port-level setting
(IST0129) and each subset's policy.

istioctl reports every such setting, external hosts included, because it
describes Istio releases from before VERIFY_CERTIFICATE_AT_CLIENT became
the default, which did not verify the server at all. meshc follows the
current default (docs/semantics/registry.md §0), and also stays silent when
the setting has a credentialName (the secret's CA certificate is used,
whether or not the rule has a workloadSelector) or sets insecureSkipVerify
(verification was turned off on purpose).`,
	}
	MTLSDisabledForStrictServer = &Entry{
		Code: "MC4009", Name: "MTLSDisabledForStrictServer", Severity: Error,
		Summary: "Callers use a DestinationRule with tls.mode DISABLE for a service whose workloads require mutual TLS (STRICT).",
		Doc: `A PeerAuthentication in STRICT mode (mesh-wide, for the namespace, for the
workloads or for one of their ports) makes the service's sidecars refuse
plaintext. A DestinationRule with tls.mode DISABLE, top-level or for the
port, makes the proxies that use it send plaintext to that service, so
every connection from them is reset. The diagnostic names the rule, the
service, the ports, the PeerAuthentication and the calling proxies (the
rule is the one their DestinationRule lookup chooses). Use ISTIO_MUTUAL, or
remove the tls setting and let auto mutual TLS choose. When the input holds
the service's workloads, their sidecars and the PeerAuthentications that
select them decide, port by port, and workloads without a sidecar are
never reported. When it does not, only a STRICT policy of the service's
own namespace counts: a mesh-wide STRICT policy with a DISABLE rule is the
usual way to call a service that has no sidecar.`,
	}
)

// The messages of the DestinationRule entries.
var (
	RuleHostMatchesNothing = DestinationRuleHostNotFound.Template("the host %s of %s matches no service: %s, so the rule applies to nothing and its policies and subsets are unused",
		W("host").ID(), W("rule"), T("why"))

	SelectorRuleExported = UnreachableDestinationRuleExport.Template("%s is exported to %s, but it has a workloadSelector, so only the workloads it selects in %s use it: the exportTo has no effect",
		W("rule"), T("exportedTo"), W("namespace"))
	ExportNeverConsulted = UnreachableDestinationRuleExport.Template("%s is exported to %s, but proxies there never consult it: other namespaces look for rules about %s only in %s (where the %s) and the root namespace %s; %s. Move the rule to %s or drop the export",
		W("rule"), T("exportedTo"), W("host"), T("homes"), W("serviceIs"), W("root"), T("users"), W("target"))

	SelectorRuleLacksSubsets = SelectorRuleDropsSubsets.Template("%[1]s replaces %[2]s for %[3]s, but lacks %[4]s that %[2]s defines for %[5]s; routes from %[6]s to %[7]s fail with 503. Copy the %[8]s into %[1]s",
		W("rule"), W("plain").ID(), T("workloads"), T("subsets"), W("host"), W("fromWho"), W("them"), W("subsetWord"))

	SubsetEmpty = SubsetSelectsNoWorkload.Template("subset %q of %s selects no workload of %s: none of the workloads its selector %s matches has the labels %s (they have %s); requests routed to the subset fail with 503",
		W("subset"), W("rule"), W("host").ID(), T("selector"), T("labels"), T("have"))
	SubsetsEmpty = SubsetSelectsNoWorkload.Template("%d subsets of %s select no workload of %s: none of the workloads its selector %s matches has the labels of %s (they have %s); requests routed to these subsets fail with 503",
		N("count"), W("rule"), W("host").ID(), T("selector"), T("subsets"), T("have"))

	NoCAForTLS = NoCACertificates.Template("%s originates TLS (%s) to %s%s, a server inside the mesh, without caCertificates: the proxy checks the server's certificate against its system CA bundle, which rejects a certificate from a private CA; set caCertificates or credentialName",
		W("rule"), W("mode"), W("host"), T("where"))

	PlaintextToStrict = MTLSDisabledForStrictServer.Template("%s sets tls.mode DISABLE for %s (%s), whose workloads require mutual TLS (STRICT, by PeerAuthentication %s): the proxies using this rule send plaintext and the server refuses every connection. Use ISTIO_MUTUAL or remove the tls setting",
		W("rule"), W("host").ID(), T("ports"), T("policies"))
)
