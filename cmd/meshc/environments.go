package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/job"
)

// envPlaceholder in build's -o is replaced by each environment's name.
const envPlaceholder = "{env}"

// mergeRuns is what lint reports of several environments' runs (runs[i]
// is envs[i]'s): each finding once with its environments, and the input
// counted per run.
func mergeRuns(envs []job.Environment, runs []*compile.Result) ([]diag.Diagnostic, diag.Input) {
	names := make([]string, len(runs))
	ds := make([][]diag.Diagnostic, len(runs))
	var in diag.Input
	for i, r := range runs {
		names[i], ds[i] = envs[i].Name, r.Diagnostics
		in.Files += len(r.Files)
		in.Objects += len(r.Objects)
		for _, s := range r.Skipped {
			if !slices.Contains(in.Skipped, s) {
				in.Skipped = append(in.Skipped, s)
			}
		}
	}
	return diag.MergeEnvironments(names, ds), in
}

// envNames lists the environments' names.
func envNames(envs []job.Environment) string {
	names := make([]string, len(envs))
	for i, e := range envs {
		names[i] = e.Name
	}
	return strings.Join(names, ", ")
}

// inEnvironment says which environment's run an error stopped.
func inEnvironment(name string, err error) error {
	var ee *exitError
	if errors.As(err, &ee) && ee.err != nil {
		ee.err = fmt.Errorf("environment %s: %w", name, ee.err)
	}
	return err
}
