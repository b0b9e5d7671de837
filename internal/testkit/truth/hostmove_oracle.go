package truth

import (
	"fmt"
	"slices"

	"github.com/pin-tool/pin/lock"
)

// CheckMoved: a host that moved into an environment brought its floors:
// the environment's lock never names, for a module that runs on the
// host, an image truly older than what ran there while the host was in
// the other environment (seen by a step that wrote that one's lock).
const CheckMoved = "moved-host"

// hostFloor is what ran of a module on a host, as the oracle holds it:
// the truly newest build a step that wrote the lock of the host's
// environment then saw there.
type hostFloor struct {
	floor
	env string // the environment the host was in
}

// recordHost raises the floors of m on the hosts of ss by what a step
// that wrote env's lock saw there. Only steps that resolve count (a
// promotion's reading of TO's hosts is not held against pin here: its
// floors are TO's, checked by envPromote).
func (r *Runner) recordHost(env string, m *Module, ss []seen) {
	if r.hostFloors == nil {
		r.hostFloors = map[string]map[string]hostFloor{}
	}
	for _, s := range ss {
		if !Floor(s.ctr.State) {
			continue
		}
		byMod := r.hostFloors[s.host]
		if byMod == nil {
			byMod = map[string]hostFloor{}
			r.hostFloors[s.host] = byMod
		}
		if old, ok := byMod[m.Name]; !ok || s.build.Rank > old.rank {
			byMod[m.Name] = hostFloor{floor{s.build.Rank, fmt.Sprintf("%s, seen at op %d while %s was in %s", s, r.at, s.host, env)}, env}
		}
	}
}

// hostEvent forgets the floors of a module on a host it leaves: no module
// takes over what ran there (a module that joins the host later starts
// afresh, as pin's takeover does not reach it either).
func (r *Runner) hostEvent(o Op) {
	if o.Kind == OpLeave && r.World.Mod(o.Mod) != nil && !slices.Contains(r.World.Mod(o.Mod).Hosts, o.Host) {
		delete(r.hostFloors[o.Host], o.Mod)
	}
	if o.Kind == OpHostMove {
		r.Stats["host moved"]++
	}
	if o.Kind == OpHostMove || o.Kind == OpJoin || o.Kind == OpLeave {
		// A module renamed since its environments' locks named it takes
		// their entries over by the hosts they were held against (see
		// resolve/takeover.go): once its hosts change, which entry it
		// takes over is pin's takeover rule, which the oracle does not
		// model; its floor there is checked again once a lock names it.
		for n := range r.envRenamed {
			for _, fls := range r.envFloors {
				delete(fls, n)
			}
		}
	}
}

// movedFloor checks build b, which e's new lock names for m (what step
// says), against what ran of m on e's hosts while they were in another
// environment. A catalogue that allows m's downgrade in words is not
// checked (its lock may be the new floor).
func (r *Runner) movedFloor(m *Module, e *Env, b *Build, step string) *Failure {
	if m.Allowed() {
		// Stated in words: the lock written is the new floor of what
		// ran on e's hosts, as it is of e's own floors.
		for _, hn := range envHosts(m, e) {
			if hf, ok := r.hostFloors[hn][m.Name]; ok && b.Rank < hf.rank {
				r.hostFloors[hn][m.Name] = hostFloor{floor{b.Rank, fmt.Sprintf("the lock of %s %s wrote at op %d named %s, below what ran on %s, as the catalogue allows in words", e.Name, step, r.at, b.name(), hn)}, e.Name}
			}
		}
		return nil
	}
	for _, hn := range envHosts(m, e) {
		hf, ok := r.hostFloors[hn][m.Name]
		if !ok || hf.env == e.Name {
			continue // (its own floors: checked as such)
		}
		r.Stats["moved host floor checked"]++
		if b.Rank < hf.rank {
			return &Failure{Check: CheckMoved, Msg: fmt.Sprintf("module %s: %s wrote %s into %s's lock, truly older than what ran on %s before it moved into %s: %s", m.Name, step, b.name(), e.Name, hn, e.Name, hf.what)}
		}
	}
	return nil
}

// elsewhereBuilds are the builds the other environments' locks (as on
// disk before the step) name for m in entries held against one of e's
// hosts: what ran on a host before it moved into e, and the entry held
// there, which e's lock may take over (check 7 allows them); and those
// e's own lock names in m's retired entry (m left e when its last host
// there moved, and came back).
func (r *Runner) elsewhereBuilds(m *Module, e *Env) []*Build {
	var out []*Build
	for _, x := range r.World.Envs {
		if x == e {
			if l := parseLockOrNil(r.World.Locks[e.Name]); l != nil {
				for _, en := range l.Retired {
					if r.nameNow(en.Name) != m.Name {
						continue
					}
					out = append(out, m.ByDigest(en.Digest))
					for _, o := range en.Observed {
						out = append(out, m.ByDigest(o.Digest))
					}
				}
			}
			continue
		}
		b := r.World.Locks[x.Name]
		if len(b) == 0 {
			continue
		}
		l := parseLock(b)
		if l == nil {
			continue
		}
		for _, list := range [][]*lock.Module{l.Modules, l.Retired} {
			for _, en := range list {
				if r.nameNow(en.Name) != m.Name {
					continue
				}
				held := slices.ContainsFunc(en.Hosts, func(h string) bool { return slices.Contains(e.Hosts, h) })
				for _, o := range en.Observed {
					held = held || slices.Contains(e.Hosts, o.Host)
				}
				if !held {
					continue
				}
				if b := m.ByDigest(en.Digest); b != nil {
					out = append(out, b)
				}
				for _, o := range en.Observed {
					if b := m.ByDigest(o.Digest); b != nil {
						out = append(out, b)
					}
				}
			}
		}
	}
	return out
}

// retiredEntries are the retired entries of lock b, by name (digest and
// hold only).
func retiredEntries(b []byte) map[string]Entry {
	out := map[string]Entry{}
	if len(b) == 0 {
		return out
	}
	if l := parseLock(b); l != nil {
		for _, m := range l.Retired {
			out[m.Name] = Entry{Digest: m.Digest, Hold: m.Hold}
		}
	}
	return out
}

// parseLockOrNil is parseLock, nil for no lock yet.
func parseLockOrNil(b []byte) *lock.Lock {
	if len(b) == 0 {
		return nil
	}
	return parseLock(b)
}
