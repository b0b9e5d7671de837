package truth

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Checks the oracle makes, named in failures.
const (
	CheckSound       = "soundness"
	CheckPlan        = "plan"
	CheckOutdated    = "outdated"
	CheckLive        = "liveness"
	CheckDeterminism = "determinism"
)

// Failure is a promise pin broke at one op of a history.
type Failure struct {
	Check string
	// Op is the index of the failing step in the history's ops.
	Op  int
	Msg string
}

func (f *Failure) Error() string { return fmt.Sprintf("%s at op %d: %s", f.Check, f.Op, f.Msg) }

// floor is the truly newest image a module's lock must not go below, and
// where it was seen.
type floor struct {
	rank int
	what string
}

// Runner plays a history against pin and checks every step.
type Runner struct {
	Setup *Setup
	World *World
	Ops   []Op
	// Steps counts the steps played.
	Steps int
	// Stats counts what the steps exercised, so that a test can require
	// that every check had something to check.
	Stats  map[string]int
	floors map[string]floor
	// renamed marks modules renamed or added back since pin last wrote an
	// entry under their name: their floor is an entry under another name,
	// or a retired one, which the liveness check does not model.
	renamed map[string]bool
	// read[m][h]: a step that wrote the lock read host h for module m
	// since h became one of m's hosts (false or absent: none did).
	read map[string]map[string]bool
	// held[m]: m's runs_on hosts when a step that wrote the lock last
	// decided it (the hosts its entry was held against).
	held map[string][]string
	// envFloors[e][m]: the floor of module m in environment e (histories
	// with environments: envoracle.go).
	envFloors map[string]map[string]floor
	// hostFloors[h][m]: what ran of module m on host h, seen by a step
	// that wrote the lock of h's environment then (hostmove_oracle.go).
	hostFloors map[string]map[string]hostFloor
	// aliases[old]: the name a module of a history with environments was
	// renamed to; the entries of locks written before are read under it
	// (see aliased): a floor and its hold follow the module.
	aliases map[string]string
	// envRenamed marks modules renamed since a lock of a history with
	// environments last named them (see hostEvent).
	envRenamed map[string]bool
	at         int // the op being played
}

// NewRunner starts a history from its setup.
func NewRunner(s *Setup) *Runner {
	return &Runner{Setup: s, World: s.World(), Stats: map[string]int{}, floors: map[string]floor{}, renamed: map[string]bool{}, read: map[string]map[string]bool{}, held: map[string][]string{}, envFloors: map[string]map[string]floor{}}
}

// Replay plays ops from the setup and returns the first failure.
func Replay(s *Setup, ops []Op) *Failure {
	r := NewRunner(s)
	defer r.Close()
	for _, o := range ops {
		if f := r.Do(o); f != nil {
			return f
		}
	}
	return nil
}

// Do plays one op: an event changes the world, a step calls pin and is
// checked.
func (r *Runner) Do(o Op) *Failure {
	if !o.Step() {
		names := r.names()
		done := r.World.apply(o)
		r.Ops = append(r.Ops, done)
		if r.names() != names {
			r.follow(done)
		}
		if r.World.Envs != nil {
			r.hostEvent(done)
		}
		if (done.Kind == OpJoin || done.Kind == OpLeave) && r.renamed[done.Mod] {
			r.tie(done.Mod)
		}
		// (A host that joins a module's runs_on is unread for it unless a
		// step that wrote the lock read it for the module before: a host
		// that left and came back with no write between is one the
		// module's entry still says it read, and pin cannot tell.)
		switch done.Kind {
		case OpHost:
			for _, m := range append(slices.Clone(r.World.Mods), r.World.Gone...) {
				r.unread(m.Name, done.Host)
			}
		}
		return nil
	}
	r.Ops = append(r.Ops, o)
	r.Steps++
	at := len(r.Ops) - 1
	r.at = at
	var f *Failure
	switch {
	case r.World.Envs != nil:
		f = r.envStep(o)
	case o.Kind == OpResolve:
		f = r.resolve("", "")
	case o.Kind == OpOnly:
		f = r.resolve("", o.Mod)
	case o.Kind == OpLock:
		f = r.resolve(o.Host, "")
	case o.Kind == OpPlan:
		f = r.plan(o.Host)
	case o.Kind == OpOutdated:
		f = r.outdated()
	}
	if f != nil {
		f.Op = at
	}
	return f
}

// names lists the modules' names, in and out of the catalogue.
func (r *Runner) names() string {
	var b strings.Builder
	for _, m := range r.World.Mods {
		b.WriteString(m.Name + " ")
	}
	b.WriteString("| ")
	for _, m := range r.World.Gone {
		b.WriteString(m.Name + " ")
	}
	return b.String()
}

// follow moves what the oracle knows of a module that was renamed, or
// removed and added back: a floor belongs to what ran and what was
// locked, not to a name, so it follows the module.
func (r *Runner) follow(o Op) {
	switch o.Kind {
	case OpRename:
		r.move(o.Mod, o.Text)
	case OpReadd:
		if o.Text != "" && r.World.Mod(o.Text) != nil {
			r.move(o.Mod, o.Text)
		} else if r.World.Mod(o.Mod) != nil {
			r.renamed[o.Mod] = true
		}
	}
}

func (r *Runner) move(from, to string) {
	if fl, ok := r.floors[from]; ok {
		r.floors[to] = fl
		delete(r.floors, from)
	}
	if rd, ok := r.read[from]; ok {
		r.read[to] = rd
		delete(r.read, from)
	}
	if hs, ok := r.held[from]; ok {
		r.held[to] = hs
		delete(r.held, from)
	}
	r.renamed[to] = true
	delete(r.renamed, from)
	r.tie(to)
	if r.World.Envs != nil {
		for env, fls := range r.envFloors {
			if fl, ok := fls[from]; ok {
				if r.takesOver(env, from, to) {
					fls[to] = fl
				}
				delete(fls, from)
			}
		}
		for _, byMod := range r.hostFloors {
			if hf, ok := byMod[from]; ok {
				byMod[to] = hf
				delete(byMod, from)
			}
		}
		if r.aliases == nil {
			r.aliases, r.envRenamed = map[string]string{}, map[string]bool{}
		}
		r.aliases[from] = to
		delete(r.envRenamed, from)
		r.envRenamed[to] = true
	}
}

// takesOver reports whether module to, renamed from from, takes over the
// entry for from in env's lock: it has none, or was read on none of its
// hosts (pin then takes it over by repository), or one of to's hosts in
// env is a host it was read on or recorded a container on. Otherwise the
// entry waits, retired, for a module that takes over what it ran.
func (r *Runner) takesOver(env, from, to string) bool {
	e, ok := lockEntries(r.World.Locks[env])[from]
	return !ok || r.tied(env, e, to)
}

// tied reports whether module to takes over entry e of env's lock: e was
// read on none of its hosts, or one of to's hosts in env is one e was
// read on or recorded a container on.
func (r *Runner) tied(env string, e Entry, to string) bool {
	m := r.World.Mod(to)
	if len(e.Hosts) == 0 || m == nil {
		return true
	}
	return slices.ContainsFunc(envHosts(m, r.World.Env(env)), func(h string) bool {
		return slices.Contains(e.Hosts, h) || len(e.Recorded[h]) > 0
	})
}

// nameNow is the name module n has now, through its renames.
func (r *Runner) nameNow(n string) string {
	for r.aliases[n] != "" {
		n = r.aliases[n]
	}
	return n
}

// aliased re-keys entries of env's lock by the modules' names now: an
// entry under a name a module was renamed from is read under the name it
// has now, when no entry has that name yet and the module takes it over
// (its floor, and its hold with it).
func (r *Runner) aliased(env string, entries map[string]Entry) map[string]Entry {
	for _, from := range slices.Sorted(maps.Keys(r.aliases)) {
		e, ok := entries[from]
		if !ok {
			continue
		}
		to := r.nameNow(from)
		if _, taken := entries[to]; !taken && r.tied(env, e, to) {
			entries[to] = e
			delete(entries, from)
		}
	}
	return entries
}

// tie drops the floor of module name, renamed (or added back under
// another name) since a lock last named it, when none of its runs_on
// hosts is one its old entry was held against: a floor belongs to what
// ran where and what was locked for it, not to a name, and this module
// takes over neither; the old entry waits in the lock, retired, for one
// that does. (Its containers, where it still runs, are floors again when
// a step reads them.)
func (r *Runner) tie(name string) {
	m := r.World.Mod(name)
	if m == nil || slices.ContainsFunc(m.Hosts, func(h string) bool { return slices.Contains(r.held[name], h) }) {
		return
	}
	delete(r.floors, name)
}

// seen is a container pin reads in a step, with its build.
type seen struct {
	host  string
	ctr   *Ctr
	build *Build
}

func (s seen) String() string {
	return fmt.Sprintf("%s runs %s (%s, started from %s)", s.host, s.build.name(), s.ctr.State, shortRef(s.ctr.Ref))
}

// observedBy lists the containers of m that a step reading hosts (all when
// fromHost is empty) observes.
func (r *Runner) observedBy(m *Module, fromHost string) []seen {
	var out []seen
	for _, hn := range r.hostsOf(m) {
		if fromHost != "" && hn != fromHost || r.World.Host(hn).Down {
			continue // not read
		}
		if c := r.World.Host(hn).Ctrs[m.Name]; c != nil {
			out = append(out, seen{hn, c, m.Builds[c.Build]})
		}
	}
	return out
}

// hostsOf are the hosts where m's containers are taken over: its runs_on
// hosts, and the catalogue's hosts that take over by label.
func (r *Runner) hostsOf(m *Module) []string {
	out := slices.Clone(m.Hosts)
	for _, h := range r.World.catalogueHosts() {
		if h.Labelled && !slices.Contains(out, h.Name) {
			out = append(out, h.Name)
		}
	}
	return out
}

// unread marks host h as one no step that wrote the lock has read for
// module m since h became one of its hosts.
func (r *Runner) unread(m, h string) {
	if r.read[m] == nil {
		r.read[m] = map[string]bool{}
	}
	r.read[m][h] = false
}

// unreadFloor returns a container of m, on a host other than fromHost
// that no step writing the lock read for m since it became one of m's
// hosts, that is truly newer than build b: "lock --from-host" may not
// decide m then (pin cannot know that host's floors: hosts-not-read).
func (r *Runner) unreadFloor(m *Module, fromHost string, b *Build) (seen, bool) {
	for _, hn := range r.hostsOf(m) {
		if hn == fromHost || r.read[m.Name][hn] {
			continue
		}
		if c := r.World.Host(hn).Ctrs[m.Name]; c != nil && Floor(c.State) && m.Builds[c.Build].Rank > b.Rank {
			return seen{hn, c, m.Builds[c.Build]}, true
		}
	}
	return seen{}, false
}

func (r *Runner) resolve(fromHost, only string) *Failure {
	w := r.World
	res := runResolve(w, fromHost, only)
	if again := runResolve(w, fromHost, only); again.Text != res.Text {
		return &Failure{Check: CheckDeterminism, Msg: fmt.Sprintf("the same step twice differs:\n%s\n---\n%s", res.Text, again.Text)}
	}
	old := lockEntries(w.Lock)
	for _, o := range res.Outcomes {
		switch {
		case o.Refused != "":
			r.Stats["refused "+o.Refused]++
		case o.Err != "":
			r.Stats["error"]++
		default:
			r.Stats["decided"]++
		}
	}
	if !res.Written {
		return r.liveAll(fromHost, only, res, old)
	}
	newEntries := lockEntries(res.Lock)
	next := map[string]floor{}
	for _, m := range w.Gone {
		// Out of the catalogue: its floor waits for it to come back.
		if fl, ok := r.floors[m.Name]; ok {
			next[m.Name] = fl
		}
	}
	var cleared []string
	for _, m := range w.Mods {
		fl, has := r.floors[m.Name]
		if only != "" && m.Name != only {
			// "pin resolve MODULE" decides the named module alone: what
			// it saw of the others, it had no way to record.
			if has {
				next[m.Name] = fl
			}
			continue
		}
		if o := res.Outcomes[m.Name]; fromHost != "" && o.Decided() && o.Digest != "" &&
			(slices.Contains(m.Hosts, fromHost) || len(r.observedBy(m, fromHost)) > 0) {
			if b := m.ByDigest(o.Digest); b == nil {
				return &Failure{Check: CheckSound, Msg: fmt.Sprintf("module %s: the lock names %s, which no registry holds", m.Name, o.Digest)}
			} else if s, ok := r.unreadFloor(m, fromHost, b); ok {
				return &Failure{Check: CheckSound, Msg: fmt.Sprintf("module %s: lock --from-host %s locked %s although %s, a host no step that wrote the lock read for the module since it became one of its hosts (\"pin resolve MODULE\" for another module does not read it for this one): pin must refuse (hosts-not-read)",
					m.Name, fromHost, m.ByDigest(o.Digest).name(), s)}
			}
		}
		for _, s := range r.observedBy(m, fromHost) {
			if Floor(s.ctr.State) && (!has || s.build.Rank > fl.rank) {
				fl, has = floor{s.build.Rank, fmt.Sprintf("%s, seen at op %d", s, r.at)}, true
			}
		}
		e, ok := newEntries[m.Name]
		d := e.Digest
		if !ok {
			if has {
				next[m.Name] = fl
			}
			continue
		}
		b := m.ByDigest(d)
		if b == nil {
			return &Failure{Check: CheckSound, Msg: fmt.Sprintf("module %s: the lock names %s, which no registry holds", m.Name, d)}
		}
		if has && b.Rank < fl.rank {
			if !m.Allowed() {
				return &Failure{Check: CheckSound, Msg: fmt.Sprintf("module %s: the lock names %s, truly older than a floor: %s", m.Name, b.name(), fl.what)}
			}
			// The catalogue states the downgrade: the new lock is the
			// new floor.
			has = false
		}
		if !has || b.Rank > fl.rank {
			fl = floor{b.Rank, fmt.Sprintf("the lock pin wrote at op %d named %s", r.at, b.name())}
		}
		next[m.Name] = fl
		if old[m.Name].Digest != d {
			cleared = append(cleared, m.Name)
		}
	}
	if f := r.liveAll(fromHost, only, res, old); f != nil {
		return f
	}
	for _, n := range cleared {
		delete(w.Tampered, n)
	}
	// What this step read, for which modules.
	for _, m := range w.Mods {
		if only != "" && m.Name != only {
			continue
		}
		// (lock --from-host keeps the entry of a module it does not touch
		// as it was, its hosts too.)
		touched := fromHost == "" || slices.Contains(m.Hosts, fromHost) || len(r.observedBy(m, fromHost)) > 0
		if o := res.Outcomes[m.Name]; o.Decided() && o.Digest != "" && touched {
			// (A host that was down was not read: the entry is not held
			// against it.)
			r.held[m.Name] = slices.DeleteFunc(slices.Clone(m.Hosts), func(h string) bool { return w.Host(h).Down })
		}
		if r.read[m.Name] == nil {
			r.read[m.Name] = map[string]bool{}
		}
		for _, hn := range r.hostsOf(m) {
			if (fromHost == "" || hn == fromHost) && !r.World.Host(hn).Down {
				r.read[m.Name][hn] = true
			}
		}
	}
	if only != "" {
		r.Stats["subset written"]++
	}
	for n := range r.renamed {
		if _, ok := newEntries[n]; ok {
			delete(r.renamed, n)
			r.Stats["renamed locked"]++
		}
	}
	r.Stats["written"]++
	r.floors = next
	w.Lock = res.Lock
	return nil
}

func (r *Runner) liveAll(fromHost, only string, res Result, old map[string]Entry) *Failure {
	for _, m := range r.World.Mods {
		if only != "" && m.Name != only {
			continue
		}
		e, ok := old[m.Name]
		if f := r.live(m, fromHost, res.Outcomes[m.Name], e, ok); f != nil {
			return f
		}
	}
	return nil
}

// clean reports whether the module's step is in the clean class: every
// image involved has an honest full-precision tag in one variant, and the
// references pin reads carry it.
func (r *Runner) clean(m *Module, obs []seen) bool {
	if m.Profile != "clean" || m.Float != "" || r.World.Tampered[m.Name] {
		return false
	}
	if m.Pin != "" && r.pinBuild(m) == nil {
		return false
	}
	for _, s := range obs {
		tag, d, hasDigest := strings.Cut(strings.TrimPrefix(s.ctr.Ref, ":"), "@")
		if strings.HasPrefix(s.ctr.Ref, "@") || tag != m.Canon[s.build.ID] || (hasDigest && m.ByDigest(d) != s.build) {
			return false
		}
	}
	return true
}

// pinBuild is the build a clean pin names: a canonical tag that names it
// now, with its digest or none; nil otherwise.
func (r *Runner) pinBuild(m *Module) *Build {
	tag, d, hasDigest := strings.Cut(m.Pin, "@")
	id, ok := m.Tags[tag]
	if !ok || tag == "" || m.Canon[id] != tag || (hasDigest && m.Builds[id].Digest != d) {
		return nil
	}
	return m.Builds[id]
}

// spentAllowance reports whether a downgrade to primary would go below
// something the previous entry's accepted downgrade was not held against: a
// container above primary that it did not record, or the entry itself above
// primary. allow_downgrade's words accept one downgrade.
func spentAllowance(m *Module, obs []seen, old Entry, prev, primary *Build) bool {
	if prev != nil && prev != primary && primary.Rank < prev.Rank {
		return true
	}
	for _, s := range obs {
		if !Floor(s.ctr.State) || s.build.Rank <= primary.Rank {
			continue
		}
		if !slices.ContainsFunc(old.Recorded[s.host], func(d string) bool { return m.ByDigest(d) == s.build }) {
			return true
		}
	}
	return false
}

// newestRelease is the build of the newest release tag in the module's
// one variant, as track-upstream would rank them; nil when none.
func newestRelease(m *Module) *Build {
	var best *Build
	for t, id := range m.Tags {
		b := m.Builds[id]
		if t != m.Canon[id] || b.Ver.Pre != "" {
			continue
		}
		if best == nil || best.Ver.less(b.Ver) {
			best = b
		}
	}
	return best
}

// live checks liveness on the clean class: pin decides, and locks the true
// newest image its policy allows.
func (r *Runner) live(m *Module, fromHost string, o Outcome, old Entry, hasOld bool) *Failure {
	if r.renamed[m.Name] {
		return nil // its floor is an entry under another name, or a retired one
	}
	obs := r.observedBy(m, fromHost)
	prev := m.ByDigest(old.Digest)
	if !r.clean(m, obs) || (hasOld && (prev == nil || prev.Mixed != nil || old.Tag != m.Canon[prev.ID])) {
		return nil // (a mixed index has no tag of its own: not clean)
	}
	// lock --from-host of a module the lock has no entry for, on one of
	// several hosts: the others' floors are known to nobody, and a refusal
	// is right.
	if fromHost != "" && !hasOld && slices.ContainsFunc(r.World.catalogueHosts(), func(h *Host) bool { return h.Name != fromHost }) {
		return nil // (by label, a module may run on any host of the catalogue)
	}
	// Likewise for a catalogue host the previous lock was not held
	// against (any module may run there by label), unless the entry reads
	// or records it.
	if fromHost != "" {
		var held []string
		if l := parseLock(r.World.Lock); l != nil {
			held = l.Hosts
		}
		for _, h := range r.World.catalogueHosts() {
			if h.Name == fromHost || slices.Contains(held, h.Name) {
				continue
			}
			if _, recorded := old.Recorded[h.Name]; hasOld && (recorded || slices.Contains(old.Hosts, h.Name)) {
				continue
			}
			return nil
		}
	}
	// Likewise for a host the entry neither read nor recorded (one that
	// joined runs_on since it was written).
	if fromHost != "" && hasOld && slices.ContainsFunc(m.Hosts, func(h string) bool {
		_, recorded := old.Recorded[h]
		return h != fromHost && !recorded && !slices.Contains(old.Hosts, h)
	}) {
		return nil
	}
	// lock --from-host also weighs what the lock recorded of the other
	// hosts: those containers must be clean too.
	if fromHost != "" && !r.clean(m, r.observedBy(m, "")) {
		return nil
	}
	r.Stats["liveness checked"]++
	oldDigest := old.Digest
	if fromHost != "" && len(obs) == 0 {
		// Not on this host: the old entry stays.
		if o.Decided() && o.Digest == oldDigest {
			return nil
		}
		return &Failure{Check: CheckLive, Msg: fmt.Sprintf("module %s runs nothing on %s: its entry must stay %s; pin gave %+v", m.Name, fromHost, shortRef(oldDigest), o)}
	}
	var floors []*Build
	var why []string
	for _, s := range obs {
		if Floor(s.ctr.State) {
			floors = append(floors, s.build)
			why = append(why, s.String())
		}
	}
	if fromHost != "" && hasOld {
		// lock --from-host reads one host; what the previous entry
		// recorded on the others stays a floor.
		for h, ds := range old.Recorded {
			if h == fromHost {
				continue
			}
			for i, d := range ds {
				if b := m.ByDigest(d); b != nil {
					if old.RecordedTags[h][i] != m.Canon[b.ID] {
						// Recorded under another tag ("latest"): as
						// unclean as a container started so.
						return nil
					}
					floors = append(floors, b)
					why = append(why, h+" ran "+b.name()+" (recorded in the lock)")
				}
			}
		}
	}
	var primary *Build
	switch {
	case m.Policy == "track-upstream" && fromHost != "":
		// lock --from-host weighs the old entry against what runs.
	case m.Policy == "track-upstream":
		primary = newestRelease(m)
	case m.Pin != "":
		primary = r.pinBuild(m)
	}
	all := slices.Clone(floors)
	if primary != nil {
		all = append(all, primary)
		why = append(why, "the primary "+primary.name())
	}
	withPrev := all
	if prev != nil {
		withPrev = append(slices.Clone(all), prev)
		why = append(why, "the previous lock "+prev.name())
	}
	if len(withPrev) == 0 {
		return nil // nothing to lock: a refusal is right
	}
	if m.Allowed() && hasOld && old.Allowed && primary != nil && spentAllowance(m, obs, old, prev, primary) {
		return nil // the words were used for another downgrade: a refusal is right
	}
	want := []int{maxRank(withPrev)}
	if m.Allowed() && len(all) > 0 && maxRank(all) != want[0] {
		want = append(want, maxRank(all))
	}
	if m.Policy == "exact" {
		if primary.Rank < want[0] && !m.Allowed() {
			return nil // a refusal is right
		}
		want = []int{primary.Rank}
	}
	fail := func(got string) *Failure {
		return &Failure{Check: CheckLive, Msg: fmt.Sprintf("module %s (clean, %s): pin must lock rank %v of {%s}; it %s", m.Name, m.Policy, want, strings.Join(why, "; "), got)}
	}
	if !o.Decided() {
		return fail(fmt.Sprintf("did not decide: %+v", o))
	}
	b := m.ByDigest(o.Digest)
	if b == nil || !slices.Contains(want, b.Rank) {
		return fail("locked " + nameOf(b, o.Digest))
	}
	return nil
}

func maxRank(bs []*Build) int {
	return slices.MaxFunc(bs, func(a, b *Build) int { return a.Rank - b.Rank }).Rank
}

func nameOf(b *Build, d string) string {
	if b == nil {
		return "unknown digest " + shortRef(d)
	}
	return b.name()
}

// plan checks that no cutover to a truly older image is called safe.
func (r *Runner) plan(hostName string) *Failure {
	w := r.World
	cuts, err := runPlan(w, hostName)
	if err != nil {
		for n := range w.Tampered {
			if w.Tampered[n] {
				return nil // a hand-edited entry: refusing the whole plan is right
			}
		}
		return &Failure{Check: CheckPlan, Msg: "plan failed: " + err.Error()}
	}
	entries := lockEntries(w.Lock)
	r.Stats["plan cutovers"] += len(cuts)
	for _, c := range cuts {
		m := w.Mod(c.Module)
		ctr := w.Host(c.Host).Ctrs[c.Module]
		if m == nil || ctr == nil || ctr.State == "created" || !slices.Contains(safeVerdicts, c.Verdict) {
			continue
		}
		locked, run := m.ByDigest(entries[m.Name].Digest), m.Builds[ctr.Build]
		if locked != nil && locked.Rank < run.Rank {
			return &Failure{Check: CheckPlan, Msg: fmt.Sprintf("module %s: plan says %q for a cutover from %s to the locked %s, truly older", m.Name, c.Verdict, seen{c.Host, ctr, run}, locked.name())}
		}
	}
	return nil
}

// outdated checks that a host running something truly newer than the lock
// gets a failing status.
func (r *Runner) outdated() *Failure {
	w := r.World
	st := runOutdated(w)
	r.Stats["outdated"]++
	entries := lockEntries(w.Lock)
	for _, m := range w.Mods {
		locked := m.ByDigest(entries[m.Name].Digest)
		if locked == nil {
			continue
		}
		failing := slices.ContainsFunc(st[m.Name], func(s string) bool { return !slices.Contains(passingStatuses, s) })
		for _, s := range r.observedBy(m, "") {
			if Floor(s.ctr.State) && s.build.Rank > locked.Rank && !failing {
				return &Failure{Check: CheckOutdated, Msg: fmt.Sprintf("module %s: %s, truly newer than the locked %s, yet outdated says %v", m.Name, s, locked.name(), st[m.Name])}
			}
		}
	}
	return nil
}
