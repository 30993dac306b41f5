package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print meshc's version and the API versions it understands",
		Example: `  meshc version
  meshc --version
  meshc version -o json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := readVersion()
			switch format {
			case "text":
				_, err := fmt.Fprint(g.stdout, v.text())
				return err
			case "json":
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			return &exitError{code: exitUsage, err: fmt.Errorf("unknown output format %q (want text or json)", format)}
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output `format`: text or json")
	return cmd
}

// buildVersion is what meshc knows of its own build: its version, the
// commit and date it was built from, the toolchain, and the versions of
// the API modules that decide what meshc accepts.
type buildVersion struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commitTime,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	IstioAPI   string `json:"istioAPI,omitempty"`
	KubeAPI    string `json:"kubernetesAPI,omitempty"`
}

func readVersion() buildVersion {
	v := buildVersion{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, d := range bi.Deps {
		switch d.Path {
		case "istio.io/api":
			v.IstioAPI = d.Version
		case "k8s.io/api":
			v.KubeAPI = d.Version
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// text is the human form: the version line, then the commit and the API
// modules.
func (v buildVersion) text() string {
	s := fmt.Sprintf("meshc %s %s %s\n", v.Version, v.Go, v.Platform)
	if v.Commit != "" {
		rev := v.Commit
		if v.Modified {
			rev += " (modified)"
		}
		s += fmt.Sprintf("  commit %s %s\n", rev, v.CommitTime)
	}
	if v.IstioAPI != "" {
		s += fmt.Sprintf("  istio.io/api %s\n", v.IstioAPI)
	}
	if v.KubeAPI != "" {
		s += fmt.Sprintf("  k8s.io/api %s\n", v.KubeAPI)
	}
	return s
}
