package diag

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Entry describes one diagnostic code. Codes are stable: once published a
// code keeps its meaning and is never reused.
type Entry struct {
	Code     string
	Name     string
	Severity Severity
	// Summary is one line, used as the SARIF short description.
	Summary string
	// Doc is the longer text `meshc lint --explain CODE` prints and
	// docs/diagnostics.md shows.
	Doc string
	// Istio lists the istioctl analyze codes (IST0101, ...) that report
	// the same finding; galley.istio.io/analyze-suppress honours them.
	Istio []string
	// Messages are the entry's message templates (see Template); report
	// sites not yet converted to one format their text with At.
	Messages []*Message
}

// At is a finding of e about obj, with e's name and default severity,
// its text formatted at the report site. Its key names the code and the
// subject only; a site that can report several findings of e about one
// subject tells them apart with Diagnostic.Keyed.
func (e *Entry) At(obj ObjectRef, format string, args ...any) Diagnostic {
	return Diagnostic{
		Code:     e.Code,
		Name:     e.Name,
		Severity: e.Severity,
		Message:  fmt.Sprintf(format, args...),
		Key:      keyFor(e.Code, obj, nil),
		Object:   obj,
	}
}

// Is reports whether d is a finding of e.
func (e *Entry) Is(d Diagnostic) bool { return d.Code == e.Code }

// Anchor is the fragment of the entry's section in docs/diagnostics.md.
func (e *Entry) Anchor() string { return strings.ToLower(e.Code) }

// HelpURI points at the entry's section of the published catalog.
func (e *Entry) HelpURI() string { return DocsURL + "#" + e.Anchor() }

// DocsURL is where docs/diagnostics.md is published.
const DocsURL = "https://github.com/meshc/meshc/blob/main/docs/diagnostics.md"

// The catalog: one typed value per code, whose message templates passes
// and analyzers report through (diag.YAMLSyntaxError.At(ref, problem)). A
// code is added together with the pass that reports it. Keep them sorted
// by code.
var (
	InvalidYAML = &Entry{
		Code: "MC1001", Name: "InvalidYAML", Severity: Error,
		Summary: "A document cannot be parsed as YAML or JSON.",
		Doc: `The document at this line is not valid YAML (or JSON). Nothing in it is
loaded; the other documents of the file, and every other file, still are.
Duplicate keys in one mapping count as a syntax error, because one of the
two values would be silently lost. Alias-heavy or very deeply nested
documents are refused here too rather than expanded without bound.`,
	}
	InvalidObject = &Entry{
		Code: "MC1002", Name: "InvalidObject", Severity: Error,
		Summary: "An object lacks apiVersion, kind or metadata.name, has an invalid name or namespace, or a Kubernetes field of the wrong type.",
		Doc: `A document must be a mapping with apiVersion, kind and metadata.name, as
kubectl requires. Names must be valid Kubernetes names: DNS-1123 labels for
Namespaces, DNS-1035 labels for Services, DNS-1123 subdomains for other
kinds; namespaces must be DNS-1123 labels. A field of a Kubernetes kind
(Service, Pod, Deployment, ...) with a value of the wrong type is reported
at the field's line with its path. The object is left out, as the API
server would refuse it. A field Kubernetes does not know is MC1009, a
warning.`,
	}
	SchemaViolation = &Entry{
		Code: "MC1003", Name: "SchemaViolation", Severity: Error,
		Summary: "An Istio, HNC or Gateway API spec fails strict decoding (unknown field, wrong type, bad enum value), its CRD's schema or CEL rules (Gateway API) or istiod's admission validation (Istio); or an apiVersion the kind is not served at.",
		Doc: `Istio (networking.istio.io, security.istio.io) and HNC (hnc.x-k8s.io)
objects are decoded strictly against their schemas, as the API server
validates custom resources: an unknown field, a value of the wrong type, an
enum value that does not exist or two members of one oneof are reported at
the field's line with its path, and the object is left out. Field names are
the camelCase JSON names of the CRDs; a snake_case name is unknown and the
message suggests the right one.
The rules of istiod's admission validation that the schemas leave out
are checked the same way, since the webhook rejects such an object and
istiod would ignore it; meshc follows istiod's validation function by
function. VirtualService: hosts (valid DNS names, no "*" for the mesh, no
overlaps), routes present, one action per HTTP route (route, redirect,
directResponse, delegate), delegate rules, destinations (host, DNS-label
subset, port), weights, header names and values, RE2 regexes, CORS, fault
injection, redirects, rewrites, retries, mirrors, gateway references, TLS
SNI hosts within the hosts, durations of at least 1 ms in whole
milliseconds. DestinationRule: host, unique DNS-label subset names, labels,
non-empty traffic policies and connection pools, non-negative pool counts,
outlier percentages, consistent hash, maglev, locality and zone-aware load
balancing, warmup, client TLS, tunnel and proxy protocol, exportTo and
workload selector. Gateway: a DNS-label name, servers with hosts
(namespace/host), named unique ports, protocols, binds, TLS modes with the
certificates they need. ServiceEntry: hosts, addresses, ports, the
resolution's rules on endpoints, addresses and hosts, exportTo. Sidecar:
selector, ingress and egress ports, binds, unix sockets, default
endpoints, ingress TLS, egress hosts in namespace/host form, outbound
policy. WorkloadEntry: address, ports, labels. PeerAuthentication:
portLevelMtls needs a selector. AuthorizationPolicy: action and provider,
DENY and CUSTOM need rules, sources, operations and conditions. Every
kind: annotations the webhook refuses (istio.io/dry-run outside
AuthorizationPolicy). What istiod only warns about is MC1008.
Gateway API objects (gateway.networking.k8s.io) are decoded strictly the
same way, then checked against their CustomResourceDefinition at the
object's own version (v1beta1 against the v1beta1 schema), as the API
server checks a custom resource on create, with its own code
(k8s.io/apiextensions-apiserver): the CRD's defaults are applied, then its
OpenAPI rules (types, enums, patterns, lengths, bounds, item counts,
required fields, formats), its list keys (two listeners of one name) and its
CEL rules (x-kubernetes-validations: listener names and port, protocol and
hostname combinations unique, TLS settings by protocol, no hostname on TCP
listeners, filter combinations of a route rule, a redirect beside backends,
absolute path matches, a port on Service backends, distinct parentRefs,
backendRequest timeouts within the request timeout, ...). The message is
the API server's; the status is ignored, as on create. The CRDs are the
experimental channel of the sigs.k8s.io/gateway-api release meshc is built
with, which serves every version Istio reads.
The mesh config (the istio ConfigMap's mesh key, or --mesh-config) is the
exception: istiod ignores fields it does not know there, so meshc reports
them as warnings and applies the rest.`,
		Istio: []string{"IST0106"},
	}
	DuplicateObject = &Entry{
		Code: "MC1004", Name: "DuplicateObject", Severity: Error,
		Summary: "The same kind, namespace and name appear more than once.",
		Doc: `Object identity is API group, kind, namespace and name (the version does not
matter: networking.istio.io/v1 and v1beta1 VirtualServices with one name are
one object). The first in input order (file path, then position in the file)
is kept; the others are left out. Both places are named.`,
	}
	UnknownKind = &Entry{
		Code: "MC1005", Name: "UnknownKind", Severity: Info,
		Summary: "A kind meshc does not model that may change what istiod computes; named once per kind with what the results miss.",
		Doc: `meshc reads Kubernetes Namespaces, Services, Pods, workload templates
(Deployment, StatefulSet, DaemonSet, ReplicaSet, Job) and ConfigMaps, the
Istio networking and security kinds, and HNC's kinds. Objects of other kinds
are kept for their identity: their namespace exists, and HNC propagates
them when the HNCConfiguration lists their type (Roles always). Kinds known
not to touch the mesh (ServiceAccount, Secret, RBAC, HorizontalPodAutoscaler,
PodDisruptionBudget, NetworkPolicy, CustomResourceDefinition and the like)
load quietly. For the others one diagnostic is reported per kind, at its
first object, with the count and, for kinds istiod acts on (Gateway API
routes, Ingress, EndpointSlice, WasmPlugin, ...), what the results lack
because meshc does not model them.`,
	}
	UnreadableInput = &Entry{
		Code: "MC1006", Name: "UnreadableInput", Severity: Error,
		Summary: "A path cannot be read, is not text, is over the size limit, or is not a regular file where one is needed.",
		Doc: `A path that does not exist, cannot be opened, is a symlink loop, holds
binary data (a NUL byte or invalid UTF-8) or is larger than the size limit
(32 MiB) is skipped. So is a file found in a directory, or given as the
mesh config, that is not a regular file (a FIFO, a device, a link to
/dev/zero): it is refused unopened, since it could be endless or wait for
a writer. Only a pipe named on the command line as a manifest input is
read as a stream, up to the limit. meshc lint exits with status 2 when
this happens, because the result does not cover the whole input.`,
	}
	ExpiredSuppression = &Entry{
		Code: "MC1007", Name: "ExpiredSuppression", Severity: Warning,
		Summary: "A suppression in .meshc.yaml has passed its expiry date, so its findings are reported again.",
		Doc: `A suppression written in .meshc.yaml may carry an expires date, so that an
accepted risk is looked at again. From that day on the suppression no
longer applies: the findings it hid are reported, and this warning points
at the suppression's line with its reason. Renew the date or fix what it
suppressed.`,
	}
	UnknownField = &Entry{
		Code: "MC1009", Name: "UnknownField", Severity: Warning,
		Summary: "A Kubernetes object (Service, Pod, Deployment, ...) has a field its API type does not have; the API server drops it.",
		Doc: `Fields of the Kubernetes kinds meshc decodes (Namespace, Service, Pod,
ConfigMap, Secret and the workload templates) are checked against their
API types as the API server's field validation checks them, metadata
included: a field the type does not have is reported at its line with its
path, often a typo (metadata.lables, ports[0].targetport) or a field
indented one level off. With its default field validation (Warn) the API
server stores the object without the field and returns a warning;
kubectl apply's default --validate=strict, and clients that validate
against the schema, refuse the object instead. meshc keeps the object,
without the field, as stored.
The types are those of the Kubernetes API meshc is built with; a field
added by a newer Kubernetes release is reported too.`,
	}
	LinkNotFollowed = &Entry{
		Code: "MC1010", Name: "LinkNotFollowed", Severity: Info,
		Summary: "A symlink in the inputs leads into a pseudo-filesystem (/proc, /sys, ...); it is not followed.",
		Doc: `Walking a directory follows symlinks, but not those that lead out of the
inputs into a kernel pseudo-filesystem: proc, sysfs, devtmpfs, cgroup,
debugfs and the like hold no manifests, and /proc/self or sysfs's links
between devices make a walk take minutes or never end. The link is named
and passed over. Name the path on the command line to read it anyway. A
directory reached through several links is walked once, under the first
path met.`,
	}
	RenderFailed = &Entry{
		Code: "MC1011", Name: "RenderFailed", Severity: Error,
		Summary: "A Helm chart or a kustomization in the inputs cannot be rendered; none of its objects are loaded.",
		Doc: `meshc renders the Helm charts (a directory with Chart.yaml) and the
kustomizations (a directory with kustomization.yaml) it is given or finds,
in-process and without network. When Helm or Kustomize fails (a template
error, a missing values file, a dependency not in the chart's charts/
folder, a patch that does not apply, a cycle of bases, a remote base, a
base outside the input tree) the chart or overlay is named with the
library's account of why, at the template line when Helm gives one, and
the other inputs still load. meshc lint exits with status 2, as for an
unreadable file, because the result does not cover the whole input.`,
	}
	RenderedNothing = &Entry{
		Code: "MC1012", Name: "RenderedNothing", Severity: Info,
		Summary: "A Helm chart renders no manifests with the values given.",
		Doc: `Every template of the chart rendered empty with the values given (every
object behind a condition that is off, say): nothing of it is checked.
Pass the values files of the environment to check with --helm-values, or
in .meshc.yaml's helm entries.`,
	}
	HierarchyCycle = &Entry{
		Code: "MC2001", Name: "HierarchyCycle", Severity: Error,
		Summary: "Namespace parents form a cycle (HNC ActivitiesHalted/InCycle).",
		Doc: `HierarchyConfiguration parents (and subnamespace anchors) lead back to a
namespace already on the path. HNC marks every member of the cycle
ActivitiesHalted/InCycle: no tree labels above them, no propagation into
them or their descendants, which are halted too.`,
	}
	ParentMissing = &Entry{
		Code: "MC2002", Name: "ParentMissing", Severity: Error,
		Summary: "A namespace's parent does not exist or is not managed by HNC (ActivitiesHalted).",
		Doc: `spec.parent of a HierarchyConfiguration, or a subnamespace annotation, names
a namespace that exists nowhere in the input (ParentMissing) or that HNC
does not manage (IllegalParent: an excluded namespace, or one the
included-namespace regex does not match). HNC keeps the edge but halts the
namespace and its subtree: nothing propagates into them. A parent set on a
namespace managed by another tool is ignored (a warning).`,
	}
	PropagationConflict = &Entry{
		Code: "MC2003", Name: "PropagationConflict", Severity: Warning,
		Summary: "A propagated object overwrites a same-named object in a descendant namespace.",
		Doc: `HNC copies an object from an ancestor into every descendant where it is
eligible, and the root-most source wins. A same-named object written in a
descendant is not an override: HNC overwrites it with the copy and its own
content is lost (it also stops being a source for its own descendants).
Rename one of them, or exclude the descendant with a propagate.hnc.x-k8s.io
annotation on the source.`,
	}
	SubnamespaceAnchorMismatch = &Entry{
		Code: "MC2004", Name: "SubnamespaceAnchorMismatch", Severity: Warning,
		Summary: "A subnamespace anchor and its namespace disagree (Conflict, Forbidden, missing anchor, competing anchors).",
		Doc: `A SubnamespaceAnchor p/c creates namespace c as a child of p. When c already
exists and is not p's subnamespace the anchor is in Conflict; when c is not
managed it is Forbidden; when c says it is a subnamespace of p but p has no
anchor, c has BadConfiguration/SubnamespaceAnchorMissing (its parent is
still p). When several anchors want to create the same namespace, meshc
keeps the one whose parent name sorts first; a cluster keeps whichever HNC
reconciled first.`,
	}
	ActivitiesHalted = &Entry{
		Code: "MC2005", Name: "ActivitiesHalted", Severity: Warning,
		Summary: "Propagation into a namespace is frozen because an ancestor is halted.",
		Doc: `A namespace below a halted one (cycle, missing or illegal parent) has the
derived condition ActivitiesHalted/AncestorHaltActivities: HNC creates,
updates and deletes no copies there, and its tree labels stop at the
halted ancestor. Fix the ancestor named in the diagnostic.`,
	}
	InheritedSlotConflict = &Entry{
		Code: "MC2006", Name: "InheritedSlotConflict", Severity: Error,
		Summary: "An inherited copy and a local object both fill a one-per-namespace Istio slot.",
		Doc: `Some Istio objects hold a slot of which a namespace has one: the Sidecar
without workloadSelector (the namespace default) and the PeerAuthentication
without selector (namespace-wide mTLS). HNC detects conflicts by name only,
so a propagated copy can sit next to a local object with another name.
Istio then picks one by age, which meshc cannot know from files. Remove one,
or stop the propagation into this namespace.`,
	}
	IllegalManagedMetadata = &Entry{
		Code: "MC2007", Name: "IllegalManagedMetadata", Severity: Warning,
		Summary: "A HierarchyConfiguration or anchor sets a label or annotation HNC does not manage; it is dropped.",
		Doc: `spec.labels and spec.annotations of a HierarchyConfiguration (or of a
subnamespace anchor) only take effect for keys matching the operator's
--managed-namespace-label / --managed-namespace-annotation patterns. Other
keys are dropped and the namespace gets BadConfiguration/IllegalManaged-
Label (or Annotation). Propagation is not halted.`,
	}
	InvalidPropagationException = &Entry{
		Code: "MC2008", Name: "InvalidPropagationException", Severity: Error,
		Summary: "A propagate.hnc.x-k8s.io annotation cannot be parsed, so the object propagates nowhere.",
		Doc: `The exception annotations select, treeSelect, none and all on a source
object must parse: select is a label selector, treeSelect a comma list of
namespace names each optionally negated with "!" (at most one without),
none and all booleans. An unparsable value makes HNC propagate the object
nowhere and raise CannotParseSelector.`,
	}
	RootNamespaceInHierarchy = &Entry{
		Code: "MC2009", Name: "RootNamespaceInHierarchy", Severity: Warning,
		Summary: "The Istio root namespace is an HNC parent, so its mesh-wide objects are copied into children.",
		Doc: `Objects in the mesh config's root namespace (istio-system by default) already
apply mesh-wide: the root Sidecar is the default for namespaces without one,
the root DestinationRule is the last lookup step, the root
PeerAuthentication is the mesh policy. When the root namespace has HNC
children, HNC turns these into per-namespace copies, which changes
precedence: a root DestinationRule copy now beats service-namespace rules,
and a root PeerAuthentication copy becomes namespace-level. Exclude the root
namespace from HNC unless that is intended.`,
	}
	AmbiguousHost = &Entry{
		Code: "MC3001", Name: "AmbiguousHost", Severity: Warning,
		Summary: "A hostname visible to a proxy is defined in two or more namespaces; only one namespace's service is used.",
		Doc: `When proxies can see one hostname from several namespaces (ServiceEntries
for the same external host, or the same name written in several places),
istiod keeps the services of one namespace only: the proxy's own namespace
first, then a Kubernetes Service over a ServiceEntry, then the first in
import order (exported to the proxy's namespace by name before public, and
oldest first). The diagnostic names the winner, the losers and the rule that
decided, and lists the proxies concerned.`,
	}
	ShadowedDestinationRule = &Entry{
		Code: "MC4001", Name: "ShadowedDestinationRule", Severity: Warning,
		Summary: "A DestinationRule is never chosen for some or all proxies that reach its host, because another rule wins the lookup.",
		Doc: `For a proxy in namespace P calling a service of namespace S, istiod looks
for DestinationRules in a fixed order: rules in P (the client's namespace,
even a wildcard one), then rules exported from S, then rules exported from
the root namespace; within a step the most specific host wins, and among
several unmergeable rules for one host the last one. Only one rule applies;
every other rule for the host is silently ignored for those proxies. The
diagnostic names the winner, the lookup step and the proxy namespaces
affected.`,
	}
	DestinationRuleMergeConflict = &Entry{
		Code: "MC4002", Name: "DestinationRuleMergeConflict", Severity: Warning,
		Summary: "DestinationRules merged for one host drop a later trafficPolicy or a duplicate subset.",
		Doc: `istiod merges DestinationRules for the same host in the same namespace (with
compatible exportTo and selectors) into one rule: subsets are unioned and
the oldest rule's trafficPolicy is kept whole. A later rule's trafficPolicy
is dropped entirely (no field-level merge), and a subset whose name is
already defined is dropped.`,
	}
	UnknownSubset = &Entry{
		Code: "MC4003", Name: "UnknownSubset", Severity: Error, Istio: []string{"IST0101"},
		Summary: "A route targets a subset missing from the DestinationRule chosen for a proxy that uses the route.",
		Doc: `The subset a route sends to must exist in the DestinationRule that the
calling proxy actually uses, which depends on the proxy's namespace and
labels: a rule in the client's namespace shadows the one next to the
service, and a workload-selector rule replaces the plain one. When the
subset is missing, the route points at a cluster Envoy does not have and
requests fail with 503 (no healthy upstream). The diagnostic names the rule
that was chosen, the one that defines the subset if any, and the proxies.
A VirtualService without hosts (a delegate) that no other one names is
judged from its own namespace, as istioctl judges it.`,
	}
	VirtualServiceHostConflict = &Entry{
		Code: "MC5001", Name: "VirtualServiceHostConflict", Severity: Warning, Istio: []string{"IST0109"},
		Summary: "Several VirtualServices claim one host for the same proxies; only one is used.",
		Doc: `Sidecars never merge VirtualServices: for each host the first one in
istiod's order is used (exported privately to the proxy's namespace, then
exported to it by name, then public; oldest first within each group) and
the routes of the others are silently absent. Merge them into one, or
narrow their exportTo.`,
	}
	DestinationHostNotFound = &Entry{
		Code: "MC5002", Name: "DestinationHostNotFound", Severity: Error, Istio: []string{"IST0101"},
		Summary: "A route destination is not a service visible to the proxies the VirtualService applies to.",
		Doc: `A destination host must name a service (Kubernetes Service or
ServiceEntry) that the proxies using the route can see, after short-name
expansion in the VirtualService's namespace and exportTo. Otherwise Envoy
has no cluster for it and the route answers 503. A host like
"reviews.default" is not expanded (it has a dot) and matches nothing. A
destination exportTo hides from a namespace counts there only when its
proxies can reach a host of the VirtualService; a delegate no VirtualService
names is judged from its own namespace.`,
	}
	MultipleDefaultSidecars = &Entry{
		Code: "MC6001", Name: "MultipleDefaultSidecars", Severity: Error, Istio: []string{"IST0111"},
		Summary: "More than one Sidecar without a workloadSelector in a namespace.",
		Doc: `A namespace may have one Sidecar without a workloadSelector (its default).
With several, only the oldest takes effect, and which one that is depends
on creation time, which a change to the manifests can flip.`,
	}
	ConflictingSidecarSelectors = &Entry{
		Code: "MC6002", Name: "ConflictingSidecarSelectors", Severity: Error, Istio: []string{"IST0110"},
		Summary: "Several Sidecars select the same workload.",
		Doc: `When more than one Sidecar's workloadSelector matches a workload, only the
oldest applies. meshc checks workload templates (Deployments and the
rest), not only Pods, so the conflict is found before anything runs.`,
	}
	NoInjectedWorkloads = &Entry{
		Code: "MC6006", Name: "NoInjectedWorkloads", Severity: Info,
		Summary: "The input has workloads but none gets a sidecar, so no proxy is built and checks speak for namespaces, not workloads.",
		Doc: `Most checks reason about the proxies that would run: injected Pods and
workload templates. Without them, checks still judge each namespace through
a stand-in, a proxy without labels named NS/*, but selector-specific
findings and builds need the real workloads. Injection is usually switched on in the cluster
(kubectl label namespace ... istio-injection=enabled), so the label is often
not in git, and a revision install (istio.io/rev=1-24) injects only when
that revision is installed. When the input has Pods or workload templates
and none is injected, this finding names the namespaces with workloads and
what would inject them: the namespace label, --inject-namespace NS, or
--revision REV for a revision the namespaces name. The same options can be
kept in .meshc.yaml.`,
	}
	ProxyConfigTooLarge = &Entry{
		Code: "MC8001", Name: "ProxyConfigTooLarge", Severity: Warning,
		Summary: "The Envoy configurations of a scope's proxies exceed the size budget; one diagnostic per scope.",
		Doc: `istiod pushes a proxy's whole configuration over one gRPC stream; past
its message limit (4 MiB by default) the push fails, and long before that
a large config costs every proxy memory and CPU. The size is measured as
xDS sends it (protobuf). A proxy without a Sidecar imports every service
the mesh exports to it; a Sidecar with egress hosts limited to what the
workload calls trims it. Set the budget with meshc build --max-proxy-bytes.
Proxies of one scope (the same Sidecar, or the same namespace without one)
share their outbound configuration and are over the budget together, so
one diagnostic per scope names them all, with the largest size; its
subject is the Sidecar, or the first proxy when there is none.`,
	}
	InvalidEnvoyConfig = &Entry{
		Code: "MC8002", Name: "InvalidEnvoyConfig", Severity: Error,
		Summary: "An emitted Envoy resource fails validation or a cross-reference check.",
		Doc: `Every resource meshc emits is checked with Envoy's own generated validation
rules, including the extension configs packed inside (HTTP connection
managers, TLS contexts, tcp_proxy), and with the checks those rules cannot
make: no two resources of a type share a name, no two listeners bind one
address, an original-destination cluster uses the CLUSTER_PROVIDED load
balancer, and every cluster a route, a tcp_proxy or a mirror names is
emitted. Istio would send such a config and Envoy would reject it, or
answer 503 on the route. The message names the proxy and the resource.`,
	}
	UntranslatedPolicy = &Entry{
		Code: "MC8003", Name: "UntranslatedPolicy", Severity: Warning,
		Summary: "A policy applies to built proxies, but meshc does not build what istiod makes of it.",
		Doc: `istiod also turns AuthorizationPolicies into RBAC filters,
RequestAuthentications into JWT filters, EnvoyFilters into patches,
WasmPlugins into Wasm filters and Telemetry into access log, metric and
tracing settings. meshc builds none of these yet, so the configs it writes
for the proxies such a policy selects lack it: an AuthorizationPolicy, for
one, is not enforced. The diagnostic names the policy and the proxies built
without it. Policies attached with targetRef(s) are counted for every proxy
of their namespace.`,
	}
)

// The messages of the loader's, the hierarchy's and suppression's entries.
var (
	ParserFailure = InvalidYAML.Template("the document could not be parsed (parser failure: %v)",
		T("failure"))
	YAMLSyntaxError = InvalidYAML.Template("%s",
		T("problem"))
	MeshConfigUnparsable = InvalidYAML.Template("mesh config: %s; istiod's defaults apply",
		T("problem"))

	APIVersionMissing = InvalidObject.Template("apiVersion is missing or not a string; the object is left out")
	KindMissing       = InvalidObject.Template("kind is missing or not a string; the object is left out")
	NameMissing       = InvalidObject.Template("metadata.name is missing%s; the object is left out",
		T("hint"))
	NamespaceInvalid = InvalidObject.Template("namespace %q is not a valid namespace name: %s; the object is left out",
		W("namespace"), T("problems"))
	NameInvalid = InvalidObject.Template("name %q is not a valid %s name: %s; the object is left out",
		W("name"), W("kind"), T("problems"))

	MeshConfigFieldIgnored = SchemaViolation.Template("mesh config: %s; istiod ignores it",
		T("problem"))
	MeshConfigRejected = SchemaViolation.Template("mesh config: %s; istiod rejects the mesh config, so its defaults apply",
		T("problem"))

	DefinedTwice = DuplicateObject.Template("%s is defined twice; the first definition (%s) is kept and this one is left out",
		W("object"), W("first"))

	KindNotModelled = UnknownKind.Template("meshc does not model %s %s (%s); such objects count only for their namespace and for HNC propagation",
		W("apiVersion"), W("kind").ID(), T("count")).WithoutSubject()
	KindNotBuilt = UnknownKind.Template("meshc does not model %s %s (%s): %s",
		W("apiVersion"), W("kind").ID(), T("count"), T("meaning")).WithoutSubject()

	SuppressionExpired = ExpiredSuppression.Template("the suppression of %s expired on %s (%s); its findings are reported again",
		W("suppression").ID(), W("expires"), T("reason"))

	HNCResourceNotNamespaced = SchemaViolation.Template("resource %q is not namespaced; the entry is ignored (HNC: BadConfiguration/ResourceNotNamespaced)",
		W("resource"))
	HNCResourceUnknown = SchemaViolation.Template("HNCConfiguration resource %q (group %q) is not a namespaced type meshc knows; the entry is ignored (HNC: BadConfiguration/ResourceNotFound). A CustomResourceDefinition in the input registers its type.",
		W("resource"), W("group"))
	HNCResourceAmbiguous = SchemaViolation.Template("HNCConfiguration resource %q matches types in several groups; set its group (HNC: BadConfiguration/ResourceNotFound)",
		W("resource"))
	HNCModeEnforced = SchemaViolation.Template("The sync mode for %q is enforced by HNC as \"Propagate\" and cannot be overridden (HNC: BadConfiguration/MultipleConfigurationsForType)",
		W("resource"))
	HNCModeRepeated = SchemaViolation.Template("Multiple sync mode settings found for %q; all but one (%q) will be ignored (HNC: BadConfiguration/MultipleConfigurationsForType)",
		W("resource"), W("mode"))
	DiscoverySelectorInvalid = SchemaViolation.Template("mesh config discoverySelectors: %v; the selector is ignored",
		T("problem").ID())

	HierarchyCycleFound = HierarchyCycle.Template("namespaces %s form a parent cycle (%s); HNC halts them and everything below",
		T("members"), T("cycle"))

	ParentIgnored = ParentMissing.Template("namespace %s is managed by %s, so HNC ignores its parent %q",
		W("namespace"), W("manager"), W("parent").ID())
	ParentUnmanaged = ParentMissing.Template("the parent of %[1]s, %[2]s, is a namespace HNC does not manage; propagation into %[1]s and below is halted",
		W("namespace"), W("parent").ID())
	ParentAbsent = ParentMissing.Template("the parent of %[1]s, %[2]s, does not exist; propagation into %[1]s and below is halted",
		W("namespace"), W("parent").ID())
	ParentOverridesProject = ParentMissing.Template("namespace %s belongs to TKE project %s but HNC gives it the parent %s; the parent wins",
		W("namespace"), W("project").ID(), W("parent"))

	CopyOverwrites = PropagationConflict.Template("%[1]s %[2]s/%[3]s is overwritten by HNC with the copy of %[4]s/%[3]s (its parent chain propagates a %[1]s of the same name); this object's content is lost",
		W("kind"), W("namespace"), W("name"), W("source"))

	AnchorForbidden = SubnamespaceAnchorMismatch.Template("anchor %s/%s names namespace %s, which HNC does not manage; the anchor is Forbidden",
		W("namespace"), W("anchor"), W("child"))
	AnchorsCompete = SubnamespaceAnchorMismatch.Template("%d anchors want to create namespace %s; meshc keeps the one in %s (smallest name), a cluster would keep whichever HNC saw first",
		N("count"), W("child").ID(), W("kept")).WithoutSubject()
	AnchorInConflict = SubnamespaceAnchorMismatch.Template("anchor %[1]s/%[2]s is in Conflict: namespace %[3]s exists and is not a subnamespace of %[1]s",
		W("namespace"), W("anchor"), W("child"))
	AnchorMissing = SubnamespaceAnchorMismatch.Template("namespace %[1]s says it is a subnamespace of %[2]s, but %[2]s has no anchor for it (HNC: BadConfiguration/SubnamespaceAnchorMissing)",
		W("namespace"), W("parent"))

	PropagationFrozen = ActivitiesHalted.Template("propagation is frozen in %s and below (%s): %s",
		W("namespace"), W("reason"), T("effects"))
	AncestorHalted = ActivitiesHalted.Template("propagation into %s is paused: its ancestor %s is halted (%s)",
		W("namespace"), W("ancestor"), W("reason"))

	SlotClaimedTwice = InheritedSlotConflict.Template("the %[1]s inherited from %[2]s/%[3]s and the local %[1]s %[4]s both claim the namespace-wide slot of %[5]s; Istio would pick one by age, which the files do not tell",
		W("kind"), W("sourceNamespace"), W("source"), W("local"), W("namespace"))

	MetadataNotManaged = IllegalManagedMetadata.Template("%s is not a managed %s (%s), so HNC drops it from %s",
		W("key").ID(), W("what").ID(), W("flag"), W("namespace"))

	ExceptionUnparsable = InvalidPropagationException.Template("%s cannot be parsed (%v), so HNC propagates %s/%s nowhere (CannotParseSelector)",
		W("annotation").ID(), T("problem"), W("namespace"), W("name"))

	RootNamespaceHasChildren = RootNamespaceInHierarchy.Template("the Istio root namespace %[1]s has HNC children (%[2]s): propagated copies of its mesh-wide objects become per-namespace objects there and change precedence; exclude it with --hnc-excluded-namespace=%[1]s",
		W("root"), T("children"))
)

// The messages of the core analyzers' entries.
var (
	AmbiguousHostChosen = AmbiguousHost.Template("%s is defined in %s and in %s; proxies use the one in %[2]s (%[4]s)",
		W("host").ID(), W("namespace"), T("losers"), W("tieBreak"))

	ShadowedBySelectorRule = ShadowedDestinationRule.Template("%s is never used by proxies in %s: the lookup stops at a rule that applies only to selected workloads",
		W("rule"), T("namespaces"))
	ShadowedBy = ShadowedDestinationRule.Template("%s is shadowed for proxies in %s: %s wins the lookup (%s)",
		W("rule"), T("namespaces"), W("winner").ID(), W("step").ID())

	MergeDropsTrafficPolicy = DestinationRuleMergeConflict.Template("the trafficPolicy of %s is ignored: it is merged with %s for host %s, and only the oldest rule's trafficPolicy is kept, whole",
		W("rule"), W("kept"), W("host"))
	MergeDropsSubset = DestinationRuleMergeConflict.Template("subset %q of %s is ignored: %s, merged with it for host %s, already defines it",
		W("subset").ID(), W("rule"), W("kept"), W("host"))

	SubsetWithoutRule = UnknownSubset.Template("%s routes to subset %q of %s, but no DestinationRule applies to %s, so the subset does not exist there",
		W("route"), W("subset").ID(), W("host").ID(), W("who")).Fielded()
	SubsetNotInRule = UnknownSubset.Template("%s routes to subset %q of %s, but the DestinationRule %s, %s (%s), has no such subset (it has %s)",
		W("route"), W("subset").ID(), W("host").ID(), W("who"), W("rule").ID(), W("step"), T("subsets")).Fielded()

	HostClaimedTwice = VirtualServiceHostConflict.Template("%s and %s both claim %s; sidecars never merge VirtualServices, so the routes of %[1]s for %[4]s are ignored",
		W("loser"), W("winner").ID(), T("hosts"), W("them"))
	HostClaimedByMany = VirtualServiceHostConflict.Template("%d VirtualServices claim %s for the same proxies; sidecars never merge VirtualServices, so only %s is used and the routes of %s are ignored for %s",
		N("count"), T("hosts"), W("winner").ID(), T("losers"), W("them"))

	DestinationUnreachable = DestinationHostNotFound.Template("%s routes to %s, which %s cannot reach: %s",
		W("route"), W("host").ID(), W("who"), T("why")).Fielded()

	SecondDefaultSidecar = MultipleDefaultSidecars.Template("namespace %s has more than one Sidecar without a workloadSelector; only the oldest, %s, takes effect and %s is ignored",
		W("namespace"), W("kept"), W("ignored"))

	NoWorkloadInjected = NoInjectedWorkloads.Template("no workload in the input gets a sidecar, so no sidecar proxy is built, and checks speak for each namespace as a workload without labels would see it (NS/*): %s; %s",
		T("namespaces"), T("fixes")).WithoutSubject()

	ConfigOverBudget = ProxyConfigTooLarge.Template("the Envoy configs of %s of %s are up to %d bytes on the wire (%d clusters, %d listeners), over the budget of %d; %s",
		T("proxies"), W("scope").ID(), N("bytes"), N("clusters"), N("listeners"), N("budget"), T("hint")).WithoutSubject()
	ConfigInvalid = InvalidEnvoyConfig.Template("the Envoy config of proxy %s is invalid: %s",
		W("proxy"), T("problem").ID())
	PolicyNotBuilt = UntranslatedPolicy.Template("%s %s/%s applies to %d of the proxies built, but meshc does not build %s",
		W("kind"), W("namespace"), W("name"), N("proxies"), T("omits"))

	SidecarsSelectSameWorkloads = ConflictingSidecarSelectors.Template("Sidecars %s and %s both select %s; only the oldest, %s, applies",
		W("winner").ID(), W("loser"), T("workloads"), W("winnerName"))
)

// core lists the entries of this file. Each catalog_*.go file adds its
// family's entries in a slice of its own, so families grow without
// touching one another.
var core = []*Entry{
	InvalidYAML,
	InvalidObject,
	SchemaViolation,
	DuplicateObject,
	UnknownKind,
	UnreadableInput,
	ExpiredSuppression,
	UnknownField,
	LinkNotFollowed,
	RenderFailed,
	RenderedNothing,
	HierarchyCycle,
	ParentMissing,
	PropagationConflict,
	SubnamespaceAnchorMismatch,
	ActivitiesHalted,
	InheritedSlotConflict,
	IllegalManagedMetadata,
	InvalidPropagationException,
	RootNamespaceInHierarchy,
	AmbiguousHost,
	ShadowedDestinationRule,
	DestinationRuleMergeConflict,
	UnknownSubset,
	VirtualServiceHostConflict,
	DestinationHostNotFound,
	MultipleDefaultSidecars,
	ConflictingSidecarSelectors,
	NoInjectedWorkloads,
	ProxyConfigTooLarge,
	InvalidEnvoyConfig,
	UntranslatedPolicy,
}

// catalog lists every entry in code order. It is built once and never
// changed.
var catalog = func() []*Entry {
	out := slices.Concat(core, registryEntries, destinationRuleEntries, routeEntries, gatewayEntries, policyEntries, validationEntries)
	slices.SortFunc(out, func(a, b *Entry) int { return strings.Compare(a.Code, b.Code) })
	return out
}()

// Catalog returns every entry, sorted by code.
func Catalog() []*Entry { return slices.Clone(catalog) }

// Lookup finds an entry by code ("MC1001") or name ("InvalidYAML").
func Lookup(codeOrName string) (*Entry, bool) {
	for _, e := range catalog {
		if strings.EqualFold(e.Code, codeOrName) || strings.EqualFold(e.Name, codeOrName) {
			return e, true
		}
	}
	return nil, false
}

// ByIstioCode finds the entries reporting what an istioctl analyze code
// ("IST0101") reports.
func ByIstioCode(code string) []*Entry {
	var out []*Entry
	for _, e := range catalog {
		if slices.ContainsFunc(e.Istio, func(c string) bool { return strings.EqualFold(c, code) }) {
			out = append(out, e)
		}
	}
	return out
}

// WriteMarkdown writes the catalog as docs/diagnostics.md.
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# meshc diagnostics\n\n")
	b.WriteString("<!-- Generated from internal/diag/catalog.go by `go test ./internal/diag -update`. Do not edit. -->\n\n")
	b.WriteString("Codes are stable. The severity is the default; `meshc lint --fail-on` sets which severity fails a run.\n\n")
	b.WriteString(withoutWorkloads)
	b.WriteString(findingKeys)
	b.WriteString("| code | name | severity | istioctl analyze | summary |\n| --- | --- | --- | --- | --- |\n")
	for _, e := range catalog {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s |\n", e.Code, e.Anchor(), e.Name, e.Severity, strings.Join(e.Istio, ", "), e.Summary)
	}
	for _, e := range catalog {
		fmt.Fprintf(&b, "\n## %s\n\n**%s** (%s): %s\n\n%s\n", e.Code, e.Name, e.Severity, e.Summary, unwrap(e.Doc))
		if len(e.Istio) > 0 {
			fmt.Fprintf(&b, "\nistioctl analyze reports the same as %s; `--suppress` and `galley.istio.io/analyze-suppress` accept the Istio code as well.\n",
				strings.Join(e.Istio, ", "))
		}
		writeMessages(&b, e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMessages lists e's message templates and what keys their findings.
func writeMessages(b *strings.Builder, e *Entry) {
	if len(e.Messages) == 0 {
		return
	}
	b.WriteString("\nMessages:\n\n")
	for _, m := range e.Messages {
		var keyed []string
		if m.NoSubject {
			keyed = append(keyed, "not the object")
		}
		if args := m.KeyArgs(); len(args) > 0 {
			keyed = append(keyed, strings.Join(args, ", "))
		}
		if m.ByField {
			keyed = append(keyed, "the field")
		}
		if len(keyed) == 0 {
			// The subject, and the field or document where it is.
			fmt.Fprintf(b, "- `%s`\n", m.Pattern())
			continue
		}
		fmt.Fprintf(b, "- `%s` (key: %s)\n", m.Pattern(), strings.Join(keyed, "; "))
	}
}

// findingKeys describes keys; the README says the same in short.
const findingKeys = `## Finding keys

Every finding carries a key that names it across runs, so that a later run
can tell a new finding from a known one (` + "`meshc lint --baseline`" + `). In JSON it
is the ` + "`key`" + ` field, in SARIF the result's ` + "`partialFingerprints`" + `
entry ` + "`meshcKey/v1`" + `. A key is the code, the subject and a discriminator,
joined by "/":

` + "```" + `
MC4003/VirtualService/default/reviews/subset=v4/host=reviews.default.svc.cluster.local/rule=default/reviews/field=spec.http[0].route[0].destination.subset
MC6001/Sidecar/web/b                           the subject alone: one such finding per object
MC9006/Namespace/shop/field=metadata.labels   a cluster-scoped subject (Kind/name) and a field
MC1005/kind=Widget                             about a kind, not the object it is shown at
MC1001/file=manifests/broken.yaml/doc=2        a finding about a file: its path and document number
MC1003/VirtualService/shop/reviews/field=spec.http[0].timeout/problem=3f9a0c12
` + "```" + `

The subject is ` + "`Kind/namespace/name`" + ` of the object the finding is
about. The discriminator holds the message's identifying arguments
(listed under each code below as "key"), as name=value; free text enters
as a short digest. When those do not tell a subject's findings apart
("the field" below), or the message has none, an analyzer's finding adds
the field it points at as ` + "`field=`" + `, a path in the object (list
positions included); the loader's findings add the field and a digest of
the schema problem. A key never
holds a line number or, for a finding about an object, a file name: moving
an object to another file, reordering documents or reformatting YAML keeps
its findings' keys. What changes a key is what changes the finding: its
object's identity, an identifying argument, or the position of its field
in a list (a route moved before another).

Limits: a finding about a document with no object to name (a YAML syntax
error, an object without a name) is keyed by the file's path below the
directory that holds every input (so ` + "`meshc lint manifests`" + ` and
` + "`meshc lint .`" + ` run in manifests agree), the document's number in
the file and, in a List, the item's position: moving the document, or
adding an input elsewhere, changes it. Keys are unique
within one run; the same finding in two runs has the same key as long as
the same meshc version reports it.

`

// withoutWorkloads is the rule analyzers follow when the input does not
// show every proxy or service; the README says the same.
const withoutWorkloads = `## Findings without workloads in the input

Configuration repositories often hold Istio objects without the workloads,
or workloads without the injection label that the cluster sets. meshc judges
such input as the proxies that would run would see it:

- **Stand-ins.** Every namespace with no sidecar proxy in the input, that
  holds an object of the input (or is labelled for injection), is not the
  root namespace and is not skipped by the injector (system namespaces,
  istio-injection=disabled, outside discoverySelectors), gets one stand-in
  proxy: no labels, the namespace's default Sidecar (or the root's). Findings
  it raises list it as NS/* ("any proxy of NS"). Namespaces with real proxies
  are judged by them, and findings name them.
- **Missing services.** A Kubernetes host NAME.NS.svc.cluster.local that no
  service defines is reported only when the input holds Services or
  ServiceEntries of NS, or declares Namespaces and NS is not among them: a
  repository that keeps NS's Services elsewhere is not told they are
  missing. Until then, checks that need the service (a route's subset) look
  the host up by name, as istiod will once the service exists. Hosts of
  other forms need a ServiceEntry, which the configuration must carry.
- **Selectors.** A workload selector is judged only against workloads of
  the input; with none in the namespaces it can match, it is not reported
  as matching nothing.

`

// unwrap joins the hard-wrapped lines of a Doc into one paragraph per line
// break that ends a sentence block, keeping Markdown diffs readable.
func unwrap(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
