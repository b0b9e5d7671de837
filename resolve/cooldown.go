package resolve

import (
	"fmt"
	"slices"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
)

// Sightings is where pin keeps what it has seen of upstream tags: when it
// first saw each digest under a tag of a repository (internal/registry's
// cache; its Remote, Layout and Offline sources implement it). A registry
// source without it remembers nothing: a candidate it offers is first
// seen now.
type Sightings interface {
	// FirstSeen returns when digest was first seen under repo:tag,
	// recording now as that time when it never was.
	FirstSeen(repo, tag, digest string, now time.Time) time.Time
}

// coolingDown reports whether img, an upstream candidate of a
// track-upstream module, is younger than the module's min_age, and then
// the Skipped that says until when. Its age is counted from the later of
// its build date (its created, the publisher's claim; an epoch or
// implausible date is unknown) and the first time pin saw its digest
// under its tag (pin's own clock, Sightings): a forged old date does not
// skip the wait, and a date pin cannot read waits from first sight.
//
// Every candidate weighed is recorded as seen, with or without a
// min_age, so that a min_age written later counts from when pin first
// saw the tags, not from then.
func (dc *decider) coolingDown(img image.Image) (Skipped, bool) {
	now := dc.in.Now
	if now.IsZero() {
		now = time.Now()
	}
	seen := now
	if s, ok := dc.reg.(Sightings); ok && img.Digest != "" {
		seen = s.FirstSeen(dc.m.Image, img.Tag, img.Digest, now)
	}
	minAge := dc.m.MinAge
	if minAge <= 0 {
		return Skipped{}, false
	}
	from, by := seen, "first seen by pin"
	if created := dc.opts.Created(img); created.After(seen) {
		from, by = created, "built"
	}
	age := now.Sub(from)
	if age >= minAge {
		return Skipped{}, false
	}
	until := from.Add(minAge)
	return Skipped{Image: img, CoolingUntil: until,
		Why: fmt.Sprintf("cooling down until %s: %s %s, %s; min_age is %s", lock.FormatTime(until), by, lock.FormatTime(from), ago(age), catalogue.FormatAge(minAge))}, true
}

// ago says an age in words, to the minute: "2d3h ago", "just now".
func ago(d time.Duration) string {
	d = d.Truncate(time.Minute)
	if d <= 0 {
		return "just now"
	}
	var s string
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if n := d / u.unit; n > 0 {
			s += fmt.Sprintf("%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return s + " ago"
}

// onlyCooling reports whether every tag skipped is cooling down.
func onlyCooling(skipped []Skipped) bool {
	for _, s := range skipped {
		if s.CoolingUntil.IsZero() {
			return false
		}
	}
	return len(skipped) > 0
}

// coolingRefusal refuses a track-upstream module every one of whose newest
// tags is cooling down when nothing runs and nothing was locked: there is
// nothing old enough to lock, and no floor to settle for. Nil otherwise.
func (dc *decider) coolingRefusal(skipped []Skipped) *Refusal {
	if !onlyCooling(skipped) || dc.old != nil || len(dc.heirs) > 0 || slices.ContainsFunc(dc.obs, IsFloor) {
		return nil
	}
	s := skipped[0]
	return &Refusal{Module: dc.m.Name, Kind: KindNothing, opts: dc.opts,
		fix: fmt.Sprintf("there is nothing to lock yet: every tag of %s pin tried is younger than the module's min_age of %s by pin's clock (the later of its build date and the first time pin saw it); the newest, %s, is %s. Run again then, or lower min_age in module %q (%s)",
			dc.m.Image, catalogue.FormatAge(dc.m.MinAge), short(s.Image), s.Why, dc.m.Name, dc.m.DeclRange)}
}
