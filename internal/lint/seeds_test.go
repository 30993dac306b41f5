package lint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/resolve/resolvetest"
)

// TestSeedsFire: every analyzer's code, and the loader's admission
// warning, has a seed in testdata/seeds that makes it fire when loaded as
// meshc lint loads files (admission rules on). A seed holds no Pod or
// Deployment unless its code is about workloads, so most codes are shown
// to speak on configuration-only input.
func TestSeedsFire(t *testing.T) {
	workloadCodes := []*diag.Entry{diag.ConflictingSidecarSelectors, diag.NoInjectedWorkloads, diag.WorkloadPortProtocolConflict,
		diag.WorkloadTargetPortConflict, diag.SelectorRuleDropsSubsets, diag.SubsetSelectsNoWorkload, diag.SelectorMatchesNoWorkload,
		diag.ConflictingGateways, diag.GatewayPortNotOnService, diag.DuplicateGatewayCertificate, diag.GatewayCredentialNotFound,
		diag.ConflictingTelemetrySelectors, diag.MisplacedAnnotation, diag.InvalidAnnotationValue, diag.AlphaAnnotation,
		diag.UnknownAnnotation, diag.DeprecatedSetting, diag.IngressRouteSkipsMeshRules, diag.JWTClaimRouteWithoutAuthentication,
		diag.MTLSDisabledForStrictServer, diag.VirtualServiceHostNotInGateway, diag.ApplicationRunsAsProxyUID}
	codes := []*diag.Entry{diag.AdmissionWarning}
	for _, a := range Analyzers() {
		codes = append(codes, a.Entry)
	}
	for _, e := range codes {
		t.Run(e.Code, func(t *testing.T) {
			file := filepath.Join("testdata", "seeds", e.Code+".yaml")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%s has no seed: %v", e.Code, err)
			}
			if strings.Contains(string(data), "\nkind: Deployment") || strings.Contains(string(data), "\nkind: Pod") {
				if !slices.Contains(workloadCodes, e) {
					t.Errorf("%s: the seed holds workloads, but the code is not about them: show it firing without", file)
				}
			}
			objs, ds := load.Bytes(file, data)
			mc, _ := load.MeshConfig(objs, load.MeshOptions{})
			m, sds := resolvetest.Stages(objs, mc)
			ds = append(append(ds, sds...), analyze(t, m, Analyzers(), Options{})...)
			if !slices.ContainsFunc(ds, e.Is) {
				t.Errorf("%s does not fire on %s", e.Code, file)
			}
		})
	}
}
