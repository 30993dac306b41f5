// Package gatewayapi is the compile stage that turns Kubernetes Gateway API
// objects into what istiod makes of them (docs/semantics/gateway-api.md):
// an Istio Gateway per listener of a Gateway whose class istiod compiles,
// VirtualServices from HTTPRoutes, GRPCRoutes, TCPRoutes and TLSRoutes,
// the Deployment and Service istiod's deployment controller would create,
// and the status conditions istiod would write, as diagnostics. The
// generated objects carry a model.Derivation naming the Gateway API
// object and rule they came from.
package gatewayapi

import (
	"context"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// Options are the mesh settings the conversion reads.
type Options struct {
	// DomainSuffix is the cluster's DNS domain (cluster.local).
	DomainSuffix string
	// Namespaces are the namespaces of the cluster with their labels,
	// which allowedRoutes namespace selectors are matched against.
	Namespaces map[string]map[string]string
	// AlphaGatewayAPI is istiod's PILOT_ENABLE_ALPHA_GATEWAY_API (off by
	// default): only then does istiod read XBackendTrafficPolicies.
	AlphaGatewayAPI bool
}

// Result is the stage's value.
type Result struct {
	// Objects are the input objects followed by the generated ones.
	Objects []model.Object
	// Generated are the objects the conversion made, in the order they
	// were made.
	Generated []model.Object
	// Gateways are the Gateway API Gateways istiod compiles, with their
	// listeners, the routes attached to each and the conditions istiod
	// would set; sorted by namespace and name.
	Gateways []*Gateway
	// Policies are the backend policies istiod reads, with the status
	// of each targetRef, in the order converted.
	Policies    []*Policy
	Diagnostics []diag.Diagnostic
}

// Convert runs the conversion over the objects the hierarchy stage left.
// It never changes objs; a broken Gateway API object is a diagnostic and
// the rest converts. Its error is ctx's.
func Convert(ctx context.Context, objs []model.Object, opts Options) (*Result, error) {
	if opts.DomainSuffix == "" {
		opts.DomainSuffix = model.DefaultDomainSuffix
	}
	c := newConverter(objs, opts)
	if !c.any {
		return &Result{Objects: objs}, nil
	}
	c.gateways()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if err := c.routes(ctx); err != nil {
		return nil, err
	}
	c.backendPolicies()
	c.gatewayBackends()
	c.waypointUsers()
	res := &Result{Generated: c.out, Gateways: c.gws, Policies: c.policies, Diagnostics: c.diags}
	res.Objects = append(append(make([]model.Object, 0, len(objs)+len(c.out)), objs...), c.out...)
	return res, nil
}
