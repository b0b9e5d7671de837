package source

import (
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/resolve"
)

// Input is the one resolve.Input of a run: the catalogue, the previous
// lock, what the hosts answered, the registries and their verifiers, the
// time that bounds plausible build dates, and how many modules are
// decided at once. A command sets what is its own on the copy it gets
// (Mode, Host, Only, Progress).
func (in *Inputs) Input(now time.Time) resolve.Input {
	rin := resolve.Input{Catalogue: in.Catalogue, Old: in.Lock, Elsewhere: in.Elsewhere, Observed: in.Observed, Now: now}
	for h := range in.Skipped {
		rin.Unread = append(rin.Unread, h)
	}
	slices.Sort(rin.Unread)
	if in.Registries != nil {
		rin.Registry, rin.Verifier = in.Registries.For, in.Registries.Verifier
		rin.ModulesAtOnce = ModulesAtOnce(in.Catalogue, in.Registries.o.Concurrency)
	}
	return rin
}

// ModulesAtOnce is how many modules a run decides at once: twice the
// requests the registries its catalogue names may have in flight
// (concurrency each), enough to keep each busy while the other half does
// its own work, and no more modules' state held at once. A constant 32
// held 1–2 MiB more at the peak of a 1,100-module run at concurrency 8
// than 16, for the same wall time.
func ModulesAtOnce(cat *catalogue.Catalogue, concurrency int) int {
	registries := map[string]bool{}
	for _, m := range cat.Modules {
		host, _, _ := strings.Cut(m.Image, "/")
		registries[host] = true
	}
	return 2 * max(1, concurrency) * max(1, len(registries))
}
