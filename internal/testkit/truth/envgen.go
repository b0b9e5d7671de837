package truth

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// envSetup generates the starting world of a history with two
// environments: staging (h1, h2) and production (h3, h4), promoted from
// staging after a soak of 24 hours or none. Its clock starts three days
// before Now, so that containers started at the start have run for a
// while when time passes.
func (g *Gen) envSetup() *Setup {
	g.env = true
	g.moves = g.on("hostmove") && g.envRng.IntN(3) != 0
	s := &Setup{Clock: Now.Add(-72 * time.Hour)}
	for i := range 4 {
		h := &Host{Name: fmt.Sprintf("h%d", i+1), Store: "classic", Platform: Platforms[0]}
		if g.pct(30) {
			h.Store = "containerd"
		}
		if g.on("index") && g.pct(20) {
			h.Platform = Platforms[1]
			g.arm = true
		}
		s.Hosts = append(s.Hosts, h)
		g.hosts = append(g.hosts, h.Name)
	}
	var soak time.Duration
	if g.pct(60) {
		soak = 24 * time.Hour
	}
	staging := &Env{Name: "staging", Hosts: []string{"h1", "h2"}}
	production := &Env{Name: "production", Hosts: []string{"h3", "h4"}, From: "staging", Soak: soak}
	s.Envs = []*Env{staging, production}
	for i := range 1 + g.rng.IntN(3) {
		m := g.module(fmt.Sprintf("m%d", i+1))
		if m.Policy == "track-upstream" && g.on("minage") && g.envRng.IntN(100) < 40 {
			m.MinAge = []time.Duration{24 * time.Hour, 48 * time.Hour}[g.envRng.IntN(2)]
		}
		// Most modules run in both environments: what is promoted.
		for _, e := range s.Envs {
			if !inEnv(m, e) && g.pct(85) {
				m.Hosts = append(m.Hosts, e.Hosts[g.rng.IntN(len(e.Hosts))])
				slices.Sort(m.Hosts)
			}
		}
		s.Mods = append(s.Mods, m)
	}
	return s
}

// envNext returns the events before the next step of a history with
// environments, and the step.
func (g *Gen) envNext(w *World) []Op {
	var ops []Op
	for range g.rng.IntN(4) {
		if o, ok := g.envEvent(w); ok {
			ops = append(ops, o)
		}
	}
	if g.pct(30) {
		ops = append(ops, g.rollout(w)...)
	}
	h := w.Hosts[g.rng.IntN(len(w.Hosts))].Name
	switch r := g.rng.IntN(100); {
	case r < 22:
		ops = append(ops, Op{Kind: OpResolve})
	case r < 30 && g.on("subset"):
		ops = append(ops, Op{Kind: OpOnly, Mod: w.Mods[g.rng.IntN(len(w.Mods))].Name})
	case r < 47 && g.down[h]:
		// (lock --from-host and plan of a host that cannot be read
		// fail: the host is asked alone.)
		ops = append(ops, Op{Kind: OpResolve})
	case r < 40:
		ops = append(ops, Op{Kind: OpLock, Host: h})
	case r < 47:
		ops = append(ops, Op{Kind: OpPlan, Host: h})
	case r < 53:
		ops = append(ops, Op{Kind: OpOutdated})
	case r < 90:
		ops = append(ops, g.promotion(w))
	default:
		m := w.Mods[g.rng.IntN(len(w.Mods))]
		ops = append(ops, Op{Kind: OpLift, Host: "staging", Tag: "production", Mod: m.Name})
	}
	return ops
}

// promotion draws "pin promote staging production": every module, some
// of those that run in production, or a manual pick of one.
func (g *Gen) promotion(w *World) Op {
	o := Op{Kind: OpPromote, Host: "staging", Tag: "production", Build: -1}
	prod := w.Env("production")
	var in []*Module
	for _, m := range w.Mods {
		if inEnv(m, prod) {
			in = append(in, m)
		}
	}
	r := g.rng.IntN(100)
	if len(in) == 0 || r < 55 {
		return o
	}
	if r < 80 {
		var names []string
		for _, m := range in {
			if g.pct(50) {
				names = append(names, m.Name)
			}
		}
		if len(names) == 0 {
			names = []string{in[g.rng.IntN(len(in))].Name}
		}
		o.Text = strings.Join(names, ",")
		return o
	}
	// A manual pick: half the time the build a host of staging runs,
	// else any build of the module.
	m := in[g.rng.IntN(len(in))]
	runnable := slices.DeleteFunc(slices.Clone(m.Builds), func(b *Build) bool { return b.Mixed != nil })
	b := runnable[g.rng.IntN(len(runnable))]
	if g.pct(50) {
		for _, hn := range envHosts(m, w.Env("staging")) {
			if c := w.Host(hn).ctr(m.Name); c != nil && Runs(c.State) {
				b = m.Builds[c.Build]
				break
			}
		}
	}
	o.Text, o.Build, o.Ref = m.Name, b.ID, b.Digest
	// (A build whose label lies is named by its tag too, so that the
	// disagreement shows: fairness, as for pins.)
	if t := m.Canon[b.ID]; t != "" && (labelLies(b) || g.pct(50)) {
		o.Ref = t + "@" + b.Digest
	}
	return o
}

// envEvent draws one event of a history with environments: time passes,
// an engine restarts a container, or one of the events of every history
// (no renames, hand edits or hosts joining: the single-lock histories
// check those).
func (g *Gen) envEvent(w *World) (Op, bool) {
	switch r := g.rng.IntN(100); {
	case r < 22:
		hours := []int{1, 6, 12, 20, 26, 49}[g.rng.IntN(6)]
		return Op{Kind: OpTick, Text: fmt.Sprintf("%dh", hours)}, true
	case r < 30:
		m := w.Mods[g.rng.IntN(len(w.Mods))]
		hn := m.Hosts[g.rng.IntN(len(m.Hosts))]
		if c := w.Host(hn).ctr(m.Name); c != nil && Runs(c.State) {
			return Op{Kind: OpRestart, Mod: m.Name, Host: hn}, true
		}
		return Op{}, false
	case r < 38 && g.on("health"):
		m := w.Mods[g.rng.IntN(len(w.Mods))]
		hn := m.Hosts[g.rng.IntN(len(m.Hosts))]
		if c := w.Host(hn).ctr(m.Name); c != nil {
			verdict := []string{"healthy", "healthy", "unhealthy", "starting"}[g.rng.IntN(4)]
			return Op{Kind: OpHealth, Mod: m.Name, Host: hn, State: verdict}, true
		}
		return Op{}, false
	}
	return g.event(w)
}

// rollout deploys one build of a module on each of its hosts in an
// environment (staging, mostly), one host after the other, time passing
// between them at times: a staggered rollout, whose hosts agree on the
// build but not on how long it has run.
func (g *Gen) rollout(w *World) []Op {
	m := w.Mods[g.rng.IntN(len(w.Mods))]
	e := w.Envs[0]
	if g.pct(20) {
		e = w.Envs[1]
	}
	runnable := slices.DeleteFunc(slices.Clone(m.Builds), func(b *Build) bool { return b.Mixed != nil })
	slices.SortFunc(runnable, func(a, b *Build) int { return b.Rank - a.Rank })
	b := runnable[g.rng.IntN(min(3, len(runnable)))]
	var ops []Op
	for i, hn := range envHosts(m, e) {
		if i > 0 && g.pct(40) {
			ops = append(ops, Op{Kind: OpTick, Text: []string{"1h", "6h", "20h", "26h"}[g.rng.IntN(4)]})
		}
		ops = append(ops, Op{Kind: OpRun, Mod: m.Name, Host: hn, Build: b.ID, Ref: g.ref(m, b, w.Host(hn)), State: "running"})
	}
	return ops
}
