package source

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// LockPath is the lock file of environment env beside the lock at path:
// path itself when env is "" (a catalogue without environments, whose
// lock's name and bytes are what they always were), else path with
// ".<env>" before its ".hcl" ("pin.lock.hcl" → "pin.lock.staging.hcl";
// a path without ".hcl" gets ".<env>" after it).
//
// One file per environment, not one file of per-environment entries: a
// promotion changes the one file of the environment it promotes to (a
// pull request touches only what that environment's owners review), a
// run refused in one environment leaves the others' bytes as they are,
// and package lock, its monotone rule and its matching of previous
// entries stay one code path, each environment resolved as a catalogue
// of its own.
func LockPath(path, env string) string {
	if env == "" {
		return path
	}
	if base, ok := strings.CutSuffix(path, ".hcl"); ok {
		return base + "." + env + ".hcl"
	}
	return path + "." + env
}

// BaseLockPath is the lock path that environment env's lock file lk is
// named after (LockPath's inverse): lk itself for env "", "" when lk is
// not named as LockPath names it.
func BaseLockPath(lk, env string) string {
	if env == "" {
		return lk
	}
	if base, ok := strings.CutSuffix(lk, "."+env+".hcl"); ok {
		return base + ".hcl"
	}
	if base, ok := strings.CutSuffix(lk, "."+env); ok {
		return base
	}
	return ""
}

// Env is one environment's share of a run.
type Env struct {
	// Name is the environment's name; "" for a catalogue without
	// environments (its one implicit environment).
	Name string
	// Path is the path of the environment's lock file (LockPath).
	Path string
	// Seeded is the path of the lock the previous entries were read from
	// when it is not Path: the environment's file did not exist yet, and
	// the lock of the catalogue before it declared environments did.
	Seeded string
	// Moved are the hosts of other environments that the environment's
	// own lock's entries were held against: hosts that moved since it was
	// written. A run that rewrites this lock drops them, so it must decide
	// their environments too (whose locks take the floors over, through
	// Elsewhere), or refuse. None for a seeded lock.
	Moved []MovedHost
	// Inputs are the run's as the environment sees them: the catalogue's
	// view (catalogue.ForEnvironment), its previous lock and that lock's
	// sum, what its hosts answered (and only its hosts), the registries
	// of the run.
	*Inputs
}

// UnknownEnvironmentError is an environment named on the command line
// that the catalogue does not declare.
type UnknownEnvironmentError struct {
	Environment string
	Known       []string
}

func (e *UnknownEnvironmentError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("environment %q is not in the catalogue, which declares no environments (its one lock is every host's)", e.Environment)
	}
	return fmt.Sprintf("environment %q is not in the catalogue (environments: %s)", e.Environment, strings.Join(e.Known, ", "))
}

// Environments splits a run's inputs by environment, in name order: for
// each environment (or those named, when names is not empty), the
// catalogue as it sees it, the previous lock read from its own file
// beside lockPath, and what its own hosts answered. Each environment's
// floors are then its own hosts and its own previous entries. A
// catalogue without environments is one Env of the inputs as they are,
// named "", its lock lockPath.
//
// An environment whose lock file does not exist yet takes its previous
// entries from the lock at lockPath (the catalogue's before it declared
// environments): the entries of its modules, and the retired entries
// held against its hosts. Declaring environments frees no floor.
//
// A lock file that does not parse is a *DiagnosticsError; a name that is
// not an environment an *UnknownEnvironmentError.
func (in *Inputs) Environments(lockPath string, names []string) ([]*Env, error) {
	cat := in.Catalogue
	var known []string
	for _, e := range cat.Environments {
		known = append(known, e.Name)
	}
	for _, n := range names {
		if cat.Environment(n) == nil {
			return nil, &UnknownEnvironmentError{Environment: n, Known: known}
		}
	}
	others := &otherLocks{base: lockPath}
	if len(cat.Environments) == 0 {
		// Environment locks beside it are orphans (every environment
		// block removed): what they recorded on a host is a floor here.
		all, err := in.everyHost(others)
		if err != nil {
			return nil, err
		}
		return []*Env{{Path: lockPath, Inputs: all}}, nil
	}
	var out []*Env
	for _, e := range cat.Environments {
		if len(names) > 0 && !slices.Contains(names, e.Name) {
			continue
		}
		view := cat.ForEnvironment(e.Name, labelled(cat, in.Observed, e)...)
		el, err := EnvironmentLock(lockPath, cat, view, in.Lock)
		if err != nil {
			return nil, err
		}
		elsewhere, err := others.heldOn(cat, e)
		if err != nil {
			return nil, err
		}
		env := &Env{Name: e.Name, Path: el.Path, Seeded: el.Seeded, Inputs: &Inputs{
			Catalogue:  view,
			Lock:       el.Lock,
			LockSum:    el.Sum,
			Elsewhere:  elsewhere,
			Observed:   hostsOf(in.Observed, e.Hosts),
			Skipped:    skippedOf(in.Skipped, e.Hosts),
			Host:       in.Host,
			Registries: in.Registries,
		}}
		if el.Seeded == "" {
			env.Moved = movedHosts(cat, e, el.Lock)
		}
		out = append(out, env)
	}
	return out, nil
}

// Environment is environment name's share of inputs whose Lock was read
// from that environment's own lock file (a command given its path, such
// as pin propose in a checkout of the base): as Environments, without
// reading another lock. A catalogue without environments, and name "",
// is the inputs as they are.
func (in *Inputs) Environment(name, lockPath string) (*Env, error) {
	cat := in.Catalogue
	if name == "" && len(cat.Environments) == 0 {
		all, err := in.everyHost(&otherLocks{base: lockPath})
		if err != nil {
			return nil, err
		}
		return &Env{Path: lockPath, Inputs: all}, nil
	}
	e := cat.Environment(name)
	if e == nil {
		var known []string
		for _, e := range cat.Environments {
			known = append(known, e.Name)
		}
		return nil, &UnknownEnvironmentError{Environment: name, Known: known}
	}
	// The other environments' locks are beside lockPath, named as
	// LockPath names them.
	elsewhere, err := (&otherLocks{base: BaseLockPath(lockPath, name)}).heldOn(cat, e)
	if err != nil {
		return nil, err
	}
	return &Env{Name: name, Path: lockPath, Moved: movedHosts(cat, e, in.Lock), Inputs: &Inputs{
		Catalogue:  cat.ForEnvironment(name, labelled(cat, in.Observed, e)...),
		Lock:       in.Lock,
		LockSum:    in.LockSum,
		Elsewhere:  elsewhere,
		Observed:   hostsOf(in.Observed, e.Hosts),
		Skipped:    skippedOf(in.Skipped, e.Hosts),
		Host:       in.Host,
		Registries: in.Registries,
	}}, nil
}

// everyHost is in as the one implicit environment of a catalogue without
// environments sees it: with what orphan environment locks recorded on
// its hosts (Elsewhere).
func (in *Inputs) everyHost(others *otherLocks) (*Inputs, error) {
	elsewhere, err := others.heldOn(in.Catalogue, nil)
	if err != nil {
		return nil, err
	}
	all := *in
	all.Elsewhere = elsewhere
	return &all, nil
}

// skippedOf are the skipped hosts among hosts; nil when none is.
func skippedOf(all map[string]error, hosts []string) map[string]error {
	var out map[string]error
	for h, err := range all {
		if slices.Contains(hosts, h) {
			if out == nil {
				out = map[string]error{}
			}
			out[h] = err
		}
	}
	return out
}

// EnvLock is an environment's previous lock.
type EnvLock struct {
	// Path is the environment's lock file; Sum the SHA-256 of its bytes
	// (of none when there is no file).
	Path string
	Sum  [sha256.Size]byte
	Lock *lock.Lock
	// Seeded is the lock the entries were read from when not Path (see
	// Inputs.Environments).
	Seeded string
}

// EnvironmentLock reads the previous lock of the environment whose view
// of catalogue cat is view (catalogue.ForEnvironment), from its file
// beside lockPath; when there is no file yet, from all, the lock at
// lockPath, as Inputs.Environments says. A lock that does not parse is a
// *DiagnosticsError.
func EnvironmentLock(lockPath string, cat, view *catalogue.Catalogue, all *lock.Lock) (*EnvLock, error) {
	e := view.Environments[0]
	path := LockPath(lockPath, e.Name)
	old, oldBytes, diags := lock.Load(path)
	if diags.HasErrors() {
		return nil, &DiagnosticsError{What: "lockfile", Path: path, Files: map[string]*hcl.File{path: {Bytes: oldBytes}}, Diagnostics: diags}
	}
	out := &EnvLock{Path: path, Sum: sha256.Sum256(oldBytes), Lock: old}
	if oldBytes == nil && all != nil && len(all.Modules)+len(all.Retired) > 0 {
		out.Lock, out.Seeded = seed(all, cat, view, e.Hosts), lockPath
	}
	return out, nil
}

// seed is the previous lock of an environment whose file does not exist
// yet, out of the lock all of the catalogue before it declared
// environments: the entries of the environment's modules, and those of
// modules gone from the catalogue (retired, or not yet) that were held
// against one of its hosts or against none. The hosts line keeps the
// environment's hosts.
func seed(all *lock.Lock, cat, view *catalogue.Catalogue, hosts []string) *lock.Lock {
	out := &lock.Lock{}
	for _, h := range all.Hosts {
		if slices.Contains(hosts, h) {
			out.Hosts = append(out.Hosts, h)
		}
	}
	for _, m := range all.Modules {
		if view.Module(m.Name) != nil || cat.Module(m.Name) == nil && heldOn(m, hosts) {
			out.Modules = append(out.Modules, m)
		}
	}
	for _, m := range all.Retired {
		if heldOn(m, hosts) {
			out.Retired = append(out.Retired, m)
		}
	}
	return out
}

// heldOn reports whether entry m was held against one of hosts, or
// against no host at all (then it is every environment's).
func heldOn(m *lock.Module, hosts []string) bool {
	if len(m.Hosts) == 0 && len(m.Observed) == 0 {
		return true
	}
	return heldOnAny(m, hosts)
}

// hostsOf is what hosts answered, of all that were read.
func hostsOf(all observe.Observed, hosts []string) observe.Observed {
	out := observe.Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}}
	for _, h := range hosts {
		if s, ok := all.Snapshots[h]; ok {
			out.Snapshots[h] = s
		}
		if err, ok := all.Errors[h]; ok {
			out.Errors[h] = err
		}
	}
	out.Index()
	return out
}

// labelled are the modules a pin.module label places on one of e's
// hosts, whatever their runs_on: each such container is a floor of e's
// lock for its module, so the module is in e's view.
func labelled(cat *catalogue.Catalogue, seen observe.Observed, e *catalogue.Environment) []string {
	var out []string
	for _, h := range e.Hosts {
		s := seen.Snapshots[h]
		if s == nil {
			continue
		}
		for _, c := range s.Containers {
			if n := c.Labels[catalogue.ModuleLabel]; n != "" && cat.Module(n) != nil {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// OrphanLocks are the environment lock files beside lockPath
// (pin.lock.NAME.hcl) of environments cat does not declare: an
// environment removed, or renamed, or every environment block removed.
// Their floors would count in no lock; a run that writes must not go on
// as if they were not there. Sorted.
func OrphanLocks(lockPath string, cat *catalogue.Catalogue) []string {
	base, ok := strings.CutSuffix(filepath.Base(lockPath), ".hcl")
	if !ok {
		return nil
	}
	dir := filepath.Dir(lockPath)
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok {
			continue
		}
		if env, ok := strings.CutSuffix(name, ".hcl"); ok && environmentName.MatchString(env) && cat.Environment(env) == nil && !e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// environmentName is what catalogue allows an environment to be called.
var environmentName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// View is one environment's share of the record for an enforcement
// point, which judges hosts as they ask rather than reading them first:
// the environment (nil for a catalogue without environments), the
// catalogue's view of it (every module, its runs_on limited to the
// environment's hosts, so that a pin.module label still covers), its
// lock, and other locks' entries held against its hosts.
type View struct {
	Env       *catalogue.Environment
	Catalogue *catalogue.Catalogue
	Lock      *lock.Lock
	Elsewhere []resolve.Foreign
}

// Views are the views of cat's environments, each with its lock beside
// lockPath (old is the lock at lockPath); for a catalogue without
// environments, one view: cat and old, with what locks of environments
// no longer declared recorded on its hosts.
func Views(lockPath string, cat *catalogue.Catalogue, old *lock.Lock) ([]View, error) {
	if len(cat.Environments) == 0 {
		elsewhere, err := HeldElsewhere(lockPath, cat, nil)
		if err != nil {
			return nil, err
		}
		return []View{{Catalogue: cat, Lock: old, Elsewhere: elsewhere}}, nil
	}
	var all []string
	for _, m := range cat.Modules {
		all = append(all, m.Name)
	}
	var out []View
	for _, env := range cat.Environments {
		view := cat.ForEnvironment(env.Name, all...)
		el, err := EnvironmentLock(lockPath, cat, view, old)
		if err != nil {
			return nil, err
		}
		elsewhere, err := HeldElsewhere(lockPath, cat, env)
		if err != nil {
			return nil, err
		}
		out = append(out, View{Env: env, Catalogue: view, Lock: el.Lock, Elsewhere: elsewhere})
	}
	return out, nil
}
