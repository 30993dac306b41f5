package diag

// policyEntries: MC9xxx: policies (security, telemetry, EnvoyFilter) and Istio metadata (annotations, labels).
var policyEntries = []*Entry{
	UnknownAnnotation,
	MisplacedAnnotation,
	InvalidAnnotationValue,
	DeprecatedSetting,
	AlphaAnnotation,
	ConflictingInjectionLabels,
	ConflictingTelemetrySelectors,
	MultipleDefaultTelemetries,
	RiskyEnvoyFilterPatch,
	UnknownSourceNamespace,
	ApplicationRunsAsProxyUID,
}

var (
	UnknownAnnotation = &Entry{
		Code: "MC9001", Name: "UnknownAnnotation", Severity: Info, Istio: []string{"IST0108"},
		Summary: "An annotation in an Istio domain (*.istio.io) that Istio does not define.",
		Doc: `An annotation whose key is in an Istio domain (istio.io or a subdomain of
it) is not one Istio defines, so nothing reads it: most often a typo
(sidecar.istio.io/injet) or a label written as an annotation
(istio.io/use-waypoint), which the message then says. The annotation
catalog is the one of the istio.io/api release meshc is built with. Every
object's annotations are checked, a workload template's pod template's
too; HNC copies are not, their source is. Annotations the control plane
writes itself (sidecar.istio.io/status, istio.io/rev) are left alone.`,
	}
	MisplacedAnnotation = &Entry{
		Code: "MC9002", Name: "MisplacedAnnotation", Severity: Warning, Istio: []string{"IST0107"},
		Summary: "A known Istio annotation on a kind it does not apply to, where nothing reads it.",
		Doc: `Istio reads each of its annotations on some kinds only: a Pod annotation
(sidecar.istio.io/..., proxy.istio.io/config, traffic.sidecar.istio.io/...)
on a Deployment's own metadata, rather than on its pod template, never
reaches the pods, so the injector never sees it; a Service annotation on a
VirtualService does nothing either. The message says where the annotation
belongs. Move it there: for a workload, under spec.template.metadata.annotations.`,
	}
	InvalidAnnotationValue = &Entry{
		Code: "MC9003", Name: "InvalidAnnotationValue", Severity: Warning, Istio: []string{"IST0125"},
		Summary: "An Istio annotation's value is not one Istio accepts (a port list with a non-number, an unknown interception mode, ...).",
		Doc: `The sidecar injector validates some Pod annotations and fails the
injection on a value it cannot parse; with the webhook's default
failurePolicy (Fail) the pod is then not created at all. Port lists
(traffic.sidecar.istio.io/includeInboundPorts and the like) must be
comma-separated port numbers, IP range lists CIDRs,
sidecar.istio.io/interceptionMode one of REDIRECT, TPROXY and NONE, the
proxy's CPU and memory Kubernetes quantities, readiness settings unsigned
numbers, prometheus.istio.io/merge-metrics a boolean.
sidecar.istio.io/inject, the label as the annotation, accepts only "true"
and "false": any other value (enabled, yes) is ignored and the namespace's
default applies. Fix the value; as written, the pod is not injected as
intended. Values are checked where Istio reads the annotation; elsewhere
it is MC9002's.`,
	}
	DeprecatedSetting = &Entry{
		Code: "MC9004", Name: "DeprecatedSetting", Severity: Warning, Istio: []string{"IST0002", "IST0135"},
		Summary: "A deprecated Istio field, annotation or resource type is used.",
		Doc: `A field or enum value Istio's API marks deprecated is set in an Istio
object (a VirtualService fault delay's percent or mirrorPercent, a CORS
allowOrigin, a DestinationRule's LEAST_CONN, consecutiveErrors or
minimumRingSize; the message names the replacement); a Sidecar sets
outboundTrafficPolicy.egressProxy, no longer documented, which istiod
still honours in ALLOW_ANY mode only; a CustomResourceDefinition or an
object of a removed Istio type (rbac.istio.io); or an annotation
istio.io/api marks deprecated (the sidecar.istio.io/inject annotation,
replaced by the label of the same name; stats annotations replaced by
Telemetry). Deprecated fields and types are warnings, as istioctl reports
them; deprecated annotations are reported at info level, as istioctl does,
and not when the replacing label is set next to the annotation. Move to
the replacement before an upgrade removes the setting.`,
	}
	AlphaAnnotation = &Entry{
		Code: "MC9005", Name: "AlphaAnnotation", Severity: Info, Istio: []string{"IST0136"},
		Summary: "An Istio annotation of an alpha-phase feature is used.",
		Doc: `istio.io/api marks the annotation's feature Alpha: it may change or go
away between releases and may be incompletely supported. Annotations the
control plane writes itself (sidecar.istio.io/status, istio.io/rev,
gateway.istio.io/controller-version) are not reported, nor
inject.istio.io/templates, which Istio's own gateway install writes, nor
galley.istio.io/analyze-suppress, which suppresses findings, nor, on pods
without the istio-init container (the injector's defaults with the CNI
plugin, and every manifest written before injection), the interception
settings the injector sets by default. An annotation on a kind that does
not read it is MC9002's, not this code's.`,
	}
	ConflictingInjectionLabels = &Entry{
		Code: "MC9006", Name: "ConflictingInjectionLabels", Severity: Warning, Istio: []string{"IST0123"},
		Summary: "A namespace carries more than one kind of injection label (istio-injection, istio.io/rev, istio.io/dataplane-mode).",
		Doc: `A namespace labelled istio-injection=enabled and istio.io/rev=REV is
matched by the default revision's webhook and by REV's, which makes which
sidecar, if any, a pod gets depend on webhook configuration details; a
sidecar injection label next to istio.io/dataplane-mode (ambient) mixes
two data planes. Keep one: istio.io/rev alone selects a revision. As
istioctl, istio-system is not checked, and istio-injection=disabled is a
deliberate opt-out that does not conflict.`,
	}
	ConflictingTelemetrySelectors = &Entry{
		Code: "MC9007", Name: "ConflictingTelemetrySelectors", Severity: Error, Istio: []string{"IST0159"},
		Summary: "Several Telemetry objects with workload selectors select the same workload.",
		Doc: `istiod applies one workload-selecting Telemetry per workload; when several
select it, which one applies is undefined, so its metrics, access logs or
tracing are not what either object says. The workloads are the input's
Pods and workload templates, matched in the Telemetry's namespace; a
Telemetry with a targetRef attaches by reference, not by selector, and is
not counted. Merge
the Telemetries, or narrow their selectors so that each workload is
selected once.`,
	}
	MultipleDefaultTelemetries = &Entry{
		Code: "MC9008", Name: "MultipleDefaultTelemetries", Severity: Error, Istio: []string{"IST0160"},
		Summary: "A namespace has several Telemetry objects without selector or targetRef.",
		Doc: `A Telemetry without selector and targetRef is its namespace's default (the
root namespace's, the mesh's). A namespace has one: with several, istiod
uses one of them and which is undefined. Merge them into one.`,
	}
	RiskyEnvoyFilterPatch = &Entry{
		Code: "MC9009", Name: "RiskyEnvoyFilterPatch", Severity: Warning,
		Istio:   []string{"IST0151", "IST0152", "IST0153", "IST0154", "IST0155"},
		Summary: "An EnvoyFilter patch that istiod ignores, or whose effect depends on the order of other EnvoyFilters.",
		Doc: `istiod acts on some operations only for each applyTo and skips the others
without a word: a route configuration is only merged, a cluster, listener
or filter chain is added, removed or merged but never replaced or inserted
relative to another, and REPLACE works on filters and virtual hosts only.
Such a patch is reported with the operations that do work there. This
follows istiod's patching code, which is newer than istioctl's rule:
ADD and REMOVE on HTTP_ROUTE and REPLACE on LISTENER_FILTER, which
istioctl flags, are applied and not reported.
EnvoyFilters are applied in order of priority, then age. A relative
operation (INSERT_BEFORE, INSERT_AFTER, REPLACE, REMOVE) in an EnvoyFilter
without priority acts on an element other EnvoyFilters may add, move or
remove, so whether it applies depends on their order; the more so when
patches of the same filter match on proxy version, which differ across an
upgrade. Set spec.priority, or use INSERT_FIRST or ADD. One code covers
istioctl's five EnvoyFilter checks, since all are one mistake: a patch
that may not do what it says.`,
	}
	UnknownSourceNamespace = &Entry{
		Code: "MC9010", Name: "UnknownSourceNamespace", Severity: Warning, Istio: []string{"IST0101"},
		Summary: "An AuthorizationPolicy rule names a source namespace that does not exist in the input.",
		Doc: `A rule's from.source.namespaces or notNamespaces names a namespace no
Namespace object, anchor or object of the input creates: a typo makes an
ALLOW rule match nothing, or a DENY rule protect nothing. Only inputs that
declare namespaces (hold at least one Namespace object) are judged. A
pattern with a leading or trailing * (prod-*, *-test) is reported when no
namespace of the input matches it; * alone matches every namespace. The
namespaces every cluster has (default, kube-system, ...) and the mesh's
root namespace count as existing.`,
	}
)

var ApplicationRunsAsProxyUID = &Entry{
	Code: "MC9011", Name: "ApplicationRunsAsProxyUID", Severity: Warning, Istio: []string{"IST0144"},
	Summary: "An application container of a workload with a sidecar runs as user 1337, the proxy's, so its outbound traffic bypasses the sidecar.",
	Doc: `The sidecar's traffic redirection lets the connections of user 1337, the
user istio-proxy runs as, leave the pod uncaptured, so that the proxy's own
connections do not loop back into it. An application container that runs
as that user (its securityContext.runAsUser, else the pod's) has every
outbound connection bypass the proxy: no mutual TLS, no routing rules, no
telemetry for it. Run the application as another user. Checked for
workloads that get a sidecar, and, in a namespace whose proxies the input
does not show and that it does not declare (its injection label may be set
in the cluster), for every workload that does not opt out of injection; the istio-proxy container itself, and
gateways, whose proxy is the main container, are not reported.`,
}

// The messages of the policy and metadata entries.
var (
	AnnotationUnknown = UnknownAnnotation.Template("annotation %s on %s is not one Istio defines, so nothing reads it%s",
		W("annotation").ID(), W("site"), T("hint")).Fielded()

	AnnotationOnWorkload = MisplacedAnnotation.Template("annotation %s on %s has no effect: Istio reads it on Pods only, and a workload's own metadata never reaches its pods; move it to spec.template.metadata.annotations",
		W("annotation").ID(), W("site")).Fielded()
	AnnotationOnOtherKind = MisplacedAnnotation.Template("annotation %s on %s has no effect: Istio reads it only on %s",
		W("annotation").ID(), W("site"), T("kinds")).Fielded()

	AnnotationValueInvalid = InvalidAnnotationValue.Template("annotation %s=%q on %s is not valid: %s",
		W("annotation").ID(), W("value"), W("site"), T("problem")).Fielded()
	InjectLabelInvalid = InvalidAnnotationValue.Template("label %s=%q on %s %s is not valid: %s",
		W("label").ID(), W("value"), W("kind"), W("object"), T("problem")).Fielded()

	DeprecatedField = DeprecatedSetting.Template("%s %s uses %s, which Istio's API marks deprecated; %s",
		W("kind"), W("object"), W("what"), T("replacement"))
	DeprecatedEgressProxy = DeprecatedSetting.Template("Sidecar %s sets outboundTrafficPolicy.egressProxy, a field Istio no longer documents and istioctl reports as deprecated (%s): route external traffic through an egress gateway with ServiceEntries and VirtualServices instead",
		W("sidecar"), T("effect"))
	RemovedKindDefined = DeprecatedSetting.Template("CustomResourceDefinition %s defines %s.rbac.istio.io, a type Istio has removed: use AuthorizationPolicy (security.istio.io)",
		W("definition"), W("kind"))
	RemovedKindUsed = DeprecatedSetting.Template("%s %s is of a type Istio has removed, so nothing applies it: rewrite it as an AuthorizationPolicy (security.istio.io)",
		W("kind"), W("object"))
	DeprecatedAnnotation = DeprecatedSetting.Template("annotation %s on %s is deprecated and may stop working in a later Istio release%s",
		W("annotation").ID(), W("site"), T("instead")).Fielded()

	AlphaFeatureAnnotation = AlphaAnnotation.Template("annotation %s on %s belongs to an alpha-phase Istio feature: it may change between releases and may be incompletely supported",
		W("annotation").ID(), W("site")).Fielded()

	SeveralInjectionLabels = ConflictingInjectionLabels.Template("namespace %s has several injection labels (%s): %s",
		W("namespace"), T("labels"), T("why"))

	TelemetriesSelectSame = ConflictingTelemetrySelectors.Template("Telemetries %s in namespace %s all select %s; istiod applies one of them and which is undefined: merge them or narrow their selectors",
		T("telemetries").ID(), W("namespace"), T("workloads"))

	SeveralDefaultTelemetries = MultipleDefaultTelemetries.Template("Telemetries %s have neither selector nor targetRef, so each claims to be the default of %s; istiod uses one of them and which is undefined: merge them into one",
		T("telemetries"), T("scope"))

	PatchOperationIgnored = RiskyEnvoyFilterPatch.Template("EnvoyFilter %s, configPatches[%d]: istiod ignores %s on %s; it applies only %s there",
		W("filter"), N("patch"), W("operation"), W("applyTo"), T("operations"))
	PatchRelativeToVersioned = RiskyEnvoyFilterPatch.Template("EnvoyFilter %s, configPatches[%d]: %s is relative to %s and the EnvoyFilter has no priority; patches matching a proxy version make that element differ between proxy versions, so during an upgrade the patch may find nothing to act on: set spec.priority or use INSERT_FIRST or ADD",
		W("filter"), N("patch"), W("operation"), T("element"))
	PatchRelativeUnordered = RiskyEnvoyFilterPatch.Template("EnvoyFilter %s, configPatches[%d]: %s is relative to an element other EnvoyFilters may add, move or remove, and the EnvoyFilter has no priority, so whether it applies depends on their order; set spec.priority or use INSERT_FIRST or ADD",
		W("filter"), N("patch"), W("operation"))

	SourceNamespaceUnknown = UnknownSourceNamespace.Template("%s names source namespace %q in %s, but the input has no such namespace, so %s",
		W("policy"), W("namespace").ID(), W("field"), T("effect"))
	RunsAsProxyUID = ApplicationRunsAsProxyUID.Template("%s %s: container %s runs as user %d, the sidecar proxy's, so its outbound connections bypass the proxy (no mutual TLS, routing or telemetry): run it as another user",
		W("kind"), W("workload"), W("container").ID(), N("uid"))
	SourceNamespacePatternUnmatched = UnknownSourceNamespace.Template("%s names source namespaces %q in %s, but no namespace of the input matches the pattern, so %s",
		W("policy"), W("pattern").ID(), W("field"), T("effect"))
)
