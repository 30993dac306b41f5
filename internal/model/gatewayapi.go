package model

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GroupGatewayAPI is the Kubernetes Gateway API's group.
const GroupGatewayAPI = "gateway.networking.k8s.io"

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
)
