package truth

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Features are the kinds of noise and events the generator can switch off
// (Gen.Without), to isolate a failure or to check a mutant against a
// baseline that passes.
var Features = []string{
	"stopped",      // exited and dead containers
	"vanish",       // containers vanish, hosts leave runs_on
	"pindown",      // catalogue pins edited (also down)
	"moves",        // floating tags re-pointed (also backwards)
	"tamper",       // lock entries edited by hand
	"lies",         // tags that lie, labels that disagree
	"pinlies",      // pins that call an unlabelled build by a newer one's tag
	"backports",    // a lower version built later
	"dates",        // epoch, equal and missing build dates
	"future",       // build dates after Now
	"variants",     // -rootless builds, v prefixes, floating 1.27 tags
	"prerelease",   // 1.28.0-rc.1 builds
	"index",        // multi-platform indexes and platform manifest digests
	"unversioned",  // modules without any version
	"allow",        // allow_downgrade, one_way and restore
	"rename",       // modules renamed, removed and added back
	"mixed",        // indexes whose platform entries are other builds (pinned by digest)
	"hosttags",     // unlabelled builds run under a newer tag given on the host ("docker tag")
	"subset",       // "pin resolve MODULE" steps
	"hostjoin",     // a host joins the catalogue; its containers are taken over by label
	"environments", // histories with two environments, promotions, holds and a clock (envgen.go)
	"hostmove",     // in half of those, hosts move between environments; "resolve --environment X" steps (hostmove.go)
	"skip",         // hosts down, skipped under skip_unreachable; modules renamed in histories with environments (drawn from skipRng)
	"health",       // in those, health checks that pass, fail or have not passed yet
	"minage",       // in those, track-upstream modules with a min_age
}

// Gen generates histories.
type Gen struct {
	// Without switches features off.
	Without map[string]bool
	// MaxSteps bounds the steps of one history (default 10).
	MaxSteps int
	rng      *rand.Rand
	seq      uint64
	// arm: a host of the history is linux/arm64 (then no mixed index is
	// drawn: see mixed).
	arm bool
	// steps counts the steps drawn so far (Next).
	steps int
	// envRng draws, apart from rng, whether a history declares
	// environments: the histories without them stay those they were.
	envRng *rand.Rand
	// env: the history declares environments; hosts are then the hosts
	// runs_on draws from (nil: h1, h2, h3).
	env   bool
	hosts []string
	// moves: hosts of the history move between environments
	// (hostmove.go; drawn from envRng).
	moves bool
	// skipRng draws, apart from rng, which hosts go down and come back
	// (skip_unreachable): the other draws of a history stay those they
	// were.
	skipRng *rand.Rand
	// down: the hosts drawn down so far.
	down map[string]bool
}

// NewGen returns the generator of history number history of a run seeded
// with seed: each history can be drawn again alone.
func NewGen(seed, history uint64, without map[string]bool) *Gen {
	return &Gen{Without: without, MaxSteps: 10, rng: rand.New(rand.NewPCG(seed, history)), envRng: rand.New(rand.NewPCG(seed^0x656e7669726f6e, history)),
		skipRng: rand.New(rand.NewPCG(seed^0x736b6970, history))}
}

func (g *Gen) on(f string) bool { return !g.Without[f] }
func (g *Gen) pct(p int) bool   { return g.rng.IntN(100) < p }

func (g *Gen) digest() string {
	g.seq++
	return fmt.Sprintf("sha256:%016x%016x%016x%016x", g.rng.Uint64(), g.rng.Uint64(), g.rng.Uint64(), g.seq)
}

var baseDate = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

// Setup generates the starting world of one history.
func (g *Gen) Setup() *Setup {
	if g.on("environments") && g.envRng.IntN(3) == 0 {
		return g.envSetup()
	}
	s := &Setup{}
	for i := range 3 {
		h := &Host{Name: fmt.Sprintf("h%d", i+1), Store: "classic", Platform: Platforms[0]}
		if g.pct(30) {
			h.Store = "containerd"
		}
		if g.on("index") && g.pct(20) {
			h.Platform = Platforms[1]
			g.arm = true
		}
		s.Hosts = append(s.Hosts, h)
	}
	if g.on("hostjoin") {
		// A host no runs_on names, out of the catalogue at first: modules
		// run there by their pin.module label.
		s.Hosts = append(s.Hosts, &Host{Name: "h4", Store: "classic", Platform: Platforms[0], Labelled: true, Out: true})
	}
	for i := range 1 + g.rng.IntN(3) {
		s.Mods = append(s.Mods, g.module(fmt.Sprintf("m%d", i+1)))
	}
	return s
}

func (g *Gen) module(name string) *Module {
	m := &Module{Name: name, Ctr: name, Repo: "reg.test/" + name, Tags: map[string]int{}, Floating: map[string][]int{}}
	r := g.rng.IntN(100)
	switch {
	case r < 30:
		m.Profile = "clean"
	case r < 60 || (r < 80 && !g.on("lies")) || !g.on("unversioned"):
		m.Profile = "varied"
	case r < 80:
		m.Profile = "noisy"
	default:
		m.Profile = "unversioned"
	}
	if m.Profile == "unversioned" {
		g.unversioned(m)
	} else {
		g.versioned(m)
	}
	g.mixed(m)
	g.catalogue(m)
	return m
}

// mixed adds, sometimes, an index whose linux/amd64 entry is an older
// single-manifest build's manifest and whose linux/arm64 entry a newer
// one's: a pull on linux/amd64 gets the older. Only in histories whose
// hosts are all linux/amd64, so that what every host pulls is known: the
// amd64 entry.
func (g *Gen) mixed(m *Module) {
	if !g.on("mixed") || g.arm || !g.pct(35) {
		return
	}
	var single []*Build
	for _, b := range m.Builds {
		// (Pinned by digest alone: a build whose label lies may not be an
		// entry, or nothing would show the lie.)
		if b.Manifests == nil && !labelLies(b) {
			single = append(single, b)
		}
	}
	if len(single) < 2 {
		return
	}
	y, x := single[g.rng.IntN(len(single))], single[g.rng.IntN(len(single))]
	if y.Rank >= x.Rank {
		return
	}
	b := &Build{ID: len(m.Builds), Rank: y.Rank, Ver: y.Ver, Versioned: y.Versioned, Variant: y.Variant, Digest: g.digest(),
		Manifests: map[string]string{Platforms[0]: y.Digest, Platforms[1]: x.Digest},
		Configs:   map[string]string{Platforms[0]: y.Config(Platforms[0]), Platforms[1]: x.Config(Platforms[0])},
		Mixed:     map[string]int{Platforms[0]: y.ID, Platforms[1]: x.ID},
		Label:     y.Label, Created: y.Created,
		Notes: []string{fmt.Sprintf("mixed index: %s is #%d, %s is #%d", Platforms[0], y.ID, Platforms[1], x.ID)}}
	m.Builds = append(m.Builds, b)
	m.Canon = append(m.Canon, "")
}

// mixedBuild returns the module's mixed index, or nil.
func mixedBuild(m *Module) *Build {
	for _, b := range m.Builds {
		if b.Mixed != nil {
			return b
		}
	}
	return nil
}

// versioned makes the builds of a module with versions, in the order they
// were built, and its tags.
func (g *Gen) versioned(m *Module) {
	varied := m.Profile != "clean"
	cur := Ver{Maj: 1, Min: 20 + g.rng.IntN(5), Pat: g.rng.IntN(3)}
	vers := []Ver{cur}
	has := func(v Ver) bool { return slices.Contains(vers, v) }
	backported := map[int]bool{}
	for n := 4 + g.rng.IntN(6); len(vers) < n; {
		r := g.rng.IntN(100)
		switch {
		case m.Profile == "varied" && g.on("backports") && r < 15 && cur.Min > 0:
			old := Ver{Maj: cur.Maj, Min: cur.Min - 1 - g.rng.IntN(2)}
			for has(old) || has(Ver{old.Maj, old.Min, old.Pat + 1, ""}) {
				old.Pat++
			}
			old.Pat++
			if old.Min < 0 || has(old) {
				continue
			}
			backported[len(vers)] = true
			vers = append(vers, old)
		case r < 65:
			cur.Pat++
			vers = append(vers, cur)
		case r < 92:
			cur = Ver{Maj: cur.Maj, Min: cur.Min + 1}
			if g.on("prerelease") && g.pct(50) {
				vers = append(vers, Ver{cur.Maj, cur.Min, 0, "rc.1"})
			}
			vers = append(vers, cur)
		default:
			cur = Ver{Maj: cur.Maj + 1}
			vers = append(vers, cur)
		}
	}
	sorted := slices.Clone(vers)
	slices.SortFunc(sorted, func(a, b Ver) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	pfx, alias := "", ""
	switch r := g.rng.IntN(100); {
	case !varied && r < 30, varied && r < 20:
		pfx = "v"
	case varied && g.on("variants") && r < 50:
		alias = "v"
	}
	for chrono, v := range vers {
		variants := []string{""}
		if varied && g.on("variants") && v.Pre == "" && g.pct(35) {
			variants = append(variants, "-rootless")
		}
		for vi, variant := range variants {
			b := g.build(m, slices.Index(sorted, v), baseDate.Add(time.Duration(chrono)*7*24*time.Hour+time.Duration(vi)*time.Hour))
			b.Ver, b.Versioned, b.Variant = v, true, variant
			switch r := g.rng.IntN(100); {
			case r < 65:
				b.Label = v.String()
			case r < 75 && v.Pre == "":
				b.Label = fmt.Sprintf("%d.%d", v.Maj, v.Min)
			}
			if backported[chrono] {
				// A backport's date misleads: its label says what it is,
				// so that a digest alone (a pin, a container pulled by
				// digest) does not leave only the date to order it.
				b.Notes = append(b.Notes, "backport")
				b.Label = v.String()
			}
			tag := pfx + v.String() + variant
			m.Canon = append(m.Canon, tag)
			m.Tags[tag] = b.ID
			if alias != "" {
				m.Tags[alias+v.String()+variant] = b.ID
			}
		}
	}
	if len(backported) > 0 {
		// A backport's build date misleads: where one exists, every
		// build says its full version in its label, or an image known by
		// a floating "1.27" alone would leave only dates to order it
		// against the backport, which they order wrongly.
		for _, b := range m.Builds {
			b.Label = b.Ver.String()
		}
	}
	// Floating tags: latest and, per minor and variant, "1.27".
	for _, b := range m.Builds {
		if b.Ver.Pre != "" {
			continue
		}
		if b.Variant == "" {
			m.Floating["latest"] = append(m.Floating["latest"], b.ID)
		}
		if g.on("variants") {
			f := fmt.Sprintf("%s%d.%d%s", pfx, b.Ver.Maj, b.Ver.Min, b.Variant)
			m.Floating[f] = append(m.Floating[f], b.ID)
		}
	}
	for f, ids := range m.Floating {
		best := ids[0]
		for _, id := range ids {
			if m.Builds[best].Ver.less(m.Builds[id].Ver) {
				best = id
			}
		}
		if f == "latest" || !strings.HasSuffix(f, "-rootless") || g.pct(50) {
			m.Tags[f] = best
		}
	}
	if m.Profile == "noisy" {
		g.lies(m, pfx)
	}
}

// lies adds tags that lie (the build keeps an honest full label) and labels
// that disagree with honest tags.
func (g *Gen) lies(m *Module, pfx string) {
	taken := func(v Ver) bool {
		for _, b := range m.Builds {
			if b.Ver == v {
				return true
			}
		}
		_, ok := m.Tags[pfx+v.String()]
		return ok
	}
	wrong := func(v Ver) (Ver, bool) {
		for range 10 {
			d := []int{-2, -1, 1, 2}[g.rng.IntN(4)]
			w := Ver{Maj: v.Maj, Min: v.Min + d, Pat: g.rng.IntN(4)}
			if w.Min >= 0 && !taken(w) {
				return w, true
			}
		}
		return Ver{}, false
	}
	for range 1 + g.rng.IntN(2) {
		b := m.Builds[g.rng.IntN(len(m.Builds))]
		if b.Noisy || b.Ver.Pre != "" || m.Tags["latest"] == b.ID {
			// ("latest" is no version: a label that lies under it would
			// show no disagreement.)
			continue
		}
		w, ok := wrong(b.Ver)
		if !ok {
			continue
		}
		if g.pct(60) {
			tag := pfx + w.String() + b.Variant
			m.Tags[tag] = b.ID
			b.Label = b.Ver.String()
			b.Notes = append(b.Notes, "tag "+tag+" lies")
		} else {
			b.Label = w.String()
			b.Notes = append(b.Notes, "label lies")
		}
		b.Noisy = true
	}
}

// unversioned makes builds with no version at all: only "latest" and
// digests name them; their dates are honest, or not plausible, or absent.
func (g *Gen) unversioned(m *Module) {
	for i := range 4 + g.rng.IntN(5) {
		b := g.build(m, i, baseDate.Add(time.Duration(i)*9*24*time.Hour))
		m.Canon = append(m.Canon, "")
		m.Floating["latest"] = append(m.Floating["latest"], b.ID)
	}
	m.Tags["latest"] = len(m.Builds) - 1
}

// build adds a build of the given rank built at date (before noise).
func (g *Gen) build(m *Module, rank int, date time.Time) *Build {
	b := &Build{ID: len(m.Builds), Rank: rank, Digest: g.digest(), Configs: map[string]string{}}
	if g.on("index") && g.pct(25) {
		b.Manifests = map[string]string{}
		for _, p := range Platforms {
			b.Manifests[p] = g.digest()
			b.Configs[p] = g.digest()
		}
	} else {
		b.Configs[Platforms[0]] = g.digest()
	}
	b.Created = date
	r := g.rng.IntN(100)
	switch {
	case !g.on("dates") && (r < 90 || !g.on("future")):
	case r < 70:
	case r < 78 && g.on("dates"):
		b.Created = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
		if g.pct(50) {
			b.Created = time.Time{}.AddDate(0, 0, 1) // 0001-01-02
		}
		b.Notes = append(b.Notes, "epoch date")
	case r < 84 && g.on("future"):
		b.Created = Now.AddDate(0, 1+g.rng.IntN(12), 0)
		b.Notes = append(b.Notes, "future date")
	case r < 91 && g.on("dates") && len(m.Builds) > 0:
		b.Created = m.Builds[len(m.Builds)-1].Created
		b.Notes = append(b.Notes, "same date as previous")
	case g.on("dates"):
		b.Created = time.Time{}
	}
	m.Builds = append(m.Builds, b)
	return b
}

// catalogue draws the module's catalogue settings.
func (g *Gen) catalogue(m *Module) {
	m.Policy = []string{"exact", "at-least-running", "track-upstream"}[g.rng.IntN(3)]
	switch {
	case m.Policy == "exact", m.Policy == "at-least-running" && g.pct(70):
		m.Pin = g.pin(m, m.Builds[g.rng.IntN(len(m.Builds))])
		if x := mixedBuild(m); x != nil && g.pct(50) {
			m.Pin = x.Digest
		}
	case m.Policy == "track-upstream" && m.Profile != "unversioned" && g.pct(30):
		m.Pin = variantPin(g.pin(m, m.Builds[g.rng.IntN(len(m.Builds))]))
	}
	if m.Policy == "track-upstream" && (m.Profile == "unversioned" || g.pct(20)) {
		m.Float = "latest"
	}
	if g.on("allow") {
		m.Allow = g.pct(20)
		m.OneWay = g.pct(30)
		m.Restore = m.Allow && m.OneWay && g.pct(50)
	}
	hosts := g.hosts
	if hosts == nil {
		hosts = []string{"h1", "h2", "h3"}
	}
	for _, h := range hosts {
		if g.pct(45) {
			m.Hosts = append(m.Hosts, h)
		}
	}
	if len(m.Hosts) == 0 {
		m.Hosts = []string{hosts[g.rng.IntN(len(hosts))]}
	}
}

// tagsOf lists the tags that name build b now, sorted.
func tagsOf(m *Module, b *Build) []string {
	var out []string
	for t, i := range m.Tags {
		if i == b.ID {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// labelLies reports whether b's label disagrees with its true version:
// then only a tag may name it, or no careful reader could tell.
func labelLies(b *Build) bool { return b.Noisy && b.Label != b.Ver.String() }

// pin writes a catalogue pin for build b.
func (g *Gen) pin(m *Module, b *Build) string {
	if g.on("pinlies") && b.Label == "" && b.Versioned && g.pct(20) {
		// A person's pin: the newest release's tag over this build's
		// digest. The build has no label to contradict it; the registry
		// does.
		var newest *Build
		for _, c := range m.Builds {
			if t := m.Canon[c.ID]; t != "" && c.Variant == b.Variant && b.Ver.less(c.Ver) && m.Tags[t] == c.ID && (newest == nil || newest.Ver.less(c.Ver)) {
				newest = c
			}
		}
		if newest != nil {
			return m.Canon[newest.ID] + "@" + b.Digest
		}
	}
	canon := m.Canon[b.ID]
	tags := tagsOf(m, b)
	r := g.rng.IntN(100)
	switch {
	case canon != "" && r < 50:
		return canon
	case canon != "" && r < 70:
		return canon + "@" + b.Digest
	case len(tags) > 0 && r < 85:
		t := tags[g.rng.IntN(len(tags))]
		if g.pct(50) {
			return t + "@" + b.Digest
		}
		return t
	case !labelLies(b):
		return b.Digest
	case canon != "":
		return canon
	}
	return ""
}

// ref says how a container was started with build b on host h: ":tag",
// "@digest" or ":tag@digest", by a tag that names b now.
func (g *Gen) ref(m *Module, b *Build, h *Host) string {
	d := b.Digest
	if b.Manifests != nil && g.pct(40) {
		d = b.Manifests[h.Platform]
	}
	canon := m.Canon[b.ID]
	if t := g.hostTag(m, b); t != "" {
		return ":" + t
	}
	tags := tagsOf(m, b)
	r := g.rng.IntN(100)
	switch {
	case canon != "" && m.Tags[canon] == b.ID && r < 60:
		return ":" + canon
	case len(tags) > 0 && r < 80:
		return ":" + tags[g.rng.IntN(len(tags))]
	case len(tags) > 0 && r < 90:
		return ":" + tags[g.rng.IntN(len(tags))] + "@" + d
	case !labelLies(b):
		return "@" + d
	case canon != "":
		return ":" + canon
	}
	return "@" + d
}

// hostTag is, sometimes, a tag given to unlabelled build b on the host
// ("docker tag"), newer than what b is: the newest release's tag of its
// variant (which the registry gives another build), or a release after
// it the registry never had. Nothing in b contradicts it; the registry
// does.
func (g *Gen) hostTag(m *Module, b *Build) string {
	if !g.on("hosttags") || b.Label != "" || !b.Versioned || m.Canon[b.ID] == "" || !g.pct(25) {
		return ""
	}
	var newest *Build
	for _, c := range m.Builds {
		if t := m.Canon[c.ID]; t != "" && c.Variant == b.Variant && c.Ver.Pre == "" && b.Ver.less(c.Ver) && m.Tags[t] == c.ID && (newest == nil || newest.Ver.less(c.Ver)) {
			newest = c
		}
	}
	if newest == nil {
		return ""
	}
	if g.pct(50) {
		return m.Canon[newest.ID]
	}
	// A release after the newest: pfx + version + variant, as the
	// module's tags are written.
	canon := m.Canon[newest.ID]
	pfx := strings.TrimSuffix(strings.TrimSuffix(canon, newest.Variant), newest.Ver.String())
	return pfx + Ver{Maj: newest.Ver.Maj, Min: newest.Ver.Min + 1}.String() + newest.Variant
}

// variantPin is pin as track-upstream takes one: its tag chooses the
// variant to follow, so a pin without a version tag (a digest alone,
// "latest") is no pin there (the catalogue refuses it): "".
func variantPin(pin string) string {
	tag, _, _ := strings.Cut(pin, "@")
	if tag == "" || strings.HasPrefix(tag, "sha256:") || tag == "latest" {
		return ""
	}
	return pin
}
