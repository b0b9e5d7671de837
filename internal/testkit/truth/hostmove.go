package truth

import (
	"fmt"
	"slices"
)

// Hosts moving between environments (histories with environments): the
// catalogue edits the environment blocks' hosts lists, and a host of
// staging becomes production's, or back. What ran on it stays a floor
// there (docs/reference.md, "A host that moves between environments
// takes its floors with it").
const (
	// OpHostMove: host Host moves into environment Tag (a catalogue
	// edit: both environments' hosts lists change).
	OpHostMove OpKind = "hostmove"
	// OpResolveEnv: "pin resolve --environment Tag": that environment
	// alone is decided, and cmd/pin refuses the run when Tag's lock
	// still records a host that moved into an environment not decided.
	OpResolveEnv OpKind = "resolve-env"
)

// cloneEnvs copies environments, so that a world's moves leave its
// setup (replayed when shrinking) as it was.
func cloneEnvs(envs []*Env) []*Env {
	if envs == nil {
		return nil
	}
	out := make([]*Env, len(envs))
	for i, e := range envs {
		c := *e
		c.Hosts = slices.Clone(e.Hosts)
		out[i] = &c
	}
	return out
}

// moveHost moves host into environment to; an environment keeps one host
// at least (a promotion needs FROM and TO hosts), and a move to where the
// host is already is nothing.
func (w *World) moveHost(host, to string) {
	from, dst := w.EnvOf(host), w.Env(to)
	if from == nil || dst == nil || from == dst || len(from.Hosts) < 2 {
		return
	}
	from.Hosts = slices.DeleteFunc(from.Hosts, func(h string) bool { return h == host })
	dst.Hosts = append(dst.Hosts, host)
	slices.Sort(dst.Hosts)
}

// hostMoves draws, in a history whose hosts move (from g.envRng, so that
// the ops g.rng draws stay those of the history without moves as far as
// the world lets them), a host moving into the other environment, and on
// the way (reinstalled, drained) some of its containers removed, stopped
// or replaced by a truly older build; and, before a step, "pin resolve
// --environment X".
func (g *Gen) hostMoves(w *World) []Op {
	if !g.moves {
		return nil
	}
	var ops []Op
	if g.envRng.IntN(100) < 30 {
		h := w.Hosts[g.envRng.IntN(len(w.Hosts))]
		from := w.EnvOf(h.Name)
		var to *Env
		for _, e := range w.Envs {
			if e != from {
				to = e
			}
		}
		if from != nil && to != nil && len(from.Hosts) > 1 {
			ops = append(ops, Op{Kind: OpHostMove, Host: h.Name, Tag: to.Name})
			for _, m := range w.Mods {
				c := h.ctr(m.Name)
				if c == nil {
					continue
				}
				switch r := g.envRng.IntN(100); {
				case r < 40:
					ops = append(ops, Op{Kind: OpVanish, Mod: m.Name, Host: h.Name})
				case r < 50:
					ops = append(ops, Op{Kind: OpState, Mod: m.Name, Host: h.Name, State: "exited"})
				case r < 80:
					cur := m.Builds[c.Build]
					var older []*Build
					for _, b := range m.Builds {
						// (By digest alone: never a build whose label
						// lies, which the kit's fairness names by a tag.)
						if b.Mixed == nil && b.Rank < cur.Rank && !labelLies(b) {
							older = append(older, b)
						}
					}
					if len(older) > 0 {
						b := older[g.envRng.IntN(len(older))]
						ops = append(ops, Op{Kind: OpRun, Mod: m.Name, Host: h.Name, Build: b.ID, Ref: "@" + b.Digest, State: "running"})
					}
				}
			}
			// The environment the host left, decided alone: cmd/pin
			// refuses it until the host's new one is decided with it.
			if g.envRng.IntN(100) < 40 {
				ops = append(ops, Op{Kind: OpResolveEnv, Tag: from.Name})
			}
		}
	}
	if g.envRng.IntN(100) < 20 {
		ops = append(ops, Op{Kind: OpResolveEnv, Tag: w.Envs[g.envRng.IntN(len(w.Envs))].Name})
	}
	return ops
}

// describeMove renders the ops of this file; "" for another op.
func describeMove(o Op) string {
	switch o.Kind {
	case OpHostMove:
		return fmt.Sprintf("catalogue: host %s moves into environment %s", o.Host, o.Tag)
	case OpResolveEnv:
		return "resolve --environment " + o.Tag
	}
	return ""
}
