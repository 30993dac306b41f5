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

// versionText reports meshc's own version, the commit and date it was
// built from, and the versions of the API modules that decide what meshc
// accepts.
func versionText() string {
	v, deps, vcs := "(devel)", map[string]string{}, map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, d := range bi.Deps {
			deps[d.Path] = d.Version
		}
		for _, s := range bi.Settings {
			vcs[s.Key] = s.Value
		}
	}
	s := fmt.Sprintf("meshc %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if rev := vcs["vcs.revision"]; rev != "" {
		if vcs["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		s += fmt.Sprintf("  commit %s %s\n", rev, vcs["vcs.time"])
	}
	for _, m := range []string{"istio.io/api", "k8s.io/api"} {
		if dv := deps[m]; dv != "" {
			s += fmt.Sprintf("  %s %s\n", m, dv)
		}
	}
	return s
}
