package source

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// A floor belongs to what ran on a host, not to the environment the host
// was in: the entries other environments' locks (and the locks of
// environments no longer declared) hold against a host are floors where
// the host is now (Inputs.Elsewhere), and a lock that recorded a host
// that moved away says so (Env.Moved), for a run that would rewrite it.

// MovedHost is a host an environment's lock recorded that is another
// environment's now.
type MovedHost struct {
	Host, Environment string
}

// movedHosts are the hosts the entries of l (e's own lock) were held
// against that cat puts in another environment now, sorted.
func movedHosts(cat *catalogue.Catalogue, e *catalogue.Environment, l *lock.Lock) []MovedHost {
	if l == nil {
		return nil
	}
	var out []MovedHost
	note := func(h string) {
		if slices.Contains(e.Hosts, h) {
			return
		}
		if other := cat.EnvironmentOf(h); other != nil {
			out = append(out, MovedHost{Host: h, Environment: other.Name})
		}
	}
	for _, m := range l.Modules {
		for _, h := range m.Hosts {
			note(h)
		}
		for _, o := range m.Observed {
			note(o.Host)
		}
	}
	slices.SortFunc(out, func(a, b MovedHost) int { return strings.Compare(a.Host, b.Host) })
	return slices.Compact(out)
}

// HeldElsewhere are the entries of the other environments' locks beside
// lockPath held against env's hosts (env nil: a catalogue without
// environments, every host): what ran on a host before it moved into
// env, or that a lock of an environment no longer declared recorded, a
// floor there (Inputs.Elsewhere).
func HeldElsewhere(lockPath string, cat *catalogue.Catalogue, env *catalogue.Environment) ([]resolve.Foreign, error) {
	return (&otherLocks{base: lockPath}).heldOn(cat, env)
}

// otherLocks reads the environments' lock files beside a lock once each,
// to find in them the entries held against another environment's hosts.
type otherLocks struct {
	// base is the lock path environments' files are named after
	// (LockPath); "" when they cannot be found (a lock path not named as
	// LockPath names them).
	base  string
	locks map[string]*lock.Lock
}

// heldOn are the entries of the other environments' locks (modules and
// retired ones), and of the locks of environments the catalogue no
// longer declares (OrphanLocks), held against one of e's hosts (e nil:
// a catalogue without environments, every host): each such host was the
// other environment's when the entry was written, and what ran on it is
// a floor in e now (resolve.Input.Elsewhere). A lock that does not parse
// is a *DiagnosticsError: its floors cannot be known.
func (o *otherLocks) heldOn(cat *catalogue.Catalogue, e *catalogue.Environment) ([]resolve.Foreign, error) {
	if o.base == "" {
		return nil, nil
	}
	var hosts, paths []string
	if e != nil {
		hosts = e.Hosts
	} else {
		for _, h := range cat.Hosts {
			hosts = append(hosts, h.Name)
		}
	}
	for _, other := range cat.Environments {
		if e == nil || other.Name != e.Name {
			paths = append(paths, LockPath(o.base, other.Name))
		}
	}
	paths = append(paths, OrphanLocks(o.base, cat)...)
	var out []resolve.Foreign
	for _, path := range paths {
		l, ok := o.locks[path]
		if !ok {
			old, b, diags := lock.Load(path)
			if diags.HasErrors() {
				return nil, &DiagnosticsError{What: "lockfile", Path: path, Files: map[string]*hcl.File{path: {Bytes: b}}, Diagnostics: diags}
			}
			if o.locks == nil {
				o.locks = map[string]*lock.Lock{}
			}
			o.locks[path], l = old, old
		}
		if l == nil {
			continue
		}
		for _, list := range [][]*lock.Module{l.Modules, l.Retired} {
			for _, m := range list {
				if heldOnAny(m, hosts) {
					out = append(out, resolve.Foreign{Lock: path, Entry: m})
				}
			}
		}
	}
	return out, nil
}

// heldOnAny reports whether entry m was held against one of hosts (not
// against none: such an entry is its own environment's alone).
func heldOnAny(m *lock.Module, hosts []string) bool {
	return slices.ContainsFunc(m.Hosts, func(h string) bool { return slices.Contains(hosts, h) }) ||
		slices.ContainsFunc(m.Observed, func(o lock.Observation) bool { return slices.Contains(hosts, o.Host) })
}
