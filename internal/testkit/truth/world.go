package truth

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Now is the clock every step runs at: build dates after it are future.
var Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// Platforms of the generated indexes; single-manifest images are the first.
var Platforms = []string{"linux/amd64", "linux/arm64"}

// Ver is a true version: a release, or a pre-release of it when Pre is set.
type Ver struct {
	Maj, Min, Pat int
	Pre           string // "rc.1"; empty for a release
}

func (v Ver) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Maj, v.Min, v.Pat)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	return s
}

// less orders true versions: numeric parts, then a pre-release below its
// release. It is the oracle's own, written from the semver rules, not pin's.
func (v Ver) less(o Ver) bool {
	if v.Maj != o.Maj {
		return v.Maj < o.Maj
	}
	if v.Min != o.Min {
		return v.Min < o.Min
	}
	if v.Pat != o.Pat {
		return v.Pat < o.Pat
	}
	return v.Pre != "" && o.Pre == ""
}

// Build is one image: a release of a module in one variant.
type Build struct {
	ID int
	// Rank is the true release order. Builds of one release in different
	// variants share it: neither is older.
	Rank int
	// Ver is the true version; Versioned is false for a module without
	// versions.
	Ver       Ver
	Versioned bool
	// Variant is the tag suffix ("", "-rootless").
	Variant string
	// Digest is the registry digest: an index digest when Manifests is set.
	Digest string
	// Manifests maps platforms to manifest digests for an index; nil for a
	// single manifest (of Platforms[0]).
	Manifests map[string]string
	// Configs maps platforms to config digests.
	Configs map[string]string
	// Mixed, for an index whose entries are other builds' manifests (a
	// mixed index), maps each platform to the build its entry is: a pull
	// gets that build. Its Rank is that of its linux/amd64 entry (what
	// every host of a history with mixed indexes pulls); no container
	// runs it and no tag names it.
	Mixed map[string]int
	// Label is the org.opencontainers.image.version label ("" when none).
	Label   string
	Created time.Time
	// Notes say what noise the build carries, for reports.
	Notes []string
	// Noisy marks a build with a lie about its version (a tag that lies or
	// a label that disagrees).
	Noisy bool
}

// Config is the build's config digest for a platform.
func (b *Build) Config(platform string) string {
	if c, ok := b.Configs[platform]; ok {
		return c
	}
	return b.Configs[Platforms[0]]
}

// Module is one module: its images, its registry's tags, and what the
// catalogue says of it.
type Module struct {
	Name    string
	Repo    string
	Profile string // clean, varied, noisy, unversioned
	Builds  []*Build
	// Tags maps each tag the registry holds now to a build index.
	Tags map[string]int
	// Canon is each build's own full tag ("" for none).
	Canon []string
	// Floating maps each floating tag ("latest", "1.27", "1.27-rootless")
	// to the builds it may name when upstream moves it.
	Floating map[string][]int

	// Ctr is the name of the module's containers on its hosts: the name
	// it was first given (a module renamed keeps its containers).
	Ctr string

	Policy  string // exact, at-least-running, track-upstream
	Pin     string // "", "tag", "tag@sha256:…", "sha256:…"
	Float   string // track-upstream's floating tag ("latest"), or ""
	Allow   bool
	OneWay  bool
	Restore bool
	Hosts   []string
	// MinAge is a track-upstream module's min_age (histories with
	// environments only); zero for none.
	MinAge time.Duration
	// Appeared is when each tag first named each build ("tag@digest"),
	// by the world's clock: the earliest pin can have seen it there.
	// Kept only in histories with environments.
	Appeared map[string]time.Time
}

// Allowed reports whether the catalogue states a downgrade in words.
func (m *Module) Allowed() bool { return m.Allow && (!m.OneWay || m.Restore) }

// ByDigest finds the build a digest names: its registry digest, one of its
// platform manifests, or a config digest.
func (m *Module) ByDigest(d string) *Build {
	for _, b := range m.Builds {
		if b.Digest == d {
			return b
		}
		for _, x := range b.Manifests {
			if x == d {
				return b
			}
		}
		for _, x := range b.Configs {
			if x == d {
				return b
			}
		}
	}
	return nil
}

func (m *Module) clone() *Module {
	c := *m
	c.Tags = maps.Clone(m.Tags)
	c.Hosts = slices.Clone(m.Hosts)
	c.Appeared = maps.Clone(m.Appeared)
	return &c
}

// Ctr is the container a host runs for a module.
type Ctr struct {
	Build int
	// Ref is how it was started, after the repository: ":tag",
	// "@sha256:…" or ":tag@sha256:…".
	Ref   string
	State string
	// StartedAt is when the engine last started it (the world's clock
	// then); Restarts how often the engine restarted it since.
	StartedAt time.Time
	Restarts  int
	// Health is its health check's verdict ("healthy", "unhealthy",
	// "starting"); "" for a container without a health check.
	Health string
}

// Host is a machine of the fleet.
type Host struct {
	Name     string
	Store    string // classic or containerd
	Platform string
	Ctrs     map[string]*Ctr // by module name
	// Labelled: no runs_on names the host; its containers are taken
	// over by their pin.module label. Out: it is not in the catalogue
	// (yet): pin reads nothing there until it joins.
	Labelled, Out bool
	// Down: the host cannot be read, and the catalogue lets a run go on
	// without it (skip_unreachable): pin reads nothing there, and must
	// not record it as read.
	Down bool
}

// catalogueHosts are the hosts of the catalogue, by name.
func (w *World) catalogueHosts() []*Host {
	var out []*Host
	for _, h := range w.Hosts {
		if !h.Out {
			out = append(out, h)
		}
	}
	return out
}

// Floor reports whether a container state bounds the lock: every state but
// "created" (never started).
func Floor(state string) bool { return state != "created" }

// World is the state a history acts on.
type World struct {
	Mods  []*Module // sorted by name
	Hosts []*Host   // sorted by name
	// Gone are the modules removed from the catalogue, by the name they
	// had; their containers stay on the hosts (no module takes them over).
	Gone []*Module
	// Lock is the lock file's bytes; nil before the first write.
	Lock []byte
	// Tampered marks modules whose lock entry was edited by hand since pin
	// last wrote it.
	Tampered map[string]bool

	// Envs are the catalogue's environments (envworld.go); nil for a
	// history without them, whose one lock is Lock.
	Envs []*Env
	// Locks are each environment's lock file's bytes, by environment
	// name; Dir is the folder they are written in, as pin reads them.
	Locks map[string][]byte
	Dir   string
	// Seen is pin's memory of upstream tags (the cache's seen file): when
	// it first saw each digest under a tag, "repo tag digest".
	Seen map[string]time.Time
	// Clock is the time now: it passes (OpTick) in histories with
	// environments, and is Now in the others.
	Clock time.Time
}

// Mod returns the module named name, or nil.
func (w *World) Mod(name string) *Module {
	for _, m := range w.Mods {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Host returns the host named name, or nil.
func (w *World) Host(name string) *Host {
	for _, h := range w.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Setup is a history's starting world: modules and hosts, no containers.
type Setup struct {
	Mods  []*Module
	Hosts []*Host
	// Envs are the environments declared (nil: none); Clock the time the
	// history starts at (zero: Now).
	Envs  []*Env
	Clock time.Time
}

// World returns a fresh world from the setup, sharing only the builds.
func (s *Setup) World() *World {
	w := &World{Tampered: map[string]bool{}, Envs: cloneEnvs(s.Envs), Clock: s.Clock, Seen: map[string]time.Time{}}
	if w.Clock.IsZero() {
		w.Clock = Now
	}
	if s.Envs != nil {
		w.Locks = map[string][]byte{}
	}
	for _, m := range s.Mods {
		c := m.clone()
		if s.Envs != nil {
			c.Appeared = map[string]time.Time{}
			for tag, id := range c.Tags {
				c.Appeared[tag+"@"+c.Builds[id].Digest] = w.Clock
			}
		}
		w.Mods = append(w.Mods, c)
	}
	for _, h := range s.Hosts {
		w.Hosts = append(w.Hosts, &Host{Name: h.Name, Store: h.Store, Platform: h.Platform, Ctrs: map[string]*Ctr{}, Labelled: h.Labelled, Out: h.Out})
	}
	return w
}

// without returns the setup without module name.
func (s *Setup) without(name string) *Setup {
	c := &Setup{Hosts: s.Hosts, Envs: s.Envs, Clock: s.Clock}
	for _, m := range s.Mods {
		if m.Name != name {
			c.Mods = append(c.Mods, m)
		}
	}
	return c
}

// OpKind names an operation of a history.
type OpKind string

// Steps call pin; events change the world between steps.
const (
	OpResolve  OpKind = "resolve"
	OpLock     OpKind = "lock"
	OpPlan     OpKind = "plan"
	OpOutdated OpKind = "outdated"

	OpRun    OpKind = "run"    // a container (re)starts with a build
	OpState  OpKind = "state"  // a container changes state
	OpVanish OpKind = "vanish" // a container is removed
	OpJoin   OpKind = "join"   // a host joins a module's runs_on
	OpLeave  OpKind = "leave"  // a host leaves a module's runs_on
	OpPin    OpKind = "pin"    // the catalogue pin is edited
	OpMove   OpKind = "move"   // an upstream tag moves (Build < 0: deleted)
	OpTamper OpKind = "tamper" // the lock entry's digest is swapped by hand
	OpAllow  OpKind = "allow"  // allow_downgrade / restore edited
	OpOnly   OpKind = "only"   // "pin resolve MODULE": Mod alone decided
	OpRename OpKind = "rename" // a module is renamed (Text), its containers kept, or gone (State "gone")
	OpHost   OpKind = "host"   // a host joins the catalogue
	OpRemove OpKind = "remove" // a module leaves the catalogue
	OpReadd  OpKind = "readd"  // a removed module comes back (as Text, when set)
	OpDown   OpKind = "down"   // a host goes down (skip_unreachable), or comes back (State "up")
)

// Op is one operation. Events carry every parameter, so that a history
// replays without its generator.
type Op struct {
	Kind  OpKind
	Mod   string
	Host  string
	Build int
	Ref   string
	State string
	Tag   string
	Text  string
	Allow bool
	Rest  bool
}

// Step reports whether the op calls pin.
func (o Op) Step() bool {
	switch o.Kind {
	case OpResolve, OpOnly, OpLock, OpPlan, OpOutdated, OpPromote, OpLift, OpResolveEnv:
		return true
	}
	return false
}

// apply performs an event on the world and returns it as performed;
// events that no longer make sense (a shrunk history) do nothing.
func (w *World) apply(o Op) Op {
	m := w.Mod(o.Mod)
	h := w.Host(o.Host)
	switch o.Kind {
	case OpRun:
		if h != nil && m != nil {
			h.Ctrs[o.Mod] = &Ctr{Build: o.Build, Ref: o.Ref, State: o.State, StartedAt: w.Clock}
		}
	case OpState:
		if c := h.ctr(o.Mod); c != nil {
			if !Runs(c.State) && Runs(o.State) {
				c.StartedAt = w.Clock // started again
			}
			c.State = o.State
		}
	case OpVanish:
		if h != nil {
			delete(h.Ctrs, o.Mod)
		}
	case OpHost:
		if h != nil {
			h.Out = false
		}
	case OpDown:
		if h != nil {
			h.Down = o.State != "up"
		}
	case OpJoin:
		if m != nil && h != nil && !h.Labelled && !slices.Contains(m.Hosts, o.Host) {
			m.Hosts = append(m.Hosts, o.Host)
			slices.Sort(m.Hosts)
		}
	case OpLeave:
		if m != nil && !w.lastInEnv(m, o.Host) {
			m.Hosts = slices.DeleteFunc(m.Hosts, func(x string) bool { return x == o.Host })
		}
	case OpPin:
		if m != nil {
			m.Pin = o.Text
		}
	case OpMove:
		if m != nil {
			if o.Build < 0 {
				delete(m.Tags, o.Tag)
			} else {
				m.Tags[o.Tag] = o.Build
				if k := o.Tag + "@" + m.Builds[o.Build].Digest; m.Appeared != nil && !hasKey(m.Appeared, k) {
					m.Appeared[k] = w.Clock
				}
			}
		}
	case OpTamper:
		// The digest becomes that of the truly next older build, chosen
		// here so that generating a history never depends on what pin
		// decided: a mutant and the baseline play the same ops.
		o.Build = -1
		if m == nil || w.Lock == nil {
			return o
		}
		cur := m.ByDigest(lockEntries(w.Lock)[m.Name].Digest)
		if cur == nil {
			return o
		}
		var older *Build
		for _, b := range m.Builds {
			if b.Mixed == nil && b.Rank < cur.Rank && (older == nil || b.Rank > older.Rank) {
				older = b
			}
		}
		if older == nil {
			return o
		}
		if b, ok := tamperLock(w.Lock, m.Name, older.Digest); ok {
			w.Lock = b
			w.Tampered[m.Name] = true
			o.Build = older.ID
		}
	case OpAllow:
		if m != nil {
			m.Allow, m.Restore = o.Allow, o.Rest
		}
	case OpRename:
		if m != nil && o.Text != "" && w.Mod(o.Text) == nil && w.gone(o.Text) == nil {
			w.rename(m, o.Text)
			w.sortMods()
			if o.State == "gone" {
				for _, h := range w.Hosts {
					delete(h.Ctrs, o.Text)
				}
			}
		}
	case OpRemove:
		if m != nil && len(w.Mods) > 1 {
			w.Mods = slices.DeleteFunc(w.Mods, func(x *Module) bool { return x == m })
			w.Gone = append(w.Gone, m)
		}
	case OpReadd:
		g := w.gone(o.Mod)
		if g == nil || (o.Text != "" && (w.Mod(o.Text) != nil || w.gone(o.Text) != nil)) || w.Mod(o.Mod) != nil {
			return o
		}
		w.Gone = slices.DeleteFunc(w.Gone, func(x *Module) bool { return x == g })
		if o.Text != "" {
			w.rename(g, o.Text)
		}
		w.Mods = append(w.Mods, g)
		w.sortMods()
	default:
		w.applyEnv(o, m, h)
	}
	return o
}

// gone returns the removed module named name, or nil.
func (w *World) gone(name string) *Module {
	for _, m := range w.Gone {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// rename gives m another name; its containers, keyed by module name on
// the hosts, follow it (they keep their container name, m.Ctr).
func (w *World) rename(m *Module, name string) {
	old := m.Name
	for _, h := range w.Hosts {
		if c, ok := h.Ctrs[old]; ok {
			delete(h.Ctrs, old)
			h.Ctrs[name] = c
		}
	}
	if w.Tampered[old] {
		delete(w.Tampered, old)
		w.Tampered[name] = true
	}
	m.Name = name
}

func (w *World) sortMods() {
	slices.SortFunc(w.Mods, func(a, b *Module) int { return strings.Compare(a.Name, b.Name) })
}

// describe renders an op for people, naming builds by version and rank.
func (s *Setup) describe(o Op) string {
	var m *Module
	for _, x := range s.Mods {
		if x.Name == strings.TrimRight(o.Mod, "rb") {
			m = x
		}
	}
	bname := func(i int) string {
		if m == nil || i < 0 || i >= len(m.Builds) {
			return fmt.Sprintf("#%d", i)
		}
		return m.Builds[i].name()
	}
	switch o.Kind {
	case OpResolve, OpOutdated:
		return string(o.Kind)
	case OpLock:
		return "lock --from-host " + o.Host
	case OpOnly:
		return "resolve " + o.Mod
	case OpHost:
		return fmt.Sprintf("catalogue: host %s added (its containers are taken over by label)", o.Host)
	case OpDown:
		if o.State == "up" {
			return fmt.Sprintf("host %s is back", o.Host)
		}
		return fmt.Sprintf("host %s is down (skip_unreachable: runs go on without it)", o.Host)
	case OpPlan:
		return "plan " + o.Host
	case OpRun:
		return fmt.Sprintf("%s/%s starts %s from %s%s, %s", o.Host, o.Mod, bname(o.Build), o.Mod, shortRef(o.Ref), o.State)
	case OpState:
		return fmt.Sprintf("%s/%s is now %s", o.Host, o.Mod, o.State)
	case OpVanish:
		return fmt.Sprintf("%s/%s vanishes", o.Host, o.Mod)
	case OpJoin:
		return fmt.Sprintf("catalogue: module %s runs_on %s added", o.Mod, o.Host)
	case OpLeave:
		return fmt.Sprintf("catalogue: module %s runs_on %s removed", o.Mod, o.Host)
	case OpPin:
		return fmt.Sprintf("catalogue: module %s pin = %q", o.Mod, shortRef(o.Text))
	case OpMove:
		if o.Build < 0 {
			return fmt.Sprintf("upstream: tag %s:%s deleted", o.Mod, o.Tag)
		}
		return fmt.Sprintf("upstream: tag %s:%s now names %s", o.Mod, o.Tag, bname(o.Build))
	case OpTamper:
		if o.Build < 0 {
			return fmt.Sprintf("hand edit of lock entry %s: nothing older to swap in", o.Mod)
		}
		return fmt.Sprintf("hand edit: lock entry %s gets the digest of %s, other lines kept", o.Mod, bname(o.Build))
	case OpAllow:
		return fmt.Sprintf("catalogue: module %s allow_downgrade=%v restore=%v", o.Mod, o.Allow, o.Rest)
	case OpRename:
		if o.State == "gone" {
			return fmt.Sprintf("catalogue: module %s renamed %s, while its containers are gone", o.Mod, o.Text)
		}
		return fmt.Sprintf("catalogue: module %s renamed %s (its containers kept)", o.Mod, o.Text)
	case OpRemove:
		return fmt.Sprintf("catalogue: module %s removed", o.Mod)
	case OpReadd:
		if o.Text != "" {
			return fmt.Sprintf("catalogue: module %s added back as %s", o.Mod, o.Text)
		}
		return fmt.Sprintf("catalogue: module %s added back", o.Mod)
	default:
		if d := describeEnv(o, bname); d != "" {
			return d
		}
	}
	return string(o.Kind)
}

// name renders a build for reports: "#3 1.27.4-rootless (rank 5)".
func (b *Build) name() string {
	v := "unversioned"
	if b.Versioned {
		v = b.Ver.String() + b.Variant
	}
	return fmt.Sprintf("#%d %s (rank %d)", b.ID, v, b.Rank)
}

// shortRef abbreviates digests in a reference.
func shortRef(s string) string {
	i := strings.Index(s, "sha256:")
	if i < 0 || len(s) < i+7+12 {
		return s
	}
	return s[:i+7+12] + "…"
}

// Describe renders the setup: each module's settings and builds.
func (s *Setup) Describe() string {
	var b strings.Builder
	for _, e := range s.Envs {
		fmt.Fprintf(&b, "environment %s: hosts %v, from %q, soak %v\n", e.Name, e.Hosts, e.From, e.Soak)
	}
	if !s.Clock.IsZero() {
		fmt.Fprintf(&b, "clock starts at %s\n", s.Clock.Format(time.RFC3339))
	}
	for _, h := range s.Hosts {
		fmt.Fprintf(&b, "host %s: %s store, %s", h.Name, h.Store, h.Platform)
		if h.Labelled {
			b.WriteString(", containers taken over by label")
		}
		if h.Out {
			b.WriteString(", not in the catalogue")
		}
		b.WriteString("\n")
	}
	for _, m := range s.Mods {
		fmt.Fprintf(&b, "module %s (%s): policy %s, pin %q, tag %q, allow_downgrade=%v one_way=%v restore=%v, runs_on %v",
			m.Name, m.Profile, m.Policy, shortRef(m.Pin), m.Float, m.Allow, m.OneWay, m.Restore, m.Hosts)
		if m.MinAge > 0 {
			fmt.Fprintf(&b, ", min_age %v", m.MinAge)
		}
		b.WriteString("\n")
		for _, bd := range m.Builds {
			var tags []string
			for t, i := range m.Tags {
				if i == bd.ID {
					tags = append(tags, t)
				}
			}
			slices.Sort(tags)
			date := "no date"
			if !bd.Created.IsZero() {
				date = bd.Created.Format("2006-01-02T15")
			}
			idx := ""
			if bd.Manifests != nil {
				idx = " index"
			}
			fmt.Fprintf(&b, "  %s %s%s tags %v label %q %s %s\n", bd.name(), shortRef(bd.Digest), idx, tags, bd.Label, date, strings.Join(bd.Notes, ","))
		}
	}
	return b.String()
}
