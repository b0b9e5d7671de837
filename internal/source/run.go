package source

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/resolve"
)

// Selection is what a command that writes locks names (pin resolve, pin
// lock --from-host): the lock beside which every environment's lock is,
// the environments it decides, the one host it read, the modules it
// decides, and the time that bounds plausible build dates.
type Selection struct {
	Lock string
	// Environments are those named (--environment); none: every one,
	// or with Host, Host's.
	Environments []string
	// Host, when not "", is the one host read ("pin lock --from-host"):
	// the run decides its environment, in resolve.ModeFromHost.
	Host string
	// Modules are the modules named ("pin resolve MODULE…"); none: every
	// module.
	Modules []string
	Now     time.Time
}

// Run is what a run that writes locks decides, worked out in one place
// before anything is asked of a registry: its environments, each with
// the modules of it the run names, and the refusals its locks' records
// call for. The refusals are values: the command says which it honours
// (a --check writes nothing, and so drops no moved host's floor).
type Run struct {
	// Envs are the environments the run decides, in name order (Inputs.
	// Environments); each one's Only names the modules it decides. Nil
	// when Orphans is set.
	Envs []*Env
	// Orphans refuses any write while the lock of an environment the
	// catalogue no longer declares is beside the lock; nothing else is
	// worked out then.
	Orphans *OrphanError
	// Moved refuses a write that would drop the floor of a host moved
	// to an environment the run does not decide.
	Moved *MovedError

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
	if err := Orphans(sel.Lock, in.Catalogue); err != nil {
		return &Run{Orphans: err}, nil
	}
	envs, err := in.EnvironmentsFor(sel.Lock, sel.Environments, sel.Host)
	if err != nil {
		return nil, err
	}
	r := &Run{Envs: envs, Moved: Moved(envs), now: sel.Now}
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
