package truth

import (
	"slices"
)

// Start returns the events that start a history: containers on the
// modules' hosts.
func (g *Gen) Start(w *World) []Op {
	var ops []Op
	for _, m := range w.Mods {
		for _, hn := range m.Hosts {
			if g.pct(75) {
				ops = append(ops, g.run(w, m, w.Host(hn)))
			}
		}
		for _, h := range w.Hosts {
			if h.Labelled && g.pct(80) {
				ops = append(ops, g.run(w, m, h))
			}
		}
	}
	return ops
}

// Steps draws how many steps a history has: a few, up to MaxSteps.
func (g *Gen) Steps() int {
	n := g.MaxSteps
	if n <= 0 {
		n = 10
	}
	return 1 + g.rng.IntN(n)
}

// Next returns the events before the next step, and the step, drawn
// against the world as it is now.
func (g *Gen) Next(w *World) []Op {
	g.steps++
	if g.env {
		ops := append(g.downs(w), g.envRename(w)...)
		return append(ops, append(g.hostMoves(w), g.envNext(w)...)...)
	}
	ops := g.downs(w)
	for range g.rng.IntN(4) {
		if o, ok := g.event(w); ok {
			ops = append(ops, o)
		}
	}
	hosts := w.catalogueHosts()
	h := hosts[g.rng.IntN(len(hosts))].Name
	if g.down[h] {
		// (lock --from-host and plan of a host that cannot be read
		// fail: the host is asked alone.)
		h = ""
	}
	// Steps by weight: resolve, resolve MODULE, lock --from-host, plan,
	// outdated. Once a host joined the catalogue, the steps that could
	// record it as read for modules that never were decided against it
	// come more often.
	weights := [5]int{25, 12, 25, 18, 20}
	if lh := w.Host("h4"); lh != nil && !lh.Out {
		weights = [5]int{12, 28, 35, 13, 12}
	}
	if !g.on("subset") {
		weights[0], weights[1] = weights[0]+weights[1], 0
	}
	r := g.rng.IntN(100)
	switch {
	case r < weights[0]:
		ops = append(ops, Op{Kind: OpResolve})
	case r < weights[0]+weights[1]:
		ops = append(ops, Op{Kind: OpOnly, Mod: w.Mods[g.rng.IntN(len(w.Mods))].Name})
	case h == "" && r < weights[0]+weights[1]+weights[2]+weights[3]:
		ops = append(ops, Op{Kind: OpResolve})
	case r < weights[0]+weights[1]+weights[2]:
		ops = append(ops, Op{Kind: OpLock, Host: h})
	case r < weights[0]+weights[1]+weights[2]+weights[3]:
		ops = append(ops, Op{Kind: OpPlan, Host: h})
	default:
		ops = append(ops, Op{Kind: OpOutdated})
	}
	return ops
}

func (g *Gen) state(start bool) string {
	r := g.rng.IntN(100)
	switch {
	case r < 60:
		return "running"
	case r < 65:
		return "paused"
	case r < 70:
		return "restarting"
	case r < 80 && g.on("stopped"):
		return "exited"
	case r < 85 && g.on("stopped"):
		return "dead"
	case r < 95 && start:
		return "created"
	}
	return "running"
}

// run starts a container of m on h, mostly with a build at least as new
// as the module's newest so far.
func (g *Gen) run(w *World, m *Module, h *Host) Op {
	runnable := slices.DeleteFunc(slices.Clone(m.Builds), func(b *Build) bool { return b.Mixed != nil })
	b := runnable[g.rng.IntN(len(runnable))]
	if g.pct(50) {
		top := slices.MaxFunc(runnable, func(a, b *Build) int { return a.Rank - b.Rank }).Rank
		var high []*Build
		for _, x := range runnable {
			if x.Rank >= top-2 {
				high = append(high, x)
			}
		}
		b = high[g.rng.IntN(len(high))]
	}
	return Op{Kind: OpRun, Mod: m.Name, Host: h.Name, Build: b.ID, Ref: g.ref(m, b, h), State: g.state(true)}
}

// event draws one event; false when the drawn kind is switched off or has
// nothing to act on.
func (g *Gen) event(w *World) (Op, bool) {
	if g.on("rename") && !g.env && g.pct(14) {
		return g.renaming(w)
	}
	if g.on("hostjoin") && g.steps > 2 && g.pct(12) {
		// (Once the lock was likely written without it.)
		for _, h := range w.Hosts {
			if h.Out {
				return Op{Kind: OpHost, Host: h.Name}, true
			}
		}
		return Op{}, false
	}
	m := w.Mods[g.rng.IntN(len(w.Mods))]
	h := w.Hosts[g.rng.IntN(len(w.Hosts))]
	if len(m.Hosts) > 0 && g.pct(85) {
		h = w.Host(m.Hosts[g.rng.IntN(len(m.Hosts))])
	}
	if lh := w.Host("h4"); lh != nil && !lh.Out && g.pct(25) {
		h = lh // where modules run by label
	}
	c := h.Ctrs[m.Name]
	r := g.rng.IntN(100)
	switch {
	case r < 35:
		return g.run(w, m, h), true
	case r < 50 && c != nil:
		return Op{Kind: OpState, Mod: m.Name, Host: h.Name, State: g.state(false)}, true
	case r < 58 && c != nil && g.on("vanish"):
		return Op{Kind: OpVanish, Mod: m.Name, Host: h.Name}, true
	case r < 64 && g.on("vanish"):
		if slices.Contains(m.Hosts, h.Name) {
			if len(m.Hosts) > 1 {
				return Op{Kind: OpLeave, Mod: m.Name, Host: h.Name}, true
			}
			return Op{}, false
		}
		if h.Labelled {
			return Op{}, false // no runs_on names it
		}
		return Op{Kind: OpJoin, Mod: m.Name, Host: h.Name}, true
	case r < 74 && g.on("pindown"):
		p := g.pin(m, m.Builds[g.rng.IntN(len(m.Builds))])
		if m.Policy != "exact" && g.pct(20) {
			p = ""
		}
		if m.Policy == "track-upstream" {
			p = variantPin(p)
		}
		if p == "" && m.Policy == "exact" {
			return Op{}, false
		}
		return Op{Kind: OpPin, Mod: m.Name, Text: p}, true
	case r < 86 && g.on("moves"):
		var fl []string
		for f := range m.Floating {
			if _, ok := m.Tags[f]; ok {
				fl = append(fl, f)
			}
		}
		if len(fl) == 0 {
			return Op{}, false
		}
		slices.Sort(fl)
		f := fl[g.rng.IntN(len(fl))]
		ids := m.Floating[f]
		if f == "latest" {
			// "latest" is no version: a build whose label lies shows no
			// disagreement under it, so it never names one (fairness).
			ids = slices.DeleteFunc(slices.Clone(ids), func(id int) bool { return labelLies(m.Builds[id]) })
			if len(ids) == 0 {
				return Op{}, false
			}
		}
		return Op{Kind: OpMove, Mod: m.Name, Tag: f, Build: ids[g.rng.IntN(len(ids))]}, true
	case r < 94 && g.on("tamper") && !g.env:
		return Op{Kind: OpTamper, Mod: m.Name}, true
	case r < 100 && g.on("allow"):
		a := g.pct(50)
		return Op{Kind: OpAllow, Mod: m.Name, Allow: a, Rest: a && g.pct(50)}, true
	}
	return Op{}, false
}

// renaming draws a rename, a removal, or a removed module added back
// (under its name, or another).
func (g *Gen) renaming(w *World) (Op, bool) {
	m := w.Mods[g.rng.IntN(len(w.Mods))]
	switch r := g.rng.IntN(100); {
	case r < 40:
		name := m.Name + "r"
		if w.Mod(name) != nil || w.gone(name) != nil {
			return Op{}, false
		}
		o := Op{Kind: OpRename, Mod: m.Name, Text: name}
		if g.pct(50) {
			o.State = "gone" // renamed while its containers are gone
		}
		return o, true
	case r < 70:
		if len(w.Mods) < 2 {
			return Op{}, false
		}
		return Op{Kind: OpRemove, Mod: m.Name}, true
	case len(w.Gone) > 0:
		gm := w.Gone[g.rng.IntN(len(w.Gone))]
		o := Op{Kind: OpReadd, Mod: gm.Name}
		if g.pct(50) {
			o.Text = gm.Name + "b"
		}
		return o, true
	}
	return Op{}, false
}

// downs draws, from skipRng, a host of the catalogue going down (one
// whose catalogue entry says skip_unreachable) or coming back: runs go
// on without a host that is down, and must not record it as read.
func (g *Gen) downs(w *World) []Op {
	if !g.on("skip") || g.skipRng.IntN(100) >= 25 {
		return nil
	}
	hosts := w.catalogueHosts()
	h := hosts[g.skipRng.IntN(len(hosts))]
	if g.down == nil {
		g.down = map[string]bool{}
	}
	o := Op{Kind: OpDown, Host: h.Name}
	if g.down[h.Name] {
		o.State = "up"
	}
	g.down[h.Name] = o.State != "up"
	return []Op{o}
}

// envRename draws, from skipRng, a module of a history with environments
// renamed, its containers kept: its floor in each environment's lock,
// and the hold a manual pick put there, follow it.
func (g *Gen) envRename(w *World) []Op {
	if !g.on("rename") || g.skipRng.IntN(100) >= 8 {
		return nil
	}
	m := w.Mods[g.skipRng.IntN(len(w.Mods))]
	to := m.Name + "r"
	if w.Mod(to) != nil || w.gone(to) != nil {
		return nil
	}
	return []Op{{Kind: OpRename, Mod: m.Name, Text: to}}
}
