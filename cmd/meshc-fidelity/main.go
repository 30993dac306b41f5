// Command meshc-fidelity compares meshc's Envoy configuration with
// istiod's on random meshes: for each seed it writes meshgen.Random's
// mesh, builds it with meshc (xds, whole per-proxy files), runs istiod's
// generator on the same files (a program built beside the project, named
// by -oracle), and compares every resource of every proxy field by field,
// after the audited exclusions of internal/istiodcompare. With -mesh it
// compares the manifests of the directories named instead (hand-made
// fixtures such as examples/gateway-api). It is a developer's tool: no
// test depends on it or on the oracle.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/istiodcompare"
	"github.com/meshc/meshc/internal/meshgen"
	"github.com/meshc/meshc/internal/model"
)

func main() {
	oracle := flag.String("oracle", "", "the istiod generator program (required)")
	from := flag.Int64("from", 1, "first seed")
	to := flag.Int64("to", 10, "last seed")
	work := flag.String("work", "", "keep meshes, builds and oracle output under `DIR` (default: a temporary directory)")
	verbose := flag.Bool("v", false, "print every difference in full")
	gatewayAPI := flag.Bool("gateway-api", false, "add Gateway API objects to the random meshes")
	dualStack := flag.Bool("dual-stack", false, "build with meshc's --dual-stack and run the oracle with ISTIO_DUAL_STACK=true")
	alpha := flag.Bool("alpha-gateway-api", false, "build with meshc's --alpha-gateway-api and run the oracle with PILOT_ENABLE_ALPHA_GATEWAY_API=true")
	var meshes []string
	flag.Func("mesh", "compare the manifests under `DIR` instead of random meshes (repeatable)", func(s string) error {
		meshes = append(meshes, s)
		return nil
	})
	flag.Parse()
	if *oracle == "" {
		fmt.Fprintln(os.Stderr, "meshc-fidelity: -oracle is required")
		os.Exit(2)
	}
	dir := *work
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "meshc-fidelity-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer os.RemoveAll(dir)
	}
	var total tally
	kinds := map[string][]string{}
	type run struct {
		name string
		do   func() ([]istiodcompare.Report, error)
	}
	var runs []run
	sd := sides{oracle: *oracle, dualStack: *dualStack, alphaGatewayAPI: *alpha}
	for i, m := range meshes {
		runs = append(runs, run{m, func() ([]istiodcompare.Report, error) {
			return compare(sd, m, filepath.Join(dir, fmt.Sprintf("mesh-%d", i)))
		}})
	}
	for seed := *from; seed <= *to && len(meshes) == 0; seed++ {
		runs = append(runs, run{fmt.Sprintf("seed %d", seed), func() ([]istiodcompare.Report, error) {
			return runSeed(sd, filepath.Join(dir, fmt.Sprintf("seed-%d", seed)), seed, *gatewayAPI)
		}})
	}
	for _, rn := range runs {
		seed := rn.name
		reports, err := rn.do()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", seed, err)
			os.Exit(1)
		}
		var t tally
		for _, r := range reports {
			t.add(r)
			for _, d := range r.Differ {
				sig := signature(d)
				kinds[sig] = append(kinds[sig], fmt.Sprintf("%s %s %s", seed, r.ID, d.Key))
				if *verbose {
					fmt.Printf("%s %s %s:\n", seed, r.ID, d.Key)
					for _, c := range d.Changes {
						fmt.Printf("  %s\n", c)
					}
				}
			}
			for _, k := range r.Missing {
				kinds["missing "+string(k.Type)] = append(kinds["missing "+string(k.Type)], fmt.Sprintf("%s %s %s", seed, r.ID, k))
			}
			for _, k := range r.Extra {
				kinds["extra "+string(k.Type)] = append(kinds["extra "+string(k.Type)], fmt.Sprintf("%s %s %s", seed, r.ID, k))
			}
		}
		fmt.Printf("%s: %s\n", seed, t)
		total.merge(t)
	}
	fmt.Printf("\nall: %s\n", total)
	sigs := make([]string, 0, len(kinds))
	for s := range kinds {
		sigs = append(sigs, s)
	}
	sort.Slice(sigs, func(i, j int) bool { return len(kinds[sigs[i]]) > len(kinds[sigs[j]]) })
	if len(sigs) > 0 {
		fmt.Printf("\n%d kinds of difference:\n", len(sigs))
	}
	for _, s := range sigs {
		fmt.Printf("%5d  %s\n       e.g. %s\n", len(kinds[s]), s, kinds[s][0])
	}
	if total.differ+total.missing+total.extra > 0 {
		os.Exit(1)
	}
}

// runSeed builds one random mesh with meshc and the oracle and compares.
func runSeed(sd sides, dir string, seed int64, gatewayAPI bool) ([]istiodcompare.Report, error) {
	mesh := filepath.Join(dir, "mesh")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if _, err := meshgen.WriteFiles(mesh, meshgen.RandomWith(seed, meshgen.RandomOptions{GatewayAPI: gatewayAPI})); err != nil {
		return nil, err
	}
	return compare(sd, mesh, dir)
}

// sides are the two builds compared: the oracle program, and istiod's
// feature switches both sides set.
type sides struct {
	oracle          string
	dualStack       bool
	alphaGatewayAPI bool
}

// compare builds the manifests under mesh with meshc and the oracle,
// writing under dir, and compares every proxy istiod builds.
func compare(sd sides, mesh, dir string) ([]istiodcompare.Report, error) {
	out := filepath.Join(dir, "meshc")
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	run, err := compile.Run(context.Background(), compile.Inputs{Paths: []string{mesh}}, compile.Options{DualStack: sd.dualStack, AlphaGatewayAPI: sd.alphaGatewayAPI})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if _, err := run.Write(context.Background(), run.Mesh.Views, out, compile.BuildOptions{Format: "xds", SelfContained: true}); err != nil {
		return nil, err
	}
	got, err := istiodcompare.LoadBuild(out)
	if err != nil {
		return nil, err
	}
	var sidecars, routers []string
	for _, v := range run.Mesh.Views {
		if v.Proxy.Type == "router" {
			routers = append(routers, v.Proxy.ID())
		} else {
			sidecars = append(sidecars, v.Proxy.ID())
		}
	}
	for _, id := range deployedGateways(run.Objects) {
		if !slices.Contains(routers, id) {
			routers = append(routers, id)
		}
	}
	var want []istiodcompare.Proxy
	for _, group := range []struct {
		ids    []string
		router bool
	}{{sidecars, false}, {routers, true}} {
		if len(group.ids) == 0 {
			continue
		}
		args := []string{"-dir", mesh, "-proxy", strings.Join(group.ids, ",")}
		if group.router {
			args = append(args, "-router")
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(sd.oracle, args...)
		cmd.Env = os.Environ()
		if sd.dualStack {
			cmd.Env = append(cmd.Env, "ISTIO_DUAL_STACK=true")
		}
		if sd.alphaGatewayAPI {
			cmd.Env = append(cmd.Env, "PILOT_ENABLE_ALPHA_GATEWAY_API=true")
		}
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("oracle: %v\n%s", err, stderr.String())
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("oracle-router-%v.json", group.router)), stdout.Bytes(), 0o644); err != nil {
			return nil, err
		}
		ps, err := istiodcompare.LoadOracle(jsonLines(stdout.Bytes()))
		if err != nil {
			return nil, err
		}
		want = append(want, ps...)
	}
	byID := map[string]istiodcompare.Proxy{}
	for _, p := range got {
		byID[p.ID] = p
	}
	var reports []istiodcompare.Report
	for _, w := range want {
		g, ok := byID[w.ID]
		if !ok {
			empty, err := envoycfg.New(nil, nil, nil, nil, nil)
			if err != nil {
				return nil, err
			}
			g = istiodcompare.Proxy{ID: w.ID, Config: empty}
		}
		reports = append(reports, istiodcompare.Compare(w, g, istiodcompare.Exclusions))
	}
	return reports, nil
}

// deployedGateways are the gateway proxies istiod's deployment controller
// would create for the Gateway API Gateways of class istio that name no
// existing workload: NAMESPACE/NAME-istio, or the name-override
// annotation's name. The oracle builds them whether or not meshc does.
func deployedGateways(objs []model.Object) []string {
	var ids []string
	for _, o := range objs {
		gw, ok := o.(*model.KubeGateway)
		if !ok || gw.Spec.GatewayClassName != "istio" {
			continue
		}
		if n := len(gw.Spec.Addresses); n > 1 || n == 1 && gw.Spec.Addresses[0].Type != nil && *gw.Spec.Addresses[0].Type != gwv1.IPAddressType {
			continue
		}
		name := gw.Name + "-istio"
		if o := gw.Annotations["gateway.istio.io/name-override"]; o != "" {
			name = o
		}
		ids = append(ids, gw.Namespace+"/"+name)
	}
	return ids
}

type tally struct{ proxies, identical, equal, differ, missing, extra int }

func (t *tally) add(r istiodcompare.Report) {
	t.proxies++
	if len(r.Differ)+len(r.Missing)+len(r.Extra) == 0 {
		t.identical++
	}
	t.equal += r.Equal
	t.differ += len(r.Differ)
	t.missing += len(r.Missing)
	t.extra += len(r.Extra)
}

func (t *tally) merge(o tally) {
	t.proxies += o.proxies
	t.identical += o.identical
	t.equal += o.equal
	t.differ += o.differ
	t.missing += o.missing
	t.extra += o.extra
}

func (t tally) String() string {
	resources := t.equal + t.differ + t.missing + t.extra
	return fmt.Sprintf("%d of %d proxies identical; %d of %d resources equal, %d differ, %d only in istiod's, %d only in meshc's",
		t.identical, t.proxies, t.equal, resources, t.differ, t.missing, t.extra)
}

// signature groups differences of one kind: the resource type and the
// fields the changes touch, without list positions or map keys.
func signature(d istiodcompare.Difference) string {
	var fields []string
	for _, c := range d.Changes {
		var steps []string
		for _, s := range c.Path {
			if s.Field != "" {
				steps = append(steps, s.Field)
			}
		}
		if f := strings.Join(steps, "."); !slices.Contains(fields, f) && len(fields) < 4 {
			fields = append(fields, f)
		}
	}
	return string(d.Key.Type) + ": " + strings.Join(fields, ", ")
}

// jsonLines keeps the lines of an oracle's output that hold JSON values:
// istiod's packages may log to standard output.
func jsonLines(out []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("{")) || bytes.HasPrefix(line, []byte("[")) {
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
