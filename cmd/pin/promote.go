package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/promote"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
)

type promoteOptions struct {
	*globalOptions
	From, To string
	Modules  []string
	Pick     string
	Reason   string
	Lift     bool
}

func newPromoteCmd(g *globalOptions, s streams) *cobra.Command {
	o := &promoteOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "promote FROM TO [MODULE...]",
		Short: "Carry the builds environment FROM runs into environment TO's lock",
		Long: `promote sets TO's lock entries to the digest observed running on every
host of FROM that runs each module (not FROM's lock), and records where it
came from: the environment, its hosts, when the build started there, and
the release (a hash over the modules promoted together). It writes only
TO's lock (pin.lock.TO.hcl), as "pin resolve" writes it.

It refuses, and writes nothing, naming the module and what to do, when
FROM's hosts run different builds (skew), when the build has run in FROM
for less than TO's soak (from each container's start as its engine reports
it: a restart starts it again), when the build fails the module's
signature policy, when TO runs or locks something newer or unorderable
(unless the module states allow_downgrade), when FROM runs nothing of a
module named, or when a module named is held. Modules promoted together
are one unit: all or nothing.

--pick REF promotes REF (sha256:<digest> or <tag>@sha256:<digest>) for the
one module named instead, and records a hold (--reason, the words kept in
the lock): "pin resolve" and later promotions keep it until
"pin promote --lift FROM TO MODULE..." lifts it, and every hold the
module would take over again (a retired entry, another environment's
entry for a host that is TO's now), writing those locks too. Promotions
that name no module skip held entries and say so.

--format json writes what was decided as docs/schema/promote.schema.json
describes it, refusals included. To promote through a reviewed pull
request instead of writing the lock here: pin propose --environment TO
--promote FROM [MODULE...].

Exit codes: 0 promoted (or nothing to do), 1 refused, 2 bad input, 3 a
host or registry could not be reached.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.From, o.To, o.Modules = args[0], args[1], args[2:]
			return runPromote(cmd.Context(), o, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Pick, "pick", "", "promote this image (sha256:<digest> or <tag>@sha256:<digest>) for the one module named, and hold it")
	f.StringVar(&o.Reason, "reason", "", "with --pick: why, kept in the lock as the hold")
	f.BoolVar(&o.Lift, "lift", false, "lift the holds of the modules named in TO's lock, and change nothing else")
	return cmd
}

// loadStarts is load, with the hosts (all, or host alone) read with
// their containers' starts: pin promote, pin status and pin observe
// (which publishes them) need them, pin resolve does not.
func loadStarts(ctx context.Context, g *globalOptions, s streams, host string) (*source.Inputs, error) {
	req := source.Request{Catalogue: g.Catalogue, Lock: g.Lock, Options: g.sourceOptions(), Host: host}
	req.Options.StartTimes = true
	in, warnings, err := source.Load(ctx, req)
	if in != nil {
		skippedHosts(s, in.Skipped)
	}
	return in, loadError(s, in, warnings, err)
}

// envOf is a catalogue environment as package promote reads it.
func envOf(e *catalogue.Environment) promote.Env {
	return promote.Env{Name: e.Name, Hosts: e.Hosts, From: e.From, Soak: e.Soak, Require: e.Require}
}

func runPromote(ctx context.Context, o *promoteOptions, s streams) error {
	if o.Lift && o.Pick != "" {
		return withCode(exitInput, errors.New("--lift and --pick: lift a hold, or pick a build, not both"))
	}
	unlock, err := lockDir(ctx, o.Lock, s)
	if err != nil {
		return err
	}
	defer unlock()
	in, err := loadStarts(ctx, o.globalOptions, s, "")
	if err != nil {
		return err
	}
	run, err := selectPromotion(in, o, o.Lock, false)
	if err != nil {
		return err
	}
	toEnv := run.Envs[0]
	if o.Lift {
		// The holds the modules would take over again are lifted with
		// theirs, in whichever lock they are (promote.LiftAll).
		ws, err := promote.LiftAll(toEnv.Input(o.now()), toEnv.Path, o.Modules)
		if err != nil {
			return withCode(exitInput, err)
		}
		out := promoteJSON(o, toEnv.Path, nil)
		out.Lifted = slices.Clone(o.Modules)
		report := fmt.Sprintf("Lifted the hold of %s in %s.", strings.Join(o.Modules, ", "), o.To)
		for _, w := range ws[1:] {
			report += fmt.Sprintf("\nLifted the hold it would take over in %s.", w.Path)
		}
		return writePromoted(o, s, toEnv, ws, report, out)
	}
	res, err := decidePromotion(ctx, o, in, run)
	requestSummary(o.globalOptions, s, in.Registries)
	if err != nil {
		return withCode(sourceCode(err), fmt.Errorf("%w; %s left unchanged", err, toEnv.Path))
	}
	var b strings.Builder
	writePromotion(&b, o, res)
	if res.Refused() {
		if o.Format == "json" {
			if err := writeJSON(s.Out, promoteJSON(o, toEnv.Path, res)); err != nil {
				return err
			}
		} else {
			io.WriteString(s.Out, sanitize(b.String()))
		}
		var names []string
		for _, r := range res.Refusals {
			fmt.Fprintf(s.Err, "pin: %s\n\n", sanitize(r.Error()))
			names = append(names, fmt.Sprintf("%q", r.Module))
		}
		return withCode(exitFindings, fmt.Errorf("refused to promote %s from %s to %s; %s left unchanged", strings.Join(names, ", "), o.From, o.To, toEnv.Path))
	}
	return writePromoted(o, s, toEnv, []lock.Write{{Path: toEnv.Path, Lock: res.Lock()}}, b.String(), promoteJSON(o, toEnv.Path, res))
}

// selectPromotion is the run o promotes (source's Inputs.SelectTarget,
// with lk the lock, TO's own file when own): FROM and TO checked, TO's
// share of the run, and the orphan-lock and moved-host refusals, each
// refused with exit code 2. It is pin promote's and pin propose
// --promote's one way to select.
func selectPromotion(in *source.Inputs, o *promoteOptions, lk string, own bool) (*source.Run, error) {
	run, err := in.SelectTarget(source.Target{Lock: lk, Own: own, Environment: o.To, From: o.From, Modules: o.Modules, Now: o.now()})
	if err != nil {
		return nil, withCode(exitInput, err)
	}
	if err := lockRefusal(run); err != nil {
		return nil, err
	}
	return run, nil
}

// decidePromotion asks package promote what o promotes: in holds every
// host read (with starts), run.Envs[0] is TO's share (its view, its
// lock). It is pin promote's and pin propose --promote's one way to
// decide.
func decidePromotion(ctx context.Context, o *promoteOptions, in *source.Inputs, run *source.Run) (*promote.Result, error) {
	toEnv := run.Envs[0]
	rin := toEnv.Input(o.now())
	pin := promote.Input{Catalogue: in.Catalogue, From: envOf(run.From), To: envOf(run.To), Observed: in.Observed, Record: in.Record(), Old: toEnv.Inputs.Lock,
		Modules: o.Modules, Now: o.now(), Floors: promote.ResolveFloors{In: rin}, Held: promote.ResolveFloors{In: rin}.Held, Verifier: promote.ResolveVerifier{In: rin}}
	if o.Pick != "" {
		pin.Pick = &promote.Pick{Ref: o.Pick, Reason: o.Reason}
	}
	return promote.Promote(ctx, pin)
}

// writePromoted writes the locks of a promotion or a lift (ws: TO's
// first, then any other a lift changed), all or none (lock.WriteAll, which
// writes only those that changed), and says what it did.
func writePromoted(o *promoteOptions, s streams, env *source.Env, ws []lock.Write, report string, out promoteOutput) error {
	written, _, err := lock.WriteAll(ws)
	if err != nil {
		return withCode(exitInput, err)
	}
	if o.Format == "json" {
		out.Written = slices.Contains(written, env.Path)
		return writeJSON(s.Out, out)
	}
	fmt.Fprint(s.Out, sanitize(strings.TrimRight(report, "\n")+"\n"))
	for _, p := range written {
		fmt.Fprintf(s.Out, "Wrote %s.\n", sanitize(p))
	}
	if !slices.Contains(written, env.Path) {
		fmt.Fprintf(s.Out, "%s is up to date.\n", sanitize(env.Path))
	}
	return nil
}
