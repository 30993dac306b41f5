package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/meshgen"
)

// newGenCmd is a hidden developer command: it writes a synthetic mesh for
// benchmarks and measurements, so large inputs are never committed.
func newGenCmd(g *globals) *cobra.Command {
	var out string
	var opts meshgen.Options
	var random bool
	var ropts meshgen.RandomOptions
	cmd := &cobra.Command{
		Use:    "gen -o DIR",
		Short:  "Write a synthetic mesh (developer command)",
		Hidden: true,
		Example: `  meshc gen -o /tmp/mesh                       # 100 namespaces x 20 services, ~8,000 objects
  meshc gen -o /tmp/small --namespaces 5 --services 4
  meshc gen -o /tmp/gw --ingress gatewayapi      # the same routes at an ingress, as HTTPRoutes
  meshc gen -o /tmp/vs --version-services       # routes to a Service per version, as VirtualServices
  meshc gen -o /tmp/routes --http-routes         # the same routes as HTTPRoutes
  meshc gen -o /tmp/r7 --random --gateway-api --seed 7`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if out == "" {
				return &exitError{code: exitUsage, err: fmt.Errorf("gen needs -o DIR")}
			}
			if i := opts.Ingress; i != "" && i != meshgen.IngressIstio && i != meshgen.IngressGatewayAPI {
				return &exitError{code: exitUsage, err: fmt.Errorf("--ingress: want %s or %s, got %q", meshgen.IngressIstio, meshgen.IngressGatewayAPI, i)}
			}
			if random {
				files, err := meshgen.WriteFiles(out, meshgen.RandomWith(opts.Seed, ropts))
				if err != nil {
					return &exitError{code: exitUsage, err: err}
				}
				_, err = diag.Fprintf(g.stdout, "wrote a random mesh (seed %d) in %d files to %s\n", opts.Seed, files, out)
				return err
			}
			files, objects, err := meshgen.Write(out, opts)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			_, err = diag.Fprintf(g.stdout, "wrote %d objects in %d files to %s\n", objects, files, out)
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "directory to write into")
	cmd.Flags().IntVar(&opts.Namespaces, "namespaces", 0, "application namespaces (default 100)")
	cmd.Flags().IntVar(&opts.ServicesPerNS, "services", 0, "services per namespace (default 20)")
	cmd.Flags().IntVar(&opts.VersionsPerSvc, "versions", 0, "workloads per service (default: alternate 1 and 2)")
	cmd.Flags().IntVar(&opts.SidecarEveryNth, "sidecar-every", 0, "a default Sidecar in every Nth namespace (default 4, negative for none)")
	cmd.Flags().Int64Var(&opts.Seed, "seed", 0, "seed for the few random choices (default 1)")
	cmd.Flags().StringVar(&opts.Ingress, "ingress", "", "add an ingress gateway routing to every service: istio (Gateway and VirtualServices) or gatewayapi (Gateway and HTTPRoutes)")
	cmd.Flags().BoolVar(&random, "random", false, "a small mesh whose whole shape the seed decides (mixed protocols, ServiceEntries, Sidecars, DestinationRules, VirtualServices, PeerAuthentications, a gateway with servers sometimes bound to its address), for comparing with istiod")
	cmd.Flags().BoolVar(&opts.VersionServices, "version-services", false, "add a Service per version of each routed service and route to those instead of to subsets (the mesh --http-routes writes, routed by VirtualServices)")
	cmd.Flags().BoolVar(&opts.HTTPRoutes, "http-routes", false, "write the routes as mesh HTTPRoutes (to a Service per version, as --version-services) instead of VirtualServices")
	cmd.Flags().BoolVar(&ropts.GatewayAPI, "gateway-api", false, "with --random: add Gateways of class istio, ListenerSets, HTTPRoutes, GRPCRoutes, TCPRoutes, TLSRoutes, ReferenceGrants, XBackendTrafficPolicies and sometimes a waypoint Gateway, some deliberately not accepted")
	return cmd
}
