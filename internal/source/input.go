package source

import (
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/resolve"
)

// Input is the one resolve.Input of a run: the catalogue, the previous
// lock, what the hosts answered and the record of what they did not
// (Record), the registries and their verifiers, the time that bounds
// plausible build dates, and how many modules are decided at once. A
// command sets what is its own on the copy it gets (Mode, Progress).
func (in *Inputs) Input(now time.Time) resolve.Input {
	rin := resolve.Input{Catalogue: in.Catalogue, Old: in.Lock, Observed: in.Observed, Record: in.Record(), Now: now}
	if in.Registries != nil {
		rin.Registry, rin.Verifier = in.Registries.For, in.Registries.Verifier
		rin.ModulesAtOnce = ModulesAtOnce(in.Catalogue, in.Registries.o.Concurrency)
	}
	return rin
}

// Record is the one record of what this run did not read, and of the
// other locks that bound its modules: every command and enforcement point
// judges with it (resolve.Record). A host skipped under skip_unreachable
// and a host that failed are hosts not read, with why; with Host set
// (a command that reads one host), every other host was not asked; with
// Only set ("pin resolve MODULE…"), the hosts read were read for the
// named modules alone.
func (in *Inputs) Record() resolve.Record {
	r := resolve.Record{Host: in.Host, Elsewhere: in.Elsewhere, Only: in.Only}
	for h, err := range in.Skipped {
		r.NotRead = setNotRead(r.NotRead, h, resolve.NotRead{Why: resolve.WhySkipped, Err: err})
	}
	for h, err := range in.Observed.Errors {
		r.NotRead = setNotRead(r.NotRead, h, resolve.NotRead{Why: resolve.WhyUnreachable, Err: err})
	}
	return r
}

func setNotRead(m map[string]resolve.NotRead, h string, nr resolve.NotRead) map[string]resolve.NotRead {
	if m == nil {
		m = map[string]resolve.NotRead{}
	}
	m[h] = nr
	return m
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
