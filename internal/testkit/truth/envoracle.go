package truth

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// Checks of histories with environments, named in failures (with
// CheckSound, CheckPlan, CheckOutdated and CheckDeterminism).
const (
	// CheckOwn: an environment's lock names only what its own inputs
	// name: the pin, what its own hosts run, its own previous entry.
	CheckOwn = "own-floors"
	// CheckPromote: a promotion copies what runs on every host of FROM
	// that runs the module, for at least TO's soak.
	CheckPromote = "promotion"
	// CheckUnit: a refused promotion leaves TO's lock byte-identical, and
	// a promotion changes only the modules of its unit.
	CheckUnit = "unit"
	// CheckHold: a held entry stays, in resolve and in automatic
	// promotions, until lifted.
	CheckHold = "hold"
	// CheckCoolDown: no track-upstream pick is younger than its module's
	// min_age, counted from the first time its tag named it (pin cannot
	// have seen it there before); what runs is never held back.
	CheckCoolDown = "cool-down"
)

// Close removes the folder the history's lock files were written in.
func (r *Runner) Close() {
	if r.World.Dir != "" {
		os.RemoveAll(r.World.Dir)
	}
}

// envStep plays a step of a history with environments.
func (r *Runner) envStep(o Op) *Failure {
	switch o.Kind {
	case OpResolve:
		return r.envResolve("", "", "")
	case OpResolveEnv:
		return r.envResolve("", "", o.Tag)
	case OpOnly:
		return r.envResolve("", o.Mod, "")
	case OpLock:
		return r.envResolve(o.Host, "", "")
	case OpPlan:
		return r.envPlan(o.Host)
	case OpOutdated:
		return r.envOutdated()
	case OpPromote:
		return r.envPromote(o)
	case OpLift:
		return r.envLift(o)
	}
	return nil
}

// envFloor returns the floor of module m in environment env.
func (r *Runner) envFloor(env, m string) (floor, bool) {
	fl, ok := r.envFloors[env][m]
	return fl, ok
}

// raise raises fl by the containers of ss that are floors.
func (r *Runner) raise(env string, fl floor, has bool, ss []seen) (floor, bool) {
	for _, s := range ss {
		if Floor(s.ctr.State) && (!has || s.build.Rank > fl.rank) {
			fl, has = floor{s.build.Rank, fmt.Sprintf("in %s, %s, seen at op %d", env, s, r.at)}, true
		}
	}
	return fl, has
}

// held checks that the lock b written for e still holds every entry
// its previous lock old held, at the same image, except module except
// (picked again, or lifted). An entry retired with its hold (the module
// left e: its last host of e moved) still holds it (retired, the entries
// retired in b). So does one that left e with its host, taken over, hold
// included, by another environment's lock written in the same run
// (elsewhere: those locks' entries; a hold follows its floor).
func heldKept(e *Env, old, b, retired map[string]Entry, except, what string, elsewhere ...Entry) *Failure {
	for _, n := range slices.Sorted(maps.Keys(old)) {
		o := old[n]
		if o.Hold == "" || n == except {
			continue
		}
		// Gone from the live entries, the held record is kept retired
		// (under whichever name: a renamed module's old name when the
		// new one does not take it over) or in another environment's
		// lock that took it over with its host: a digest and its hold
		// words are the record, whatever name files it.
		same := func(x Entry) bool { return x.Digest == o.Digest && x.Hold == o.Hold }
		if _, in := b[n]; !in && (slices.ContainsFunc(slices.Collect(maps.Values(retired)), same) || slices.ContainsFunc(elsewhere, same)) {
			continue
		}
		if ne := b[n]; ne.Digest != o.Digest || ne.Hold != o.Hold {
			return &Failure{Check: CheckHold, Msg: fmt.Sprintf("module %s: its entry in %s is held at %s (hold %q) until lifted, yet %s wrote %s (hold %q)", n, e.Name, shortRef(o.Digest), o.Hold, what, shortRef(ne.Digest), ne.Hold)}
		}
	}
	return nil
}

// envSeen lists m's containers on its runs_on hosts in e (only on
// fromHost, when set): what a step deciding e reads of m.
func (r *Runner) envSeen(m *Module, e *Env, fromHost string) []seen {
	var out []seen
	for _, hn := range envHosts(m, e) {
		if fromHost != "" && hn != fromHost || r.World.Host(hn).Down {
			continue // not read
		}
		if c := r.World.Host(hn).ctr(m.Name); c != nil {
			out = append(out, seen{hn, c, m.Builds[c.Build]})
		}
	}
	return out
}

// ownInputs checks that build b, which e's new lock names for m, is one
// e's own inputs name: the catalogue's pin (its digest, or the build its
// tag names now), a container of m on e's hosts (or the build the
// registry gives its tag), e's previous entry or a container it
// recorded. Another environment's floor leaking in shows as a build none
// of them names. Policy track-upstream may lock any tag's build: not
// checked.
func (r *Runner) ownInputs(m *Module, e *Env, b *Build, old Entry) *Failure {
	if m.Policy == "track-upstream" {
		return nil
	}
	r.Stats["own inputs checked"]++
	var own []*Build
	add := func(x *Build) {
		if x != nil {
			own = append(own, x)
		}
	}
	byTag := func(tag string) {
		if id, ok := m.Tags[tag]; ok {
			add(m.Builds[id])
		}
	}
	if strings.HasPrefix(m.Pin, "sha256:") {
		add(m.ByDigest(m.Pin))
	} else if tag, d, ok := strings.Cut(m.Pin, "@"); ok {
		add(m.ByDigest(d))
		byTag(tag)
	} else if m.Pin != "" {
		byTag(m.Pin)
	}
	for _, s := range r.envSeen(m, e, "") {
		add(s.build)
		if tag, _, _ := strings.Cut(strings.TrimPrefix(s.ctr.Ref, ":"), "@"); tag != "" && !strings.HasPrefix(tag, "sha256:") {
			byTag(tag)
		}
	}
	add(m.ByDigest(old.Digest))
	for _, x := range r.elsewhereBuilds(m, e) {
		add(x)
	}
	for _, ds := range old.Recorded {
		for _, d := range ds {
			add(m.ByDigest(d))
		}
	}
	if !slices.Contains(own, b) {
		return &Failure{Check: CheckOwn, Msg: fmt.Sprintf("module %s (%s): %s's lock names %s, which neither the catalogue's pin, nor what %s's hosts %v run, nor %s's previous entry names: another environment's floor leaked in", m.Name, m.Policy, e.Name, b.name(), e.Name, envHosts(m, e), e.Name)}
	}
	return nil
}

// envResolve runs resolve, resolve MODULE or lock --from-host over the
// environments and checks each environment's lock against its own
// floors.
func (r *Runner) envResolve(fromHost, only, env string) *Failure {
	w := r.World
	res := runEnvResolve(w, fromHost, only, env)
	if again := runEnvResolve(w, fromHost, only, env); again.Text != res.Text {
		return &Failure{Check: CheckDeterminism, Msg: fmt.Sprintf("the same step twice differs:\n%s\n---\n%s", res.Text, again.Text)}
	}
	for _, er := range res.Envs {
		for _, o := range er.Outcomes {
			switch {
			case o.Refused != "":
				r.Stats["refused "+o.Refused]++
			case o.Err != "":
				r.Stats["error"]++
			default:
				r.Stats["decided"]++
			}
		}
	}
	if res.Refused != "" {
		r.Stats["refused: a moved host undecided"]++
	}
	if !res.Written {
		return nil // nothing written: every lock file stays as it was
	}
	next := map[string]map[string]floor{}
	for _, er := range res.Envs {
		e := w.Env(er.Name)
		var elsewhere []Entry
		for _, x := range res.Envs {
			if x.Name != er.Name {
				elsewhere = slices.AppendSeq(elsewhere, maps.Values(lockEntries(x.Lock)))
			}
		}
		old, nw := r.aliased(e.Name, lockEntries(w.Locks[e.Name])), r.aliased(e.Name, lockEntries(er.Lock))
		if f := heldKept(e, old, nw, r.aliased(e.Name, retiredEntries(er.Lock)), "", "resolve", elsewhere...); f != nil {
			return f
		}
		fls := maps.Clone(r.envFloors[e.Name])
		if fls == nil {
			fls = map[string]floor{}
		}
		for _, m := range w.Mods {
			if !inEnv(m, e) || (only != "" && m.Name != only) {
				continue
			}
			fl, has := r.raise(e.Name, fls[m.Name], hasKey(fls, m.Name), r.envSeen(m, e, fromHost))
			r.recordHost(e.Name, m, r.envSeen(m, e, fromHost))
			ne, ok := nw[m.Name]
			if !ok {
				if has {
					fls[m.Name] = fl
				}
				continue
			}
			if old[m.Name].Hold != "" {
				r.Stats["hold kept"]++
			}
			b := m.ByDigest(ne.Digest)
			if b == nil {
				return &Failure{Check: CheckSound, Msg: fmt.Sprintf("module %s: %s's lock names %s, which no registry holds", m.Name, e.Name, ne.Digest)}
			}
			if f := r.ownInputs(m, e, b, old[m.Name]); f != nil {
				return f
			}
			if f := r.cooledDown(m, e, b, ne, old[m.Name], has && b.Rank <= fl.rank); f != nil {
				return f
			}
			if f := r.movedFloor(m, e, b, "resolve"); f != nil && (fromHost == "" || slices.Contains(m.Hosts, fromHost)) {
				// (lock --from-host keeps, untouched, a module that does
				// not run on the host it reads: not decided, as check 1.)
				return f
			}
			for _, x := range r.World.Envs {
				if x != e && slices.ContainsFunc(r.envSeen(m, x, ""), func(s seen) bool { return Floor(s.ctr.State) && s.build.Rank > b.Rank }) {
					// (What the oracle lets pin do: the other
					// environment's floors are not this one's.)
					r.Stats["locked below the other environment"]++
					break
				}
			}
			if has && b.Rank < fl.rank {
				if !m.Allowed() {
					return &Failure{Check: CheckSound, Msg: fmt.Sprintf("module %s: %s's lock names %s, truly older than a floor of %s: %s", m.Name, e.Name, b.name(), e.Name, fl.what)}
				}
				has = false // stated in words: the new lock is the new floor
			}
			if !has || b.Rank > fl.rank {
				fl = floor{b.Rank, fmt.Sprintf("the lock of %s pin wrote at op %d named %s", e.Name, r.at, b.name())}
			}
			fls[m.Name] = fl
		}
		next[e.Name] = fls
	}
	for _, er := range res.Envs {
		r.envFloors[er.Name] = next[er.Name]
		w.writeLock(er.Name, er.Lock)
	}
	r.Stats["env written"]++
	return nil
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// envPromote runs a promotion and checks it: what it copies ran on every
// host of FROM that runs the module, for TO's soak; a refusal changes
// nothing; held entries stay; TO's lock stays above TO's floors.
func (r *Runner) envPromote(o Op) *Failure {
	w := r.World
	from, to := w.Env(o.Host), w.Env(o.Tag)
	p := runPromote(w, from.Name, to.Name, o.promoted(), o.Ref)
	if again := runPromote(w, from.Name, to.Name, o.promoted(), o.Ref); again.Text != p.Text {
		return &Failure{Check: CheckDeterminism, Msg: fmt.Sprintf("the same promotion twice differs:\n%s\n---\n%s", p.Text, again.Text)}
	}
	if o.Ref != "" {
		r.Stats["pick"]++
	}
	if p.Moved {
		r.Stats["promote refused: a moved host undecided"]++
	}
	if p.Err != "" {
		r.Stats["promote error"]++
		return nil // nothing written
	}
	for _, k := range p.Refused {
		r.Stats["promote refused "+k]++
	}
	for _, k := range p.Skipped {
		r.Stats["promote skipped "+k]++
	}
	if len(p.Refused) > 0 {
		if string(p.Lock) != string(p.Old) || len(p.Entries) > 0 {
			return &Failure{Check: CheckUnit, Msg: fmt.Sprintf("a refused promotion (%v) must leave %s's lock byte-identical and promote nothing; it gives:\n%s", p.Refused, to.Name, p.Lock)}
		}
		return nil
	}
	old, nw := r.aliased(to.Name, lockEntries(p.Old)), r.aliased(to.Name, lockEntries(p.Lock))
	except := ""
	if o.Ref != "" {
		except = o.Text
	}
	if f := heldKept(to, old, nw, r.aliased(to.Name, retiredEntries(p.Lock)), except, "a promotion"); f != nil {
		return f
	}
	for _, n := range slices.Sorted(maps.Keys(old)) {
		if _, in := p.Entries[n]; !in && (nw[n].Digest != old[n].Digest || nw[n].Hold != old[n].Hold) {
			return &Failure{Check: CheckUnit, Msg: fmt.Sprintf("module %s is not in the unit promoted, yet its entry in %s changed from %s to %s", n, to.Name, shortRef(old[n].Digest), shortRef(nw[n].Digest))}
		}
	}
	fls := maps.Clone(r.envFloors[to.Name])
	if fls == nil {
		fls = map[string]floor{}
	}
	for _, n := range slices.Sorted(maps.Keys(p.Entries)) {
		ne, m := p.Entries[n], w.Mod(n)
		b := m.ByDigest(ne.Digest)
		if b == nil {
			return &Failure{Check: CheckPromote, Msg: fmt.Sprintf("module %s: the promotion wrote %s, which no registry holds", n, ne.Digest)}
		}
		if f := r.promotedRan(o, m, from, to, b, ne); f != nil {
			return f
		}
		if f := r.movedFloor(m, to, b, "the promotion"); f != nil {
			return f
		}
		if ne.Digest != old[n].Digest {
			r.Stats["promoted"]++
		}
		fl, has := r.raise(to.Name, fls[n], hasKey(fls, n), r.envSeen(m, to, ""))
		if has && b.Rank < fl.rank {
			if !m.Allowed() {
				return &Failure{Check: CheckSound, Msg: fmt.Sprintf("module %s: the promotion to %s wrote %s, truly older than a floor of %s: %s", n, to.Name, b.name(), to.Name, fl.what)}
			}
			has = false
		}
		if !has || b.Rank > fl.rank {
			fl = floor{b.Rank, fmt.Sprintf("the lock of %s the promotion at op %d wrote named %s", to.Name, r.at, b.name())}
		}
		fls[n] = fl
	}
	r.envFloors[to.Name] = fls
	if p.Written {
		w.writeLock(to.Name, p.Lock)
	}
	return nil
}

// promotedRan checks one module's promoted entry: a pick is the image
// picked, held; else it is the build every host of FROM that runs the
// module runs (no skew), each for at least TO's soak, and holds nothing.
func (r *Runner) promotedRan(o Op, m *Module, from, to *Env, b *Build, ne Entry) *Failure {
	fail := func(format string, a ...any) *Failure {
		return &Failure{Check: CheckPromote, Msg: fmt.Sprintf("module %s: the promotion %s → %s wrote %s: ", m.Name, from.Name, to.Name, b.name()) + fmt.Sprintf(format, a...)}
	}
	if o.Ref != "" {
		if _, d, _ := strings.Cut(o.Ref, "@"); ne.Digest != d && ne.Digest != o.Ref {
			return fail("not the image picked (%s)", shortRef(o.Ref))
		}
		if ne.Hold == "" {
			return fail("a manual pick records no hold")
		}
		return nil
	}
	if ne.Hold != "" {
		return fail("an automatic promotion recorded a hold (%q)", ne.Hold)
	}
	for _, hn := range envHosts(m, from) {
		if r.World.Host(hn).Down {
			return fail("%s, a host of %s in the module's runs_on, was not read (down, skip_unreachable): what it runs is not known, so the promotion must be refused (host-not-read)", hn, from.Name)
		}
	}
	var running []seen
	for _, s := range r.envSeen(m, from, "") {
		if Runs(s.ctr.State) {
			running = append(running, s)
		}
	}
	// Only a healthy run proves a build: every container of the module
	// on FROM that has started runs (not paused, restarting, exited or
	// dead), its health check (if any) says healthy, and its engine did
	// not restart it within TO's soak.
	for _, s := range r.envSeen(m, from, "") {
		switch {
		case s.ctr.State == "created":
		case s.ctr.State != "running":
			return fail("%s is %s on a host of %s: only a build that runs healthy on every host of FROM is promoted", s, s.ctr.State, from.Name)
		case s.ctr.Health == "unhealthy" || s.ctr.Health == "starting":
			return fail("%s: its health check says %s", s, s.ctr.Health)
		case to.Soak > 0 && s.ctr.Restarts > 0 && r.World.Clock.Sub(s.ctr.StartedAt) < to.Soak:
			return fail("%s was restarted by its engine %d times, last at %s, within %s's soak of %v", s, s.ctr.Restarts, s.ctr.StartedAt.Format("2006-01-02T15:04"), to.Name, to.Soak)
		}
	}
	if len(running) == 0 {
		return fail("no host of %s runs the module (whatever %s's lock says, what is promoted is what runs)", from.Name, from.Name)
	}
	for _, s := range running {
		if s.build != b {
			return fail("%s: every host of %s that runs the module must run what is promoted", s, from.Name)
		}
		if ran := r.World.Clock.Sub(s.ctr.StartedAt); ran < to.Soak {
			return fail("%s since %s (restarted %d times), %v ago, less than %s's soak of %v", s, s.ctr.StartedAt.Format("2006-01-02T15:04"), s.ctr.Restarts, ran, to.Name, to.Soak)
		}
	}
	r.Stats["promotion checked"]++
	return nil
}

// cooledDown checks that a new entry picked from upstream (ne, by its
// tag) under a min_age is at least that old by the world's clock since
// its tag first named it: pin's first sighting is no earlier, and its
// build date counts only when later. An entry at or below a floor
// (atFloor), or naming what a container of the fleet runs or a lock of
// it names (a floor, here or carried by a host that moved), is never
// held back.
func (r *Runner) cooledDown(m *Module, e *Env, b *Build, ne, old Entry, atFloor bool) *Failure {
	if m.MinAge <= 0 || ne.Tag == "" || ne.Digest == old.Digest || atFloor {
		return nil
	}
	for _, h := range r.World.Hosts {
		if c := h.ctr(m.Name); c != nil && m.Builds[c.Build] == b {
			return nil
		}
	}
	for _, x := range r.World.Envs {
		if lockEntries(r.World.Locks[x.Name])[m.Name].Digest == b.Digest {
			return nil
		}
	}
	appeared, ok := m.Appeared[ne.Tag+"@"+b.Digest]
	if !ok {
		return nil
	}
	r.Stats["cool-down checked"]++
	if age := r.World.Clock.Sub(appeared); age < m.MinAge {
		return &Failure{Check: CheckCoolDown, Msg: fmt.Sprintf("module %s: %s's lock takes %s (tag %s), which its tag has named only since %s, %v ago: younger than min_age %v",
			m.Name, e.Name, b.name(), ne.Tag, appeared.Format("2006-01-02T15:04"), age, m.MinAge)}
	}
	return nil
}

// envLift runs "pin promote --lift": it lifts a held entry and nothing
// else, and refuses one that is not held.
func (r *Runner) envLift(o Op) *Failure {
	wd := r.World
	to := wd.Env(o.Tag)
	old := lockEntries(wd.Locks[to.Name])
	held := old[o.Mod].Hold != ""
	locks, err := runLift(wd, to.Name, o.Mod)
	b := locks[to.Name]
	var moved *movedError
	switch {
	case errors.As(err, &moved):
		r.Stats["lift refused: a moved host undecided"]++
		return nil // refused as cmd/pin refuses it: nothing written
	case err != nil && held:
		return &Failure{Check: CheckHold, Msg: fmt.Sprintf("module %s is held in %s, yet lifting its hold failed: %v", o.Mod, to.Name, err)}
	case err != nil:
		return nil // nothing to lift: nothing written
	case !held:
		return &Failure{Check: CheckHold, Msg: fmt.Sprintf("module %s is not held in %s, yet --lift succeeded", o.Mod, to.Name)}
	}
	nw := lockEntries(b)
	if ne := nw[o.Mod]; ne.Digest != old[o.Mod].Digest || ne.Hold != "" {
		return &Failure{Check: CheckHold, Msg: fmt.Sprintf("module %s: lifting its hold must keep its entry at %s without the hold; it gives %s (hold %q)", o.Mod, shortRef(old[o.Mod].Digest), shortRef(ne.Digest), ne.Hold)}
	}
	if f := heldKept(to, old, nw, retiredEntries(b), o.Mod, "lifting "+o.Mod+"'s hold"); f != nil {
		return f
	}
	r.Stats["lifted"]++
	for _, name := range slices.Sorted(maps.Keys(locks)) {
		if name != to.Name {
			r.Stats["lifted where it would be taken over again"]++
		}
		wd.writeLock(name, locks[name])
	}
	return nil
}

// envPlan checks that plan, judging a host by its environment's lock,
// calls no cutover to a truly older image safe.
func (r *Runner) envPlan(hostName string) *Failure {
	wd := r.World
	e := wd.EnvOf(hostName)
	cuts, err := runEnvPlan(wd, hostName)
	if err != nil {
		return &Failure{Check: CheckPlan, Msg: "plan failed: " + err.Error()}
	}
	entries := lockEntries(wd.Locks[e.Name])
	r.Stats["plan cutovers"] += len(cuts)
	for _, c := range cuts {
		m := wd.Mod(c.Module)
		ctr := wd.Host(c.Host).ctr(c.Module)
		if m == nil || ctr == nil || ctr.State == "created" || !slices.Contains(safeVerdicts, c.Verdict) {
			continue
		}
		locked, run := m.ByDigest(entries[m.Name].Digest), m.Builds[ctr.Build]
		if locked != nil && locked.Rank < run.Rank {
			return &Failure{Check: CheckPlan, Msg: fmt.Sprintf("module %s: plan says %q for a cutover from %s to %s's locked %s, truly older", m.Name, c.Verdict, seen{c.Host, ctr, run}, e.Name, locked.name())}
		}
	}
	return nil
}

// envOutdated checks that a host running something truly newer than its
// environment's lock gets a failing status there.
func (r *Runner) envOutdated() *Failure {
	wd := r.World
	st := runEnvOutdated(wd)
	r.Stats["outdated"]++
	for _, e := range wd.Envs {
		entries := lockEntries(wd.Locks[e.Name])
		for _, m := range wd.Mods {
			locked := m.ByDigest(entries[m.Name].Digest)
			if locked == nil || !inEnv(m, e) {
				continue
			}
			failing := slices.ContainsFunc(st[e.Name][m.Name], func(s string) bool { return !slices.Contains(passingStatuses, s) })
			for _, s := range r.envSeen(m, e, "") {
				if Floor(s.ctr.State) && s.build.Rank > locked.Rank && !failing {
					return &Failure{Check: CheckOutdated, Msg: fmt.Sprintf("module %s: %s, truly newer than %s's locked %s, yet outdated says %v there", m.Name, s, e.Name, locked.name(), st[e.Name][m.Name])}
				}
			}
		}
	}
	return nil
}
