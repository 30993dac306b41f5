package compile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/meshc/meshc/internal/envdiff"
	"github.com/meshc/meshc/internal/envoycfg"
	"github.com/meshc/meshc/internal/istiodcompare"
)

// TestConfigsAreTheBuild: the configurations built in memory are,
// resource for resource and in order, what a build writes.
func TestConfigsAreTheBuild(t *testing.T) {
	ctx := context.Background()
	r, err := Run(ctx, Inputs{Paths: []string{bookinfo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := BuildOptions{Format: "xds", SelfContained: true}
	dir := t.TempDir()
	if _, err := r.Write(ctx, r.Mesh.Views, dir, opts); err != nil {
		t.Fatal(err)
	}
	built, err := istiodcompare.LoadBuild(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := r.Configs(ctx, r.Mesh.Views, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != len(built) {
		t.Fatalf("%d configs, %d built proxies", len(cfgs), len(built))
	}
	for i, b := range built {
		if id := r.Mesh.Views[i].Proxy.ID(); id != b.ID {
			t.Fatalf("config %d is %s, build has %s", i, id, b.ID)
		}
		if cs := envdiff.Configs(b.Config, cfgs[i]); len(cs) > 0 {
			t.Errorf("%s: in memory differs from the build: %v", b.ID, cs)
		}
		got, want := cfgs[i].Resources(), b.Config.Resources()
		if len(got) != len(want) {
			t.Fatalf("%s: %d resources in memory, %d built", b.ID, len(got), len(want))
		}
	}
	// Sidecars of one scope share their outbound resources, as the
	// build's shared files do: productpage and details see the same
	// services through the same rules.
	shared := 0
	for _, a := range cfgs[0].Clusters() {
		for _, b := range cfgs[1].Clusters() {
			if a == b {
				shared++
			}
		}
	}
	if shared == 0 {
		t.Errorf("%s and %s share no cluster", r.Mesh.Views[0].Proxy.ID(), r.Mesh.Views[1].Proxy.ID())
	}
}

// TestConfigRecordsRouteOrigins: a route translated from a VirtualService
// rule names the rule, with its file and line; a default route names
// none.
func TestConfigRecordsRouteOrigins(t *testing.T) {
	ctx := context.Background()
	r, err := Run(ctx, Inputs{Paths: []string{bookinfo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Proxy("default", "productpage-v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"xds", "bootstrap"} {
		cfg, err := r.Config(ctx, v, BuildOptions{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			ref  envoycfg.RouteRef
			want string // "" for no origin
		}{
			{envoycfg.RouteRef{Config: "9080", VirtualHost: "reviews.default.svc.cluster.local:9080", Index: 0}, "VirtualService default/reviews spec.http[0] line 11"},
			{envoycfg.RouteRef{Config: "9080", VirtualHost: "reviews.default.svc.cluster.local:9080", Index: 1}, "VirtualService default/reviews spec.http[1] line 19"},
			{envoycfg.RouteRef{Config: "9080", VirtualHost: "ratings.default.svc.cluster.local:9080", Index: 0}, ""},
		} {
			got := ""
			if o, ok := cfg.RouteOrigin(tc.ref); ok {
				ref := o.Ref()
				got = fmt.Sprintf("%s %s/%s %s line %d", ref.Kind, ref.Namespace, ref.Name, o.Path, ref.Line)
				if filepath.Base(ref.File) != "virtual-services.yaml" {
					t.Errorf("%+v: origin in %s", tc.ref, ref.File)
				}
			}
			if got != tc.want {
				t.Errorf("%s %+v: origin %q, want %q", format, tc.ref, got, tc.want)
			}
		}
	}
}

func TestConfigsEndWithContext(t *testing.T) {
	r, err := Run(context.Background(), Inputs{Paths: []string{bookinfo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if _, err := r.Configs(ctx, r.Mesh.Views, BuildOptions{}); !errors.Is(err, cause) {
		t.Errorf("err = %v, want the cause", err)
	}
}

// TestUncheckedConfigs: leaving out validation changes no resource.
func TestUncheckedConfigs(t *testing.T) {
	ctx := context.Background()
	r, err := Run(ctx, Inputs{Paths: []string{bookinfo}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checked, err := r.Configs(ctx, r.Mesh.Views, BuildOptions{Format: "xds"})
	if err != nil {
		t.Fatal(err)
	}
	unchecked, err := r.Configs(ctx, r.Mesh.Views, BuildOptions{Format: "xds", Unchecked: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range checked {
		if cs := envdiff.Configs(checked[i], unchecked[i]); len(cs) > 0 || len(checked[i].Resources()) != len(unchecked[i].Resources()) {
			t.Errorf("%s: unchecked differs: %v", r.Mesh.Views[i].Proxy.ID(), cs)
		}
	}
}
