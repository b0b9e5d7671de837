package main

import (
	"testing"

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
		if got := modulesAtOnce(tc.cat, tc.concurrency); got != tc.want {
			t.Errorf("modulesAtOnce(%d modules, %d) = %d, want %d", len(tc.cat.Modules), tc.concurrency, got, tc.want)
		}
	}
}
