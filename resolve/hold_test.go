package resolve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/lock"
)

// heldEntry locks the exact pin 1.27.3 against the world of the scenario
// and records a hold (and provenance) on the entry, as "pin promote
// --pick" writes it.
func heldEntry(t *testing.T) *lock.Module {
	t.Helper()
	d := Resolve(context.Background(), scenarioInput(t, "exact", "1.27.3", "-", "1.27.3", "-")).Decisions[0]
	if d.New() == nil {
		t.Fatalf("locking 1.27.3: %v %v", d.Refusal(), d.Err())
	}
	e := *d.New()
	e.Hold = "1.28.0 breaks webhooks"
	e.Promoted = &lock.Promotion{From: "staging", Hosts: []string{"s1"}, Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Release: word(repo, "release").Digest}
	return &e
}

// serveHeld makes in's registry serve the held image by digest (it was
// pushed when it was picked).
func serveHeld(t *testing.T, in Input) {
	t.Helper()
	img := word(repo, "1.27.3")
	reg := in.Registry(repo).(*fakeRegistry)
	reg.byDigest[img.Digest] = img
	if _, ok := reg.byTag[img.Tag]; !ok {
		reg.byTag[img.Tag] = img
	}
}

// TestHoldKeepsThePick: whatever the policy would lock instead (a newer
// upstream tag, a newer pin), a held entry stays, its hold and provenance
// with it, and the reason says so; without the hold the same world moves
// on (the control).
func TestHoldKeepsThePick(t *testing.T) {
	held := word(repo, "1.27.3").Digest
	for _, tc := range []struct{ name, policy, pin, running, upstream, moved string }{
		{"track-upstream", "track-upstream", "-", "1.27.3", "1.27.3,1.28.0", word(repo, "1.28.0").Digest},
		{"at-least-running, newer pin", "at-least-running", "1.28.0", "1.27.3", "-", word(repo, "1.28.0").Digest},
		{"exact, another pin", "exact", "1.28.0", "-", "-", word(repo, "1.28.0").Digest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := scenarioInput(t, tc.policy, tc.pin, tc.running, tc.upstream, "-")
			in.Old = &lock.Lock{Modules: []*lock.Module{heldEntry(t)}}
			serveHeld(t, in)
			d := Resolve(context.Background(), in).Decisions[0]
			e := d.New()
			if e == nil || e.Digest != held {
				t.Fatalf("held 1.27.3, locked %+v (refusal %v, err %v)", e, d.Refusal(), d.Err())
			}
			if e.Hold != "1.28.0 breaks webhooks" || e.Promoted == nil || e.Promoted.From != "staging" {
				t.Errorf("hold or provenance lost: %+v", e)
			}
			if !strings.Contains(e.Reason, `held at 1.27.3`) || !strings.Contains(e.Reason, "1.28.0 breaks webhooks") {
				t.Errorf("reason: %s", e.Reason)
			}
			checkInvariant(t, d)

			// The control: the same entry without its hold moves.
			in = scenarioInput(t, tc.policy, tc.pin, tc.running, tc.upstream, "-")
			free := heldEntry(t)
			free.Hold = ""
			in.Old = &lock.Lock{Modules: []*lock.Module{free}}
			serveHeld(t, in)
			if d := Resolve(context.Background(), in).Decisions[0]; d.New() == nil || d.New().Digest != tc.moved {
				t.Errorf("without the hold: %+v %v %v", d.New(), d.Refusal(), d.Err())
			}
		})
	}
}

// TestHoldNeverBelowWhatRuns: a host runs something newer than the held
// image: the module is refused (a downgrade, naming the hold and how to
// lift it), unless the catalogue states the downgrade.
func TestHoldNeverBelowWhatRuns(t *testing.T) {
	in := scenarioInput(t, "at-least-running", "-", "1.28.0", "-", "-")
	in.Old = &lock.Lock{Modules: []*lock.Module{heldEntry(t)}}
	serveHeld(t, in)
	d := Resolve(context.Background(), in).Decisions[0]
	r := d.Refusal()
	if r == nil || r.Kind != KindDowngrade || r.Floor.Kind != FloorContainer {
		t.Fatalf("held 1.27.3 below a running 1.28.0: new %+v, refusal %v, err %v", d.New(), r, d.Err())
	}
	if msg := r.Error(); !strings.Contains(msg, `the held image (hold "1.28.0 breaks webhooks")`) || !strings.Contains(msg, "pin promote --lift") {
		t.Errorf("refusal does not name the hold and how to lift it:\n%s", msg)
	}

	in = scenarioInput(t, "at-least-running", "-", "1.28.0", "-", "allow")
	in.Old = &lock.Lock{Modules: []*lock.Module{heldEntry(t)}}
	serveHeld(t, in)
	d = Resolve(context.Background(), in).Decisions[0]
	if d.New() == nil || d.New().Digest != word(repo, "1.27.3").Digest || d.New().AllowDowngrade != "tested" || d.Downgrade() == nil {
		t.Fatalf("stated downgrade to the held image: %+v %v %v", d.New(), d.Refusal(), d.Err())
	}
	checkInvariant(t, d)
}
