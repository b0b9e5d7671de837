package promote

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// KindUnhealthy: a container of the module on a host of FROM does not
// run healthy (exited, dead, restarting or paused; its health check
// failing or not yet passed; its pod not Ready; restarted by its engine
// within TO's soak).
const KindUnhealthy Kind = "unhealthy"

// StatusUnhealthy: a container of the module in the environment does not
// run healthy, as promotion from it would find (Unhealthy).
const StatusUnhealthy Status = "unhealthy"

// Finding is one container whose engine reports it does not run healthy.
type Finding struct {
	Where string // "host/container"
	// Requirement is what it fails (catalogue.RequireRunning, …).
	Requirement string
	// Reported says what the engine reported, and since when where it
	// says: "exited (exit code 137) since 2026-12-01T09:00:00Z".
	Reported string
}

func (f Finding) String() string { return f.Where + " " + f.Reported }

// Unhealthy holds every container of the module that env's hosts report
// (obs) against requirements (catalogue.Requirements' words; a
// restart counts within soak, and not at all with no soak), and returns
// those that fail one, in obs's order, and, per container, what was
// seen in words ("s1/app: running, healthy"), for the promoted block. A
// container never started, an ephemeral one and a workload scaled to
// zero run nothing of the module and are not held. A requirement not
// asked is still seen: its failure is written, as not required.
//
// What a host did not report (a snapshot or observation written before
// health was read) is not a failure: the words say it was not reported.
func Unhealthy(env Env, obs []observe.Observation, require []string, soak time.Duration, now time.Time) (failed []Finding, seen []string) {
	asked := func(r string) bool { return require == nil || slices.Contains(require, r) }
	for _, o := range obs {
		if !env.has(o.Host) || o.State == host.StateCreated || o.State == observe.StateScaledToZero || o.Ephemeral() {
			continue
		}
		var words []string
		add := func(r, reported string) {
			if asked(r) {
				failed = append(failed, Finding{Where: o.Where(), Requirement: r, Reported: reported})
				words = append(words, reported)
				return
			}
			words = append(words, reported+" (not required)")
		}
		h := o.Health
		if o.State != host.StateRunning {
			add(catalogue.RequireRunning, ended(o))
		} else {
			words = append(words, "running")
		}
		switch h.Check {
		case host.HealthHealthy:
			words = append(words, "healthy")
		case host.HealthUnhealthy, host.HealthStarting:
			add(catalogue.RequireHealthy, "health check "+h.Check+since(h.Since))
		}
		switch {
		case h.Ready == nil:
		case *h.Ready:
			words = append(words, "Ready")
		default:
			add(catalogue.RequireReady, "pod not Ready"+since(h.Since))
		}
		if o.RestartCount > 0 && soak > 0 && !o.StartedAt.IsZero() && now.Sub(o.StartedAt) < soak {
			add(catalogue.RequireNoRestart, fmt.Sprintf("restarted %s by its engine, last started %s, within the soak of %s", times(o.RestartCount), lock.FormatTime(o.StartedAt), soak))
		}
		if h.Check == "" && h.Ready == nil && o.State == host.StateRunning {
			words = append(words, "health not reported")
		}
		seen = append(seen, o.Where()+": "+strings.Join(words, ", "))
	}
	slices.Sort(seen)
	return failed, slices.Compact(seen)
}

// ended says what the engine reports of a container that does not run:
// its state, the exit code of its last run and when it ended.
func ended(o observe.Observation) string {
	s := o.State
	if h := o.Health; h.ExitCode != 0 || !h.FinishedAt.IsZero() {
		s += fmt.Sprintf(" (exit code %d)", h.ExitCode)
	}
	if o.RestartCount > 0 {
		s += ", restarted " + times(o.RestartCount) + " by its engine"
	}
	return s + since(o.Health.FinishedAt)
}

func since(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " since " + lock.FormatTime(t)
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// healthGate refuses module m's promotion unless every container of it
// on a host of FROM runs healthy, as TO requires (TO's require, TO's
// soak for restarts); it returns what it saw of each, for the promoted
// block. A FROM that runs nothing of the module is for fromBuild to say.
func healthGate(in Input, m *catalogue.Module, obs []observe.Observation) ([]string, *Refusal) {
	failed, seen := Unhealthy(in.From, obs, in.To.Require, in.To.Soak, in.Now)
	if len(failed) == 0 || !slices.ContainsFunc(obs, func(o observe.Observation) bool { return in.From.has(o.Host) && o.Running() }) {
		return seen, nil
	}
	var why []string
	for _, f := range failed {
		why = append(why, f.String())
	}
	relax := ""
	if in.To.Require == nil || len(in.To.Require) > 1 {
		relax = fmt.Sprintf(`; where %s's hosts have no health checks or readiness probes, %s may require less (require = ["running"] in its environment block)`, in.From.Name, in.To.Name)
	}
	required := in.To.Require
	if required == nil {
		required = catalogue.Requirements
	}
	return seen, &Refusal{Module: m.Name, Kind: KindUnhealthy,
		Why: fmt.Sprintf("a build is promoted only once it runs healthy on every host of %s that runs it (%s requires %s): %s", in.From.Name, in.To.Name, strings.Join(required, ", "), strings.Join(why, "; ")),
		Fix: fmt.Sprintf("fix the build or its hosts in %s, and promote once every container of it runs healthy there%s", in.From.Name, relax)}
}
