package resolve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// seenAt is a Sightings of the test's own: when each tag's digest was
// first seen, and now for a digest it does not know.
type seenAt map[string]time.Time

func (s seenAt) FirstSeen(_, tag, _ string, now time.Time) time.Time {
	if t, ok := s[tag]; ok && t.Before(now) {
		return t
	}
	return now
}

// coolingRegistry is a registry of tags, each built at a date, that
// remembers when pin first saw each.
type coolingRegistry struct {
	built map[string]time.Time
	seen  seenAt
}

func (r coolingRegistry) Tags(context.Context, string) ([]string, error) {
	var tags []string
	for t := range r.built {
		tags = append(tags, t)
	}
	return tags, nil
}

func (r coolingRegistry) Image(_ context.Context, repo, ref, _ string) (image.Image, error) {
	return image.Image{Repository: repo, Tag: ref, Digest: "sha256:" + strings.Repeat(ref[len(ref)-1:], 64), Created: r.built[ref]}, nil
}

func (r coolingRegistry) FirstSeen(repo, tag, digest string, now time.Time) time.Time {
	return r.seen.FirstSeen(repo, tag, digest, now)
}

var _ Sightings = coolingRegistry{}

// TestCoolingDown: under min_age = "3d", a tag published an hour ago is
// not picked (the older one is, and the newer is skipped with until
// when); it is picked once the injected clock passes the wait. Its age
// is counted from the later of its build date and its first sighting: a
// build date forged old, or an epoch one, waits from first sight.
func TestCoolingDown(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	m := &catalogue.Module{Name: "app", Image: "registry.example.org/team/app", Policy: catalogue.TrackUpstream, MinAge: 72 * time.Hour}
	for _, tc := range []struct {
		name      string
		built     time.Time
		seen      time.Time // zero: first seen now
		at        time.Time
		want      string // the tag picked
		wantUntil time.Time
	}{
		{"published an hour ago", now.Add(-time.Hour), now.Add(-time.Hour), now, "1.0.1", now.Add(71 * time.Hour)},
		{"the wait passed", now.Add(-time.Hour), now.Add(-time.Hour), now.Add(71*time.Hour + time.Second), "1.0.2", time.Time{}},
		{"forged old date", now.AddDate(-1, 0, 0), now.Add(-2 * time.Hour), now, "1.0.1", now.Add(70 * time.Hour)},
		{"epoch date, never seen", time.Unix(0, 0), time.Time{}, now, "1.0.1", now.Add(72 * time.Hour)},
		{"old and long seen", now.AddDate(0, -1, 0), now.AddDate(0, 0, -10), now, "1.0.2", time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := coolingRegistry{built: map[string]time.Time{"1.0.1": now.AddDate(0, -2, 0), "1.0.2": tc.built},
				seen: seenAt{"1.0.1": now.AddDate(0, -2, 0)}}
			if !tc.seen.IsZero() {
				reg.seen["1.0.2"] = tc.seen
			}
			dc := &decider{in: Input{Now: tc.at}, m: m, reg: reg, opts: order.Options{Now: tc.at}}
			img := func(tag string) image.Image {
				i, _ := reg.Image(context.Background(), m.Image, tag, "")
				return i
			}
			var picked string
			var until time.Time
			for _, tag := range []string{"1.0.2", "1.0.1"} {
				sk, cooling := dc.coolingDown(img(tag))
				if !cooling {
					picked = tag
					break
				}
				if until.IsZero() {
					until = sk.CoolingUntil
				}
				if !strings.HasPrefix(sk.Why, "cooling down until ") {
					t.Errorf("why: %s", sk.Why)
				}
			}
			if picked != tc.want || !until.Equal(tc.wantUntil) {
				t.Errorf("picked %s cooling until %v; want %s until %v", picked, until, tc.want, tc.wantUntil)
			}
		})
	}
}

// sightedRegistry is a fakeRegistry that remembers first sightings as
// internal/registry's cache does: the first time a digest is asked
// about under a tag.
type sightedRegistry struct {
	*fakeRegistry
	first map[string]time.Time
}

func (r sightedRegistry) FirstSeen(_, tag, digest string, now time.Time) time.Time {
	k := tag + "@" + digest
	if t, ok := r.first[k]; ok && !now.Before(t) {
		return t
	}
	r.first[k] = now
	return now
}

// TestResolveCoolsDown: through Resolve, with the clock injected: under
// min_age = "3d" a tag published (and first seen) on the day is skipped,
// with until when, and the older tag is locked; the plan's entry moves
// to the new tag once the clock passes the wait. A lock that already
// names the young build keeps it: a floor is never held back.
func TestResolveCoolsDown(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	older := word(repo, "1.0.1/2026-10-01")
	reg := sightedRegistry{newFakeRegistry(repo, "1.0.1/2026-10-01", "1.0.2/2026-12-01"), map[string]time.Time{"1.0.1@" + older.Digest: older.Created}}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, MinAge: 72 * time.Hour}
	at := func(now time.Time, old *lock.Lock) *Decision {
		p := Resolve(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Old: old,
			Observed: observe.Observed{}, Registry: func(string) Registry { return reg }, Now: now})
		return p.Decisions[0]
	}
	d := at(day.Add(time.Hour), nil)
	if d.New() == nil || d.New().Tag != "1.0.1" {
		t.Fatalf("an hour after 1.0.2 was published: locked %+v, refusal %v, err %v", d.New(), d.Refusal(), d.Err())
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Image.Tag != "1.0.2" || !d.Skipped[0].CoolingUntil.Equal(day.Add(73*time.Hour)) ||
		!strings.Contains(d.Skipped[0].Why, "cooling down until 2026-12-04T01:00:00Z") {
		t.Errorf("skipped: %+v", d.Skipped)
	}
	first := d.New()
	if d := at(day.Add(73*time.Hour), &lock.Lock{Modules: []*lock.Module{first}}); d.New() == nil || d.New().Tag != "1.0.2" || len(d.Skipped) != 0 {
		t.Errorf("once old enough: locked %+v, skipped %+v, refusal %v", d.New(), d.Skipped, d.Refusal())
	}

	// A lock at the young build: it stays (a floor), although 1.0.2 is
	// younger than min_age by a fresh clock.
	reg = sightedRegistry{reg.fakeRegistry, map[string]time.Time{}}
	young := word(repo, "1.0.2/2026-12-01")
	held := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: lock.PolicyTrackUpstream, Image: repo, Tag: "1.0.2", Digest: young.Digest, Created: young.Created, Version: "1.0.2", Source: lock.SourceUpstream}}}
	if d := at(day.Add(2*time.Hour), held); d.New() == nil || d.New().Digest != young.Digest {
		t.Errorf("a lock at the young build: locked %+v, refusal %v, err %v", d.New(), d.Refusal(), d.Err())
	}
	// pin outdated says the newer tag cools down, and until when.
	reg = sightedRegistry{reg.fakeRegistry, map[string]time.Time{"1.0.1@" + older.Digest: older.Created}}
	s := Outdated(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Old: &lock.Lock{Modules: []*lock.Module{first}},
		Observed: observe.Observed{}, Registry: func(string) Registry { return reg }, Now: day.Add(time.Hour)}, nil)[0]
	found := false
	for _, f := range s.Findings {
		found = found || (f.Status == StatusBehindUpstream && strings.Contains(f.Message, "cooling down until 2026-12-04T01:00:00Z"))
	}
	if !found {
		t.Errorf("outdated: %+v", s.Findings)
	}

	// Nothing locked, nothing runs, and every tag first seen now: nothing
	// is old enough, and the refusal says until when.
	reg = sightedRegistry{reg.fakeRegistry, map[string]time.Time{}}
	if d := at(day.Add(2*time.Hour), nil); d.Refusal() == nil || !strings.Contains(d.Refusal().Error(), "younger than the module's min_age of 3d") {
		t.Errorf("a fresh module: locked %+v, refusal %v, err %v", d.New(), d.Refusal(), d.Err())
	}
}
