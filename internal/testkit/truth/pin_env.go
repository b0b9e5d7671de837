package truth

// This file calls pin for histories with environments, as cmd/pin wires
// it: the whole catalogue and every host read, split by
// source.Inputs.Environments (each environment's catalogue view, its own
// hosts, its own lock file read beside the lock path), then package
// resolve per environment, or package promote with the floor rule and
// verifier cmd/pin gives it. With pin.go, the files to rewire when pin's
// API changes.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pin-tool/pin/internal/promote"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// EnvResult is one environment's share of a run.
type EnvResult struct {
	Name string
	Result
}

// EnvRun is a resolve, lock --from-host or resolve MODULE over
// environments: a run writes every environment's lock or none.
type EnvRun struct {
	Envs    []EnvResult
	Written bool
	Text    string
	// Refused: the run would rewrite a lock that records a host moved
	// into an environment it does not decide (source.Moved).
	Refused string
}

// lockPath is the --lock path of a world with environments: each
// environment's lock is source.LockPath beside it.
func (w *World) lockPath() string {
	if w.Dir == "" {
		// (In memory where the machine has a tmpfs: a history writes its
		// locks often.)
		dir := ""
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && os.Getenv("TMPDIR") == "" {
			dir = "/dev/shm"
		}
		d, err := os.MkdirTemp(dir, "pin-truth-")
		if err != nil {
			panic(err)
		}
		w.Dir = d
	}
	return filepath.Join(w.Dir, lock.DefaultPath)
}

// writeLock writes environment env's lock as pin would (only when it
// changed) and keeps its bytes.
func (w *World) writeLock(env string, b []byte) {
	if string(w.Locks[env]) == string(b) {
		return
	}
	if err := os.WriteFile(source.LockPath(w.lockPath(), env), b, 0o644); err != nil {
		panic(err)
	}
	w.Locks[env] = b
}

// inputs are a run's inputs as cmd/pin loads them: the catalogue, every
// host of it read (with start times), the registries; each environment's
// lock is read from its own file.
func (w *World) inputs() *source.Inputs {
	return &source.Inputs{Catalogue: catalogueOf(w), Observed: observed(w, w.catalogueHosts()), Skipped: skipped(w.catalogueHosts())}
}

// envsOf splits in as cmd/pin does: names, or all.
func envsOf(w *World, in *source.Inputs, names []string) []*source.Env {
	envs, err := in.Environments(w.lockPath(), names)
	if err != nil {
		panic(fmt.Sprintf("truth: splitting by environment: %v", err))
	}
	return envs
}

func envInput(w *World, env *source.Env) resolve.Input {
	rin := env.Input(w.Clock)
	rin.Registry = registryOf(w)
	return rin
}

// movedWhy is the rule every command applies (source.Moved): a run
// that rewrites the lock of an environment in envs that still records a
// host now in an environment envs does not decide is refused, nothing
// written. It returns why, or "".
func movedWhy(envs []*source.Env) string {
	if err := source.Moved(envs); err != nil {
		return strings.Join(err.Lines, "; ")
	}
	return ""
}

// runEnvResolve runs "pin resolve", "pin resolve only", "pin resolve
// --environment env" or "pin lock --from-host fromHost" (the host's
// environment alone) with environments.
func runEnvResolve(w *World, fromHost, only, env string) EnvRun {
	in := w.inputs()
	var names []string
	if fromHost != "" {
		names = []string{w.EnvOf(fromHost).Name}
	}
	if env != "" {
		names = []string{env}
	}
	envs := envsOf(w, in, names)
	if why := movedWhy(envs); why != "" {
		return EnvRun{Refused: why, Text: "refused: " + why}
	}
	out := EnvRun{Written: true}
	var text strings.Builder
	for _, env := range envs {
		rin := envInput(w, env)
		if only != "" {
			if env.Catalogue.Module(only) == nil {
				continue // "pin resolve MODULE" names none of its modules
			}
			rin.Record.Only = []string{only}
		}
		if fromHost != "" {
			rin.Mode, rin.Record.Host = resolve.ModeFromHost, fromHost
		}
		r := resultOf(resolve.Resolve(context.Background(), rin))
		out.Envs = append(out.Envs, EnvResult{Name: env.Name, Result: r})
		out.Written = out.Written && r.Written
		fmt.Fprintf(&text, "environment %s:\n%s", env.Name, r.Text)
	}
	out.Text = text.String()
	return out
}

// Promotion is what "pin promote" decided.
type Promotion struct {
	// Refused lists the refusal kinds by module; Err is an error that
	// stopped it (nothing promoted).
	Refused map[string]string
	Err     string
	// Entries are the modules of the unit promoted, with their new
	// entries (those that did not change included); Skipped the modules
	// an automatic promotion left, with why (their kind).
	Entries map[string]Entry
	Skipped map[string]string
	// Old is TO's lock as it was read; Lock is TO's lock as the result
	// gives it (the old one when refused): nil when there is none.
	Old, Lock []byte
	// Written: pin promote would write Lock (promoted, and changed).
	Written bool
	// Moved: refused as every command refuses it (source.Moved); Err says why.
	Moved bool
	Text  string
}

// runPromote runs "pin promote from to [modules...] [--pick pick]", as
// cmd/pin wires it, at the world's clock.
func runPromote(w *World, from, to string, modules []string, pick string) Promotion {
	in := w.inputs()
	cat := in.Catalogue
	toEnv := envsOf(w, in, []string{to})[0]
	if why := movedWhy([]*source.Env{toEnv}); why != "" {
		return Promotion{Err: why, Moved: true, Text: "refused: " + why}
	}
	rin := envInput(w, toEnv)
	pin := promote.Input{Catalogue: cat, From: envOf(w.Env(from)), To: envOf(w.Env(to)), Observed: in.Observed, Record: in.Record(), Old: toEnv.Inputs.Lock,
		Modules: modules, Now: w.Clock, Floors: promote.ResolveFloors{In: rin}, Held: promote.ResolveFloors{In: rin}.Held, Verifier: promote.ResolveVerifier{In: rin}}
	if pick != "" {
		pin.Pick = &promote.Pick{Ref: pick, Reason: "picked by the truth test"}
	}
	out := Promotion{Refused: map[string]string{}, Entries: map[string]Entry{}, Skipped: map[string]string{}}
	if l := toEnv.Inputs.Lock; l != nil {
		out.Old = lock.Format(l)
	}
	res, err := promote.Promote(context.Background(), pin)
	if err != nil {
		out.Err = err.Error()
		out.Text = "error: " + out.Err
		return out
	}
	var text strings.Builder
	for _, r := range res.Refusals {
		out.Refused[r.Module] = string(r.Kind)
		text.WriteString(r.Error() + "\n")
	}
	for _, s := range res.Skipped {
		out.Skipped[s.Module] = string(s.Kind)
		fmt.Fprintf(&text, "skipped %s (%s): %s\n", s.Module, s.Kind, s.Why)
	}
	if l := res.Lock(); l != nil {
		out.Lock = lock.Format(l)
		entries := lockEntries(out.Lock)
		for _, e := range res.Entries {
			out.Entries[e.Module] = entries[e.Module]
		}
	}
	out.Written = !res.Refused() && res.Lock() != nil && lock.Sum(res.Lock()) != toEnv.LockSum
	fmt.Fprintf(&text, "release %s\n%s", res.Release, out.Lock)
	out.Text = text.String()
	return out
}

func envOf(e *Env) promote.Env {
	return promote.Env{Name: e.Name, Hosts: e.Hosts, From: e.From, Soak: e.Soak}
}

// runLift runs "pin promote --lift from to module" (promote.LiftAll, as
// cmd/pin does): by environment, the locks it writes, TO's with the hold
// lifted and any other whose hold the module would take over again; or
// an error (the module is not held: nothing written).
func runLift(w *World, to, module string) (map[string][]byte, error) {
	toEnv := envsOf(w, w.inputs(), []string{to})[0]
	if why := movedWhy([]*source.Env{toEnv}); why != "" {
		return nil, &movedError{why}
	}
	ws, err := promote.LiftAll(envInput(w, toEnv), toEnv.Path, []string{module})
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, x := range ws {
		out[w.envOfLock(x.Path)] = lock.Format(x.Lock)
	}
	return out, nil
}

// envOfLock is the environment whose lock file is path: a declared one's,
// or an orphan's (its name from the file name, source.LockPath).
func (w *World) envOfLock(path string) string {
	for name := range w.Locks {
		if source.LockPath(w.lockPath(), name) == path {
			return name
		}
	}
	for _, e := range w.Envs {
		if source.LockPath(w.lockPath(), e.Name) == path {
			return e.Name
		}
	}
	panic(fmt.Sprintf("truth: %s is no environment's lock", path))
}

// runEnvPlan runs "pin plan host": the host judged by its environment's
// lock.
func runEnvPlan(w *World, hostName string) ([]Cutover, error) {
	// (pin plan HOST reads that host alone.)
	in := &source.Inputs{Catalogue: catalogueOf(w), Observed: observed(w, []*Host{w.Host(hostName)})}
	rin := envInput(w, envsOf(w, in, []string{w.EnvOf(hostName).Name})[0])
	rin.Record.Host = hostName
	cuts, err := resolve.PlanCutover(context.Background(), rin)
	var out []Cutover
	for _, c := range cuts {
		out = append(out, Cutover{Module: c.Module, Host: c.Observation.Host, Verdict: string(c.Verdict)})
	}
	return out, err
}

// runEnvOutdated runs "pin outdated": each environment's modules'
// statuses, by environment.
func runEnvOutdated(w *World) map[string]map[string][]string {
	in := w.inputs()
	out := map[string]map[string][]string{}
	for _, env := range envsOf(w, in, nil) {
		st := map[string][]string{}
		for _, s := range resolve.Outdated(context.Background(), envInput(w, env), nil) {
			for _, x := range s.Statuses {
				st[s.Module.Name] = append(st[s.Module.Name], string(x))
			}
		}
		out[env.Name] = st
	}
	return out
}

// movedError is a run refused as every command refuses it (source.Moved).
type movedError struct{ why string }

func (e *movedError) Error() string { return "refused: " + e.why }
