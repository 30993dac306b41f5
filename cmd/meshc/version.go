package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print meshc's version and the API versions it understands",
		Example: "  meshc version",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(g.stdout, versionText())
			return err
		},
	}
}

// versionText reports meshc's own version and the versions of the API
// modules that decide what meshc accepts.
func versionText() string {
	v, deps := "(devel)", map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, d := range bi.Deps {
			deps[d.Path] = d.Version
		}
	}
	s := fmt.Sprintf("meshc %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, m := range []string{"istio.io/api", "k8s.io/api"} {
		if dv := deps[m]; dv != "" {
			s += fmt.Sprintf("  %s %s\n", m, dv)
		}
	}
	return s
}
