package truth

import (
	"strings"
	"testing"
)

// TestGeneratorFair checks the generator's fairness rules (doc.go) over
// many setups and their events: the truth stays recoverable wherever pin
// is asked to decide.
func TestGeneratorFair(t *testing.T) {
	envs := 0
	for n := range uint64(2000) {
		g := NewGen(1, n, nil)
		s := g.Setup()
		if s.Envs != nil {
			envs++
		}
		w := s.World()
		ops := g.Start(w)
		for range 5 {
			ops = append(ops, g.Next(w)...)
		}
		for _, m := range s.Mods {
			noisy := false
			for _, b := range m.Builds {
				noisy = noisy || b.Noisy
			}
			for _, b := range m.Builds {
				for _, note := range b.Notes {
					if note == "backport" && noisy {
						t.Fatalf("history %d, module %s: a backport in a module with lies:\n%s", n, m.Name, s.Describe())
					}
					if strings.HasPrefix(note, "tag ") && b.Label != b.Ver.String() {
						t.Fatalf("history %d, module %s: %s lies without an honest full label %q", n, m.Name, b.name(), b.Label)
					}
				}
				if m.Profile == "unversioned" && (b.Label != "" || b.Versioned) {
					t.Fatalf("history %d, module %s: an unversioned build with a version", n, m.Name)
				}
			}
			// Within one variant, true order is version order.
			for _, a := range m.Builds {
				for _, b := range m.Builds {
					if a.Versioned && a.Variant == b.Variant && a.Ver.less(b.Ver) != (a.Rank < b.Rank) {
						t.Fatalf("history %d, module %s: %s and %s: rank disagrees with version", n, m.Name, a.name(), b.name())
					}
				}
			}
			if m.Pin != "" && strings.HasPrefix(m.Pin, "sha256:") && labelLies(m.ByDigest(m.Pin)) {
				t.Fatalf("history %d, module %s: a digest-only pin of a build whose label lies", n, m.Name)
			}
		}
		for _, m := range s.Mods {
			if id, ok := m.Tags["latest"]; ok && labelLies(m.Builds[id]) {
				t.Fatalf("history %d, module %s: latest names %s, whose label lies and nothing shows it", n, m.Name, m.Builds[id].name())
			}
		}
		for _, o := range ops {
			m := w.Mod(o.Mod)
			if o.Kind == OpMove && o.Tag == "latest" && o.Build >= 0 && labelLies(m.Builds[o.Build]) {
				t.Fatalf("history %d: %s, whose label lies and nothing shows it", n, s.describe(o))
			}
			if o.Kind == OpRun && strings.HasPrefix(o.Ref, "@") && labelLies(m.Builds[o.Build]) {
				t.Fatalf("history %d: %s started by digest alone, but its label lies", n, s.describe(o))
			}
			if o.Kind == OpPin && strings.HasPrefix(o.Text, "sha256:") && labelLies(m.ByDigest(o.Text)) {
				t.Fatalf("history %d: %s: a digest-only pin of a build whose label lies", n, s.describe(o))
			}
			if o.Kind == OpPromote && strings.HasPrefix(o.Ref, "sha256:") && labelLies(w.Mod(o.Text).ByDigest(o.Ref)) {
				t.Fatalf("history %d: %s: a digest-only pick of a build whose label lies", n, s.describe(o))
			}
		}
	}
	// One history in three declares environments.
	if envs < 2000/4 || envs > 2000*5/12 {
		t.Errorf("%d of 2000 histories declare environments; want about one in three", envs)
	}
}

// TestReplay checks that a history replays to the same failure, and that
// shrinking keeps it failing the same check.
func TestReplay(t *testing.T) {
	for n := range uint64(300) {
		h := Play(3, n, nil)
		got := Replay(h.Setup, h.Ops)
		if (got == nil) != (h.Failure == nil) || (got != nil && (got.Check != h.Failure.Check || got.Op != h.Failure.Op)) {
			t.Fatalf("history %d: played %v, replayed %v", n, h.Failure, got)
		}
		if h.Failure == nil {
			continue
		}
		s := h.Shrink()
		if f := Replay(s.Setup, s.Ops); f == nil || f.Check != h.Failure.Check || len(s.Ops) > len(h.Ops) {
			t.Fatalf("history %d: shrunk to %d ops, replays %v; want a %s failure", n, len(s.Ops), f, h.Failure.Check)
		}
	}
}
