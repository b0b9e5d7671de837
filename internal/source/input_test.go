package source

import (
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
)

// TestModulesAtOnce: twice the requests the catalogue's registries may
// have in flight, counting each registry once.
func TestModulesAtOnce(t *testing.T) {
	cat := func(images ...string) *catalogue.Catalogue {
		c := &catalogue.Catalogue{}
		for _, img := range images {
			c.Modules = append(c.Modules, &catalogue.Module{Image: img})
		}
		return c
	}
	for _, tc := range []struct {
		cat         *catalogue.Catalogue
		concurrency int
		want        int
	}{
		{cat("r.example/a", "r.example/b", "r.example/team/c"), 8, 16},
		{cat("r.example/a", "127.0.0.1:5000/b", "index.docker.io/library/alpine"), 8, 48},
		{cat("r.example/a"), 1, 2},
		{cat(), 8, 16},
	} {
		if got := ModulesAtOnce(tc.cat, tc.concurrency); got != tc.want {
			t.Errorf("ModulesAtOnce(%d modules, %d) = %d, want %d", len(tc.cat.Modules), tc.concurrency, got, tc.want)
		}
	}
}

// TestInputIsTheRun: the one resolve.Input carries the run's catalogue,
// lock, observations, registries and time, and the bound that follows
// from the run's concurrency.
func TestInputIsTheRun(t *testing.T) {
	cat := &catalogue.Catalogue{Modules: []*catalogue.Module{{Name: "a", Image: "r.example/a"}, {Name: "b", Image: "q.example/b"}}}
	in := &Inputs{Catalogue: cat, Registries: NewRegistries(cat, Options{Concurrency: 3, Offline: true, CacheDir: t.TempDir()})}
	rin := in.Input(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if rin.Catalogue != cat || rin.Registry == nil || rin.Verifier == nil || !rin.Now.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("Input = %+v: not the run's", rin)
	}
	if rin.ModulesAtOnce != 12 {
		t.Errorf("ModulesAtOnce = %d, want 2 × 3 × 2 registries = 12", rin.ModulesAtOnce)
	}
}
