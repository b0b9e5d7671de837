package truth

import (
	"fmt"
	"strings"
)

// History is one generated history: its setup, the ops played, and the
// first failure, if any.
type History struct {
	Seed, Number uint64
	Setup        *Setup
	Ops          []Op
	Failure      *Failure
	Steps        int
	Stats        map[string]int
}

// Play generates history number n of a run seeded with seed and plays it,
// drawing each step against the world as it stands (so that, say, a hand
// edit swaps the lock entry for a truly older image). It stops at the
// first failure.
func Play(seed, n uint64, without map[string]bool) *History {
	g := NewGen(seed, n, without)
	s := g.Setup()
	r := NewRunner(s)
	defer r.Close()
	h := &History{Seed: seed, Number: n, Setup: s}
	defer func() { h.Ops, h.Steps, h.Stats = r.Ops, r.Steps, r.Stats }()
	for _, o := range g.Start(r.World) {
		r.Do(o)
	}
	for range g.Steps() {
		for _, o := range g.Next(r.World) {
			if f := r.Do(o); f != nil {
				h.Failure = f
				return h
			}
		}
	}
	return h
}

// Shrink makes a failing history smaller while it fails the same check:
// it drops the ops after the failure, then single ops, then whole modules
// (with their events), as long as anything goes.
func (h *History) Shrink() *History {
	if h.Failure == nil {
		return h
	}
	s, ops, f := h.Setup, h.Ops[:h.Failure.Op+1], h.Failure
	same := func(s *Setup, ops []Op) *Failure {
		if g := Replay(s, ops); g != nil && g.Check == f.Check {
			return g
		}
		return nil
	}
	for changed := true; changed; {
		changed = false
		for i := len(ops) - 1; i >= 0; i-- {
			if i >= len(ops) {
				continue
			}
			try := append(append([]Op{}, ops[:i]...), ops[i+1:]...)
			if g := same(s, try); g != nil {
				ops, f, changed = try[:g.Op+1], g, true
			}
		}
		for _, m := range s.Mods {
			if len(s.Mods) == 1 {
				break
			}
			s2 := s.without(m.Name)
			var try []Op
			for _, o := range ops {
				if o.Mod != m.Name {
					try = append(try, o)
				}
			}
			if g := same(s2, try); g != nil {
				s, ops, f, changed = s2, try[:g.Op+1], g, true
				break
			}
		}
	}
	return &History{Seed: h.Seed, Number: h.Number, Setup: s, Ops: ops, Failure: f}
}

// Report renders a history for people: the seed to replay it, the world,
// every op, and the step that broke.
func (h *History) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, history %d (replay: -truth.seed=%d -truth.history=%d)\n", h.Seed, h.Number, h.Seed, h.Number)
	b.WriteString(h.Setup.Describe())
	for i, o := range h.Ops {
		mark := "  "
		if h.Failure != nil && i == h.Failure.Op {
			mark = "=>"
		}
		fmt.Fprintf(&b, "%s %2d. %s\n", mark, i, h.Setup.describe(o))
	}
	if h.Failure != nil {
		fmt.Fprintf(&b, "FAILED %s: %s\n", h.Failure.Check, h.Failure.Msg)
	}
	return b.String()
}
