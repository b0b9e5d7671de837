package resolve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// resolveWith resolves m against reg with no host and returns its entry.
func resolveWith(t *testing.T, m *catalogue.Module, reg *fakeRegistry, old *lock.Lock) *Decision {
	t.Helper()
	p := Resolve(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Old: old,
		Observed: observe.Observed{}, Registry: func(string) Registry { return reg }, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	return p.Decisions[0]
}

// TestUpstreamMovesBack: an upstream tag re-pointed to an older build does
// not take the lock back. Case 10 of the fail-closed issue.
func TestUpstreamMovesBack(t *testing.T) {
	newer, older := word(repo, "latest/2026-09-17"), word(repo, "latest/2026-08-20")

	// track-upstream follows "latest" forward...
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Tag: "latest"}
	reg := newFakeRegistry(repo, "latest/2026-09-17")
	first := resolveWith(t, m, reg, nil)
	if first.New() == nil || first.New().Digest != newer.Digest {
		t.Fatalf("first: %+v %v %v", first.New(), first.Refusal(), first.Err())
	}
	// ...and when "latest" is re-pointed to an older build, keeps what it
	// locked, and says why.
	reg = newFakeRegistry(repo, "latest/2026-08-20")
	reg.byDigest[newer.Digest] = newer
	back := resolveWith(t, m, reg, &lock.Lock{Modules: []*lock.Module{first.New()}})
	if back.New() == nil || back.New().Digest != newer.Digest || !strings.Contains(back.New().Reason, "the previous lock names") {
		t.Fatalf("latest moved back to %s: locked %+v, refusal %v, err %v", older.Digest, back.New(), back.Refusal(), back.Err())
	}

	// exact on a tag-only pin: "1.27" named 1.27.4 when it was locked and
	// now names 1.27.1. Refused against the previous lock; outdated says
	// regression.
	m = &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: catalogue.Pin{Text: "1.27", Tag: "1.27"}}
	reg = newFakeRegistry(repo)
	v4 := word(repo, "1.27/2026-09-04+1.27.4")
	reg.byTag["1.27"], reg.byDigest[v4.Digest] = v4, v4
	first = resolveWith(t, m, reg, nil)
	if first.New() == nil || first.New().Digest != v4.Digest {
		t.Fatalf("exact 1.27: %+v %v %v", first.New(), first.Refusal(), first.Err())
	}
	v1 := word(repo, "1.27/2026-09-20+1.27.1")
	reg.byTag["1.27"], reg.byDigest[v1.Digest] = v1, v1
	old := &lock.Lock{Modules: []*lock.Module{first.New()}}
	back = resolveWith(t, m, reg, old)
	if back.Refusal() == nil || back.Refusal().Kind != KindDowngrade || back.Refusal().Floor.Kind != FloorLocked {
		t.Fatalf("exact 1.27 moved back to 1.27.1: new %+v, refusal %v, err %v", back.New(), back.Refusal(), back.Err())
	}
	s := Outdated(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Old: old,
		Registry: func(string) Registry { return reg }, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}, nil)[0]
	if !s.Has(StatusRegression) {
		t.Errorf("outdated: %v %+v", s.Statuses, s.Findings)
	}
}
