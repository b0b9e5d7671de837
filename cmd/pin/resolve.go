package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/promote"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

type resolveOptions struct {
	*globalOptions
	Check bool
	// FromHost and Snapshot are "pin lock --from-host HOST --snapshot FILE".
	FromHost string
	Snapshot string
	// Modules are the modules "pin resolve MODULE…" names; none: all.
	Modules []string
	// Environments are the environments "--environment NAME" names;
	// none: all (with FromHost, the host's).
	Environments []string
}

func newResolveCmd(g *globalOptions, s streams) *cobra.Command {
	o := &resolveOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "resolve [MODULE...]",
		Short: "Decide every module's image and write the lock",
		Long: `resolve loads the catalogue, reads what the hosts run and what the
registries offer, prints the plan (per module: old lock → new lock, the side
that won and why) and writes the lockfile. A module whose lock would be older
than what a host runs is refused, and then nothing is written.

With MODULE arguments, only the named modules are decided (against every
floor, as always); every other lock entry stays as it is, byte for byte,
and nothing is asked about those modules.

A catalogue with environment blocks has one lock per environment
(pin.lock.NAME.hcl beside --lock): each environment is resolved against
its own hosts and its own previous lock. A module refused in one
environment writes no lock at all. --environment NAME resolves only the
environments named.`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeModules(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Modules = args
			return runResolve(cmd.Context(), o, s)
		},
	}
	cmd.Flags().BoolVar(&o.Check, "check", false, "write nothing; exit 1 if the lock would change")
	cmd.Flags().StringArrayVar(&o.Environments, "environment", nil, "resolve only this environment's lock (repeatable); default: every environment")
	_ = cmd.RegisterFlagCompletionFunc("environment", completeEnvironment(g))
	return cmd
}

func printDiags(s streams, files map[string]*hcl.File, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	// Snippets quote the source as it is: escape what a terminal would act on.
	var buf strings.Builder
	w := hcl.NewDiagnosticTextWriter(&buf, files, 0, false)
	_ = w.WriteDiagnostics(diags)
	fmt.Fprint(s.Err, sanitize(buf.String()))
	// Then one line per problem, file:line:column first, for CI logs and
	// editors.
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		if d.Subject != nil {
			fmt.Fprintf(s.Err, "%s:%d:%d: %s: %s\n", sanitize(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column, sev, sanitize(d.Summary))
		} else {
			fmt.Fprintf(s.Err, "%s: %s\n", sev, sanitize(d.Summary))
		}
	}
}

func runResolve(ctx context.Context, o *resolveOptions, s streams) error {
	unlock, err := lockDir(ctx, o.Lock, s)
	if err != nil {
		return err
	}
	defer unlock()
	command := "resolve"
	if o.FromHost != "" {
		command = "lock"
	}
	prog := newProgress(s.Err, command, progressOn(s, o.Format), progressDelay)
	defer prog.clear()
	in, run, err := resolveInputs(ctx, o, s, prog)
	if err != nil {
		return err
	}
	results := decideEnvironments(ctx, run, prog)
	prog.clear()
	requestSummary(o.globalOptions, s, in.Registries)
	written, err := writeResults(o, s, results)
	if err != nil {
		return err
	}
	var reports []planOutput
	for _, r := range results {
		out := planReport(r.plan, o.globalOptions, command, r.changed, slices.Contains(written, r.env.Path), len(o.Modules) > 0)
		out.Lock = r.env.Path
		leftEnvironment(&out, r.env, in.Catalogue)
		reports = append(reports, out)
	}
	if err := render(s, o.Format, mergeEnvironments(reports, run.Envs, o.globalOptions)); err != nil {
		return err
	}
	return resolveExit(o, s, in.Catalogue, results, lockPaths(run.Envs))
}

// resolveInputs loads what a resolve or lock --from-host run decides
// with, and refuses what must be refused before anything is asked of a
// registry: an unknown module, an orphan lock beside --lock, a lock that
// would drop the floor of a host moved out of its environment (unless
// --check, which writes nothing). Which environments and modules the run
// decides, and those refusals, are source's (Inputs.Select).
func resolveInputs(ctx context.Context, o *resolveOptions, s streams, prog *progress) (*source.Inputs, *source.Run, error) {
	in, err := load(ctx, o.globalOptions, s, o.FromHost, prog)
	if err != nil {
		return nil, nil, err
	}
	if o.Snapshot != "" {
		if err := writeSnapshot(o.Snapshot, in.Observed, o.FromHost); err != nil {
			return nil, nil, err
		}
	}
	run, err := in.Select(source.Selection{Lock: o.Lock, Environments: o.Environments, Host: o.FromHost, Modules: o.Modules, Now: o.now()})
	if err != nil {
		return nil, nil, selectError(s, err)
	}
	if run.Orphans != nil {
		return nil, nil, withCode(exitInput, run.Orphans)
	}
	seededNotes(s, run.Envs)
	if run.Moved != nil && !o.Check {
		return nil, nil, withCode(exitInput, run.Moved)
	}
	return in, run, nil
}

// envResult is one environment's share of a run: its plan and new lock, and
// whether that lock changes.
type envResult struct {
	env     *source.Env
	plan    *resolve.Plan
	newLock *lock.Lock
	changed bool
}

// decideEnvironments resolves each environment on its own: its catalogue
// view, its previous lock and the record of its hosts.
func decideEnvironments(ctx context.Context, run *source.Run, prog *progress) []envResult {
	var results []envResult
	for _, env := range run.Envs {
		if !env.Decides() {
			continue // "pin resolve MODULE…" names none of its modules
		}
		rin := run.Input(env)
		rin.Progress = prog.moduleDone
		plan := resolve.Resolve(ctx, rin)
		newLock := plan.Lock()
		results = append(results, envResult{env: env, plan: plan, newLock: newLock, changed: lock.Sum(newLock) != env.LockSum})
	}
	return results
}

// writeResults writes every lock of a run or none (lock.WriteAll): none
// when a module of any environment was refused or failed, or with
// --check. It returns the paths written.
func writeResults(o *resolveOptions, s streams, results []envResult) ([]string, error) {
	var ws []lock.Write
	for _, r := range results {
		if r.plan.Refused() || r.plan.Failed() {
			return nil, nil
		}
		ws = append(ws, lock.Write{Path: r.env.Path, Lock: r.newLock})
	}
	if o.Check {
		return nil, nil
	}
	written, removed, err := lock.WriteAll(ws)
	if o.Verbose {
		for _, p := range removed {
			fmt.Fprintf(s.Err, "pin: removed %s, left by a run that was killed while it wrote the lock\n", sanitize(p))
		}
	}
	if err != nil {
		return nil, withCode(exitInput, err)
	}
	return written, nil
}

// resolveExit says why a run wrote nothing, with its exit code: a module
// failed (2 or 3), refused (1), or --check found a lock that would change
// (1).
func resolveExit(o *resolveOptions, s streams, cat *catalogue.Catalogue, results []envResult, lockNames string) error {
	var failed, refused, would, hints []string
	failCode := exitInput
	for _, r := range results {
		switch {
		case r.plan.Failed():
			failed = append(failed, failures(r.plan))
			hints = append(hints, unreachableHint(cat, r.plan, o.Timeout))
			failCode = max(failCode, failureCode(r.plan))
		case r.plan.Refused():
			for _, d := range r.plan.Decisions {
				if d.Refusal() != nil {
					fmt.Fprintf(s.Err, "pin: %s\n\n", sanitize(d.Refusal().Error()))
				}
			}
			refused = append(refused, envPrefix(r.env)+refusedNames(r.plan))
		}
		if r.changed {
			would = append(would, r.env.Path)
		}
	}
	switch {
	case len(failed) > 0:
		return withCode(failCode, fmt.Errorf("%s; %s left unchanged%s", strings.Join(failed, "\n"), lockNames, strings.Join(hints, "")))
	case len(refused) > 0:
		return withCode(exitFindings, fmt.Errorf("refused to lock %s; %s left unchanged", strings.Join(refused, "; "), lockNames))
	case o.Check && len(would) > 0:
		return withCode(exitFindings, fmt.Errorf("%s would change; run \"pin resolve\" to update it", joinAnd(would)))
	}
	return nil
}

// failureCode is the exit code of a plan that failed: 3 when a host or
// registry failed, 2 when only the input did (a lock entry or a pin that
// disagrees with its content).
func failureCode(p *resolve.Plan) int {
	for _, d := range p.Decisions {
		if d.Err() != nil && sourceCode(d.Err()) == exitSource {
			return exitSource
		}
	}
	return exitInput
}

// badInput reports whether err is the input's fault: a lock entry or a
// catalogue pin that disagrees with what its digest names, or a snapshot
// file that is not one.
func badInput(err error) bool {
	var lm *resolve.LockMismatchError
	var pm *resolve.PinMismatchError
	return errors.As(err, &lm) || errors.As(err, &pm) || errors.Is(err, host.ErrBadSnapshot) || errors.Is(err, promote.ErrInput)
}

func failures(p *resolve.Plan) string {
	var errs []error
	for _, d := range p.Decisions {
		if d.Err() != nil {
			errs = append(errs, fmt.Errorf("module %q: %w", d.Module.Name, d.Err()))
		}
	}
	return errors.Join(errs...).Error()
}

func refusedNames(p *resolve.Plan) string {
	var n []string
	for _, d := range p.Decisions {
		if d.Refusal() != nil {
			n = append(n, fmt.Sprintf("%q", d.Module.Name))
		}
	}
	return fmt.Sprintf("module %s", joinAnd(n))
}

func joinAnd(n []string) string {
	switch len(n) {
	case 0:
		return ""
	case 1:
		return n[0]
	}
	s := ""
	for i, x := range n {
		switch {
		case i == 0:
			s = x
		case i == len(n)-1:
			s += " and " + x
		default:
			s += ", " + x
		}
	}
	return s
}
