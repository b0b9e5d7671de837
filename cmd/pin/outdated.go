package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/resolve"
)

// defaultFailOn are the statuses that fail "pin outdated" unless --fail-on
// says otherwise: those that mean a cutover to the lock could downgrade, or
// that pin could not tell.
const defaultFailOn = "behind-running,regression,digest-gone,unknown-order,skew,unverified,error"

type outdatedOptions struct {
	*globalOptions
	// Format shadows the global --format: outdated also speaks GitHub
	// workflow annotations, which no other command does, so it declares
	// its own flag rather than widening the global check in root.go.
	Format string
	FailOn string
	// Environments are the environments --environment names; none: all.
	Environments []string
}

func newOutdatedCmd(g *globalOptions, s streams) *cobra.Command {
	o := &outdatedOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "outdated",
		Short: "Report modules whose lock is behind what runs or what upstream offers",
		Long: `outdated compares, for every module, the current lock entry with what the
hosts run and with the newest upstream candidate within the module's policy,
and gives each module its statuses:

  behind-running   a host runs (or ran, in a stopped container) something
                   newer than the lock: a cutover to the lock would be a
                   downgrade
  regression       "pin resolve" would refuse: the catalogue would take the
                   lock back below a floor (a pin edited down, an upstream
                   tag moved back)
  digest-gone      the registry no longer serves the locked digest: the
                   next pull of the lock fails
  tag-moved        a locked tag that reads as a full semver version now
                   names another digest: upstream re-published it (the lock
                   still pulls its digest; not in --fail-on by default)
  unknown-order    what runs, or the upstream candidate, cannot be ordered
                   against the lock
  skew             the hosts run different images
  unverified       an image fails the module's verify policy: a newer
                   upstream tag skipped, what runs, or the pin (with the
                   reason: unsigned, untrusted signer, bad signature,
                   signature for another digest)
  error            a host or registry failed for the module, or "pin resolve"
                   would fail on it (with the reason)
  unlocked         the lock has no entry for the module yet
  behind-upstream  upstream offers something newer within the policy
  current          none of these

It writes nothing. It exits 1 when a status in --fail-on occurs, 2 on bad
input and 3 when a host or registry could not be reached at all.
--format github prints GitHub Actions workflow annotations: errors for the
statuses in --fail-on, warnings for the others.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runOutdated(cmd.Context(), o, s)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.Environments, "environment", nil, "judge only this environment's modules, by its lock and hosts (repeatable); default: every environment")
	_ = cmd.RegisterFlagCompletionFunc("environment", completeEnvironment(g))
	f.StringVar(&o.Format, "format", "table", "output format: table, json or github (workflow annotations)")
	f.StringVar(&o.FailOn, "fail-on", defaultFailOn, `statuses that make the exit code 1, comma-separated; "any" or "none"`)
	return cmd
}

// parseFailOn reads --fail-on: statuses, or "any" (every status but
// current) or "none".
func parseFailOn(s string) ([]resolve.Status, error) {
	var findings []string
	for _, st := range resolve.Statuses {
		if st != resolve.StatusCurrent {
			findings = append(findings, string(st))
		}
	}
	bad := func(why string) error {
		return withCode(exitInput, fmt.Errorf("--fail-on %q: %s; write a comma-separated list of %s, or \"any\" or \"none\"", s, why, strings.Join(findings, ", ")))
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	if len(parts) == 1 {
		switch parts[0] {
		case "none":
			return []resolve.Status{}, nil
		case "any":
			parts = findings
		}
	}
	var out []resolve.Status
	for _, p := range parts {
		switch {
		case p == "":
			return nil, bad("an empty status")
		case p == "any" || p == "none":
			return nil, bad(p + " stands alone")
		case p == string(resolve.StatusCurrent):
			return nil, bad("current is not a finding")
		case !slices.Contains(findings, p):
			return nil, bad(fmt.Sprintf("unknown status %q", p))
		}
		if !slices.Contains(out, resolve.Status(p)) {
			out = append(out, resolve.Status(p))
		}
	}
	slices.SortFunc(out, func(a, b resolve.Status) int {
		return slices.Index(resolve.Statuses, a) - slices.Index(resolve.Statuses, b)
	})
	return out, nil
}

func runOutdated(ctx context.Context, o *outdatedOptions, s streams) error {
	if !slices.Contains([]string{"table", "json", "github"}, o.Format) {
		return withCode(exitInput, fmt.Errorf("--format %q: write table, json or github", o.Format))
	}
	failOn, err := parseFailOn(o.FailOn)
	if err != nil {
		return err
	}
	prog := newProgress(s.Err, "outdated", progressOn(s, o.Format), progressDelay)
	in, err := load(ctx, o.globalOptions, s, "", prog)
	if err != nil {
		return err
	}
	seen := in.Observed
	envs, err := environments(in, o.globalOptions, s, o.Environments, "")
	if err != nil {
		return err
	}
	// Each environment's modules are judged by its own lock and hosts.
	var reports []*resolve.ModuleStatus
	var envOf []string
	for _, env := range envs {
		r := resolve.Outdated(ctx, env.Input(o.now()), prog.moduleDone)
		reports = append(reports, r...)
		for range r {
			envOf = append(envOf, env.Name)
		}
	}
	prog.clear()
	requestSummary(o.globalOptions, s, in.Registries)

	out := outdatedReport(reports, o, failOn)
	for i := range out.Modules {
		out.Modules[i].Environment = envOf[i]
	}
	switch o.Format {
	case "json":
		err = writeJSON(s.Out, out)
	case "github":
		var b strings.Builder
		writeAnnotations(&b, out, failOn)
		_, err = io.WriteString(s.Out, b.String())
	default:
		var b strings.Builder
		writeOutdatedTable(&b, out, failOn, useColor(s.Out))
		_, err = io.WriteString(s.Out, b.String())
	}
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(seen.Errors)) {
		if err := seen.Errors[name]; badInput(err) {
			return withCode(exitInput, err)
		}
	}
	for _, r := range reports {
		for _, err := range r.Failures {
			if badInput(err) {
				return withCode(exitInput, err)
			}
		}
	}
	if msgs := unreachable(seen, reports); len(msgs) > 0 {
		return withCode(exitSource, errors.New(strings.Join(msgs, "; ")+outdatedHint(in.Catalogue, reports, o.Timeout)))
	}
	var failing []string
	for _, m := range out.Modules {
		if hit := failingStatuses(m.Statuses, failOn); len(hit) > 0 {
			name := fmt.Sprintf("%q", m.Name)
			if m.Environment != "" {
				name += " in " + m.Environment
			}
			failing = append(failing, fmt.Sprintf("%s (%s)", name, strings.Join(hit, ", ")))
		}
	}
	if len(failing) > 0 {
		return withCode(exitFindings, fmt.Errorf("module %s: a status in --fail-on (%s)", joinAnd(failing), strings.Join(statusStrings(failOn), ",")))
	}
	return nil
}

// unreachable lists the hosts and registries that could not be read at all,
// each once: they make the exit code 3.
func unreachable(seen observe.Observed, reports []*resolve.ModuleStatus) []string {
	var msgs []string
	for _, name := range slices.Sorted(maps.Keys(seen.Errors)) {
		if err := seen.Errors[name]; observe.Unreachable(err) {
			msgs = append(msgs, (&observe.SourceError{Source: "host " + name, Err: err}).Error())
		}
	}
	for _, r := range reports {
		for _, err := range r.Failures {
			var se *observe.SourceError
			if observe.Unreachable(err) && errors.As(err, &se) && !slices.Contains(msgs, se.Error()) {
				msgs = append(msgs, se.Error())
			}
		}
	}
	return msgs
}
