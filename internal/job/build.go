package job

import (
	"context"
	"fmt"
	"slices"

	"github.com/meshc/meshc/internal/compile"
	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/outdir"
)

// Out is a build's output directory, checked before anything is read.
type Out struct {
	target outdir.Target
	opts   outdir.Options
}

// CheckOut checks that out may be replaced by a build reading s's inputs
// (outdir.Check). It comes before Merge: the flags name the configs now,
// and Build adds those the plan found.
func CheckOut(out string, s Settings, force bool) (*Out, error) {
	// Every file meshc reads is an input OUT must not hold.
	opts := outdir.Options{Inputs: append(slices.Clone(s.named()), s.ProjectConfig, s.Compile.MeshConfigFile), Force: force}
	t, err := outdir.Check(out, opts)
	if err != nil {
		return nil, err
	}
	return &Out{target: t, opts: opts}, nil
}

// Build is what to build into OUT, and who hears how it goes.
type Build struct {
	// Proxies are NAMESPACE/NAME globs (compile.Result.SelectProxies).
	Proxies []string
	Options compile.BuildOptions
	// Budget stops a build estimated to write more bytes; 0 means none.
	Budget int64
	// Waiting hears that another build holds OUT's lock.
	Waiting outdir.Waiting
	// Writing, when set, is called as the proxies start being written; it
	// returns what hears each proxy written and what hears the writing
	// end, either of which may be nil.
	Writing func(proxies int) (progress func(done, total int), finished func())
	// Deliver hears the diagnostics of a build about to be swapped in;
	// when it fails (standard error a closed pipe, say), nothing is.
	Deliver func(run *compile.Result, ds []diag.Diagnostic) error
}

// Refused is a build stopped by its findings before anything was
// swapped in: findings at the --fail-on threshold, or input that could
// not be read. OUT is left as it was.
type Refused struct {
	Run         *compile.Result
	Diagnostics []diag.Diagnostic
}

func (r *Refused) Error() string {
	if Incomplete(r.Diagnostics) {
		return "nothing written: some input could not be read or rendered"
	}
	return "nothing written: findings reach --fail-on"
}

// Build is meshc build as one transaction: compile, stop at findings
// reaching FailOn (before any proxy is built), stop when the estimate
// exceeds the budget, take OUT's lock, write the build beside OUT, stop
// at the build checks' findings, deliver the diagnostics, and swap the
// build in. Whatever stops it, OUT is left as it was; the error says so,
// or is a *Refused.
func (p *Plan) Build(ctx context.Context, out *Out, b Build) (*compile.Built, error) {
	run, err := p.Compile(ctx)
	if err != nil {
		return nil, err
	}
	threshold, err := ParseFailOn(p.FailOn)
	if err != nil {
		return nil, err
	}
	views, err := run.SelectProxies(b.Proxies)
	if err != nil {
		return nil, err
	}
	// A compiler writes nothing when its input fails.
	if stops(run.Diagnostics, threshold) {
		return nil, &Refused{Run: run, Diagnostics: run.Diagnostics}
	}
	named := out.target.Named
	// Say what a build would cost before spending it.
	if est := run.Estimate(views, b.Options); b.Budget > 0 && est.Bytes > b.Budget {
		return nil, fmt.Errorf("%w; nothing written, %s left as it was", &compile.OverBudgetError{Estimate: est, Budget: b.Budget}, named)
	}
	oo := out.opts
	oo.Inputs = append(slices.Clone(oo.Inputs), p.read...)
	pending, err := outdir.Begin(ctx, out.target, oo, b.Waiting)
	if err != nil {
		return nil, err
	}
	defer pending.Abort()
	opts := b.Options
	var finished func()
	if b.Writing != nil {
		opts.Progress, finished = b.Writing(len(views))
	}
	res, err := run.Write(ctx, views, pending.Dir(), opts)
	if finished != nil {
		finished()
	}
	if err != nil {
		return nil, fmt.Errorf("build: %w; %s left as it was", err, named)
	}
	if stops(res.Diagnostics, threshold) {
		return nil, &Refused{Run: run, Diagnostics: res.Diagnostics}
	}
	if b.Deliver != nil {
		if err := b.Deliver(run, res.Diagnostics); err != nil {
			return nil, fmt.Errorf("%w; %s left as it was", err, named)
		}
	}
	if err := pending.Commit(ctx); err != nil {
		return nil, fmt.Errorf("build: %w; %s left as it was", err, named)
	}
	return res, nil
}

// stops reports whether ds stop a build: input not loaded, or a finding
// at the threshold (0: none counts).
func stops(ds []diag.Diagnostic, threshold diag.Severity) bool {
	return Incomplete(ds) || threshold > 0 && diag.AtLeast(ds, threshold)
}
