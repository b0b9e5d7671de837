package source

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/resolve"
)

// Selection is what a command names: the lock beside which every
// environment's lock is, the environments it decides, the one host it
// read, the modules it decides, and the time that bounds plausible build
// dates.
type Selection struct {
	Lock string
	// Environments are those named (--environment); none: every one,
	// or with Host, Host's.
	Environments []string
	// Host, when not "", is the one host read ("pin lock --from-host",
	// "pin plan HOST"): the run is about its environment, decided in
	// resolve.ModeFromHost.
	Host string
	// Modules are the modules named ("pin resolve MODULE…"); none: every
	// module.
	Modules []string
	// ReadOnly is a run that writes no lock (pin plan, status, outdated,
	// export, verify): an orphan lock refuses nothing then, so the
	// environments are worked out beside it too, and Orphans names it.
	ReadOnly bool
	Now      time.Time
}

// Run is what a run decides, worked out in one place (Select,
// SelectTarget) before anything is asked of a registry: its
// environments, each with the modules of it the run names, and the
// refusals its locks' records call for. The refusals are values: the
// command says which it honours (a --check writes nothing, and so drops
// no moved host's floor; a ReadOnly run warns of an orphan lock).
type Run struct {
	// Envs are the environments the run decides, in name order (Inputs.
	// Environments); each one's Only names the modules it decides. Nil
	// when Orphans is set, unless the selection is ReadOnly.
	Envs []*Env
	// Orphans refuses any write while the lock of an environment the
	// catalogue no longer declares is beside the lock; nothing else is
	// worked out then, unless the selection is ReadOnly.
	Orphans *OrphanError
	// Moved refuses a write that would drop the floor of a host moved
	// to an environment the run does not decide.
	Moved *MovedError
	// From and To are a promotion's environments (Target.From); To's
	// share of the run is Envs[0].
	From, To *catalogue.Environment

	mode resolve.Mode
	now  time.Time
}

// Select works out a run's environments from what the command named:
// a module name the catalogue does not declare is an
// *UnknownModulesError; an environment it does not declare an
// *UnknownEnvironmentError; a host in another environment than those
// named a *HostEnvironmentError; a named module in none of the
// environments decided a *NotInEnvironmentsError; a lock that does not
// parse a *DiagnosticsError.
func (in *Inputs) Select(sel Selection) (*Run, error) {
	if err := CheckModules(in.Catalogue, sel.Modules); err != nil {
		return nil, err
	}
	orphans := Orphans(sel.Lock, in.Catalogue)
	if orphans != nil && !sel.ReadOnly {
		return &Run{Orphans: orphans}, nil
	}
	envs, err := in.EnvironmentsFor(sel.Lock, sel.Environments, sel.Host)
	if err != nil {
		return nil, err
	}
	r := &Run{Envs: envs, Orphans: orphans, Moved: Moved(envs), now: sel.Now}
	if sel.Host != "" {
		r.mode = resolve.ModeFromHost
	}
	if len(sel.Modules) > 0 {
		if err := named(envs, sel.Modules); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Target is what a command about one environment's lock names (pin
// promote, pin propose): the lock, the environment, the environment a
// promotion comes from, the modules named.
type Target struct {
	// Lock is the lock beside which every environment's lock is, or
	// with Own the environment's own file itself (pin propose works on
	// a work tree's copy of it), read as it is and seeded from no other.
	Lock string
	Own  bool
	// Environment is the environment; "" for a catalogue without
	// environments.
	Environment string
	// From, when not "", makes the run a promotion from environment From
	// to Environment (pin promote FROM TO): both must be declared and
	// differ, and Environment's from must name From.
	From string
	// Modules are the modules named, each a module of the catalogue; a
	// promotion says itself which of them it promotes (no Env's Only is
	// set).
	Modules []string
	Now     time.Time
}

// SelectTarget is Select for a command about one environment's lock: its
// share of the run (Envs[0]), a promotion's pair (From, To), and the
// orphan-lock and moved-host refusals, as values, in the order Select
// works them out. A promotion between environments that may not be
// promoted between is a *PromotionPairError.
func (in *Inputs) SelectTarget(t Target) (*Run, error) {
	if err := CheckModules(in.Catalogue, t.Modules); err != nil {
		return nil, err
	}
	base := t.Lock
	if t.Own {
		base = BaseLockPath(t.Lock, t.Environment)
	}
	if orphans := Orphans(base, in.Catalogue); orphans != nil {
		return &Run{Orphans: orphans}, nil
	}
	r := &Run{now: t.Now}
	if t.From != "" {
		var err error
		if r.From, r.To, err = pair(in.Catalogue, t.From, t.Environment); err != nil {
			return nil, err
		}
	}
	e, err := in.environment(t.Environment, t.Lock, t.Own)
	if err != nil {
		return nil, err
	}
	r.Envs = []*Env{e}
	r.Moved = Moved(r.Envs)
	return r, nil
}

// environment is environment name's share of the run: read from
// lockPath itself when own, else from its file beside lockPath.
func (in *Inputs) environment(name, lockPath string, own bool) (*Env, error) {
	if own {
		return in.Environment(name, lockPath)
	}
	envs, err := in.Environments(lockPath, []string{name})
	if err != nil {
		return nil, err
	}
	return envs[0], nil
}

// pair is a promotion's FROM and TO, checked: both declared, not the
// same, and TO's from names FROM.
func pair(cat *catalogue.Catalogue, from, to string) (*catalogue.Environment, *catalogue.Environment, error) {
	var known []string
	for _, e := range cat.Environments {
		known = append(known, e.Name)
	}
	for _, n := range []string{from, to} {
		if cat.Environment(n) == nil {
			return nil, nil, &UnknownEnvironmentError{Environment: n, Known: known}
		}
	}
	if from == to {
		return nil, nil, &PromotionPairError{From: from, To: to}
	}
	if err := cat.CheckPromotion(from, to); err != nil {
		return nil, nil, &PromotionPairError{From: from, To: to, Err: err}
	}
	return cat.Environment(from), cat.Environment(to), nil
}

// PromotionPairError is a promotion between environments that may not
// be promoted between: the same one twice, or against the catalogue's
// from (Err, a *catalogue.PromotionError).
type PromotionPairError struct {
	From, To string
	Err      error
}

func (e *PromotionPairError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("promote %s %s: name two environments", e.From, e.To)
	}
	return fmt.Sprintf("promote %s %s: %v", e.From, e.To, e.Err)
}

func (e *PromotionPairError) Unwrap() error { return e.Err }

// Decides reports whether the run decides anything in e: every module,
// or some of those it named.
func (e *Env) Decides() bool { return e.Only == nil || len(e.Only) > 0 }

// Input is the resolve.Input environment e of r is decided with: its
// record names the modules decided (resolve.Record.Only).
func (r *Run) Input(e *Env) resolve.Input {
	rin := e.Input(r.now)
	rin.Mode = r.mode
	return rin
}

// named sets each environment's Only to the named modules in its view,
// and refuses a name that is in none of them: nothing would be decided
// for it, silently.
func named(envs []*Env, modules []string) error {
	for _, e := range envs {
		e.Only = []string{}
		for _, n := range modules {
			if e.Catalogue.Module(n) != nil {
				e.Only = append(e.Only, n)
			}
		}
	}
	for _, n := range modules {
		if !slices.ContainsFunc(envs, func(e *Env) bool { return slices.Contains(e.Only, n) }) {
			var names []string
			for _, e := range envs {
				names = append(names, e.Name)
			}
			return &NotInEnvironmentsError{Module: n, Environments: names}
		}
	}
	return nil
}

// EnvironmentsFor is Environments for a command about one host: with
// host set, the environment of the run is host's (names may name it,
// and no other).
func (in *Inputs) EnvironmentsFor(lockPath string, names []string, host string) ([]*Env, error) {
	if host != "" {
		if e := in.Catalogue.EnvironmentOf(host); e != nil {
			if len(names) > 0 && !slices.Equal(names, []string{e.Name}) {
				return nil, &HostEnvironmentError{Host: host, Environment: e.Name}
			}
			names = []string{e.Name}
		}
	}
	return in.Environments(lockPath, names)
}

// CheckModules refuses names that are not modules of cat (an
// *UnknownModulesError), nil when every one is.
func CheckModules(cat *catalogue.Catalogue, names []string) error {
	unknown := resolve.UnknownModules(cat, names)
	if len(unknown) == 0 {
		return nil
	}
	var known []string
	for _, m := range cat.Modules {
		known = append(known, m.Name)
	}
	return &UnknownModulesError{Unknown: unknown, Known: known}
}

// UnknownModulesError is module names a command was given that are not
// modules of the catalogue.
type UnknownModulesError struct {
	// Unknown are the names, in the order given, each once; Known the
	// catalogue's modules, in its order.
	Unknown, Known []string
}

func (e *UnknownModulesError) Error() string {
	var q []string
	for _, n := range e.Unknown {
		q = append(q, fmt.Sprintf("%q", n))
	}
	what := "module"
	if len(q) > 1 {
		what = "modules"
	}
	return fmt.Sprintf("no %s %s in the catalogue; its modules are %s", what, joinAnd(q), strings.Join(e.Known, ", "))
}

// HostEnvironmentError is a command about one host that names an
// environment the host is not in.
type HostEnvironmentError struct {
	Host, Environment string
}

func (e *HostEnvironmentError) Error() string {
	return fmt.Sprintf("host %s is in environment %q: drop --environment, or name %q alone", e.Host, e.Environment, e.Environment)
}

// NotInEnvironmentsError is a module named that is in none of the
// environments a run decides.
type NotInEnvironmentsError struct {
	Module       string
	Environments []string
}

func (e *NotInEnvironmentsError) Error() string {
	return fmt.Sprintf("module %q is not in environment %s: name its environment with --environment, or drop it", e.Module, joinAnd(e.Environments))
}
