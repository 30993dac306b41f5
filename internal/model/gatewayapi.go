package model

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// GroupGatewayAPI is the Kubernetes Gateway API's group; GroupGatewayAPIX
// is the group of its experimental kinds (XBackendTrafficPolicy).
const (
	GroupGatewayAPI  = "gateway.networking.k8s.io"
	GroupGatewayAPIX = "gateway.networking.x-k8s.io"
)

// GatewayAPIObject is an object of a Gateway API kind: its metadata and
// its spec as the sigs.k8s.io/gateway-api type of the kind's storage
// version (v1). Every served version of a kind shares that spec type, as
// the API server converts between them field for field.
type GatewayAPIObject[S any] struct {
	ObjectMeta
	Spec S
}

// The Gateway API kinds meshc decodes. KubeGateway is named apart from
// Istio's Gateway (networking.istio.io), which istiod makes of it.
type (
	GatewayClass     = GatewayAPIObject[gwv1.GatewayClassSpec]
	KubeGateway      = GatewayAPIObject[gwv1.GatewaySpec]
	ListenerSet      = GatewayAPIObject[gwv1.ListenerSetSpec]
	HTTPRoute        = GatewayAPIObject[gwv1.HTTPRouteSpec]
	GRPCRoute        = GatewayAPIObject[gwv1.GRPCRouteSpec]
	TCPRoute         = GatewayAPIObject[gwv1.TCPRouteSpec]
	TLSRoute         = GatewayAPIObject[gwv1.TLSRouteSpec]
	ReferenceGrant   = GatewayAPIObject[gwv1.ReferenceGrantSpec]
	BackendTLSPolicy = GatewayAPIObject[gwv1.BackendTLSPolicySpec]
	// XBackendTrafficPolicy is of the experimental group GroupGatewayAPIX.
	XBackendTrafficPolicy = GatewayAPIObject[gwxv1a1.BackendTrafficPolicySpec]
)

// Annotations istiod puts on what it generates from Gateway API objects
// (docs/semantics/gateway-api.md §G2).
const (
	// AnnotationGatewayService, on a generated Istio Gateway, names the
	// Services (hostnames, comma separated) whose workloads serve it:
	// istiod binds such a Gateway to those Services' instances in the
	// Gateway's namespace, not by a label selector.
	AnnotationGatewayService = "internal.istio.io/gateway-service"
	// AnnotationParentNamespace, on an Istio Gateway generated from a
	// ListenerSet's listener, is the namespace of the Gateway it joins:
	// the Services named by AnnotationGatewayService are looked for
	// there rather than in the ListenerSet's namespace.
	AnnotationParentNamespace = "internal.istio.io/parent-namespace"
	// AnnotationRouteSemantics is RouteSemanticsGateway on a
	// VirtualService generated from a route, which istiod then builds
	// with the Gateway API's semantics.
	AnnotationRouteSemantics = "internal.istio.io/route-semantics"
	RouteSemanticsGateway    = "gateway"
	// AnnotationParents names the Gateway API objects a generated object
	// came from ("Kind/name.namespace", comma separated). istiod reads it
	// to let a TLSRoute's VirtualService serve a terminating server; on a
	// DestinationRule it marks one generated from backend policies, whose
	// fields yield to a written rule's for the same host.
	AnnotationParents = "internal.istio.io/parents"
)
