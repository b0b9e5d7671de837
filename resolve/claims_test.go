package resolve

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
)

// Images without a version label (ko, Bazel and crane builds; most
// official images): the tag written next to their digest is all that says
// their version. The registry below serves 1.22.6, 1.25.0 and 1.30.0 by
// tag, none labelled; the claims under test name 1.22.6's content with
// another tag.
func unlabelledFleet() (*headRegistry, map[string]image.Image) {
	imgs := map[string]image.Image{}
	reg := newFakeRegistry(repo)
	heads := map[string]string{}
	for _, w := range []string{"1.22.6", "1.25.0", "1.30.0"} {
		img := word(repo, w)
		imgs[w] = img
		reg.byTag[img.Tag], reg.byDigest[img.Digest] = img, img
		reg.tags = append(reg.tags, img.Tag)
		heads[img.Tag] = img.Digest
	}
	return &headRegistry{Registry: reg, heads: heads}, imgs
}

// TestTagClaimOnUnlabelledImage: a pin, a lock entry and an admission
// request that call 1.22.6's content "1.30.0" must not be ordered as
// 1.30.0 against a host running 1.25.0; the same claims made truthfully
// are believed, at one HEAD each.
func TestTagClaimOnUnlabelledImage(t *testing.T) {
	ctx := context.Background()
	for _, lie := range []bool{true, false} {
		name := map[bool]string{true: "lie", false: "truth"}[lie]
		t.Run(name, func(t *testing.T) {
			reg, imgs := unlabelledFleet()
			named := imgs["1.30.0"]
			if lie {
				named = imgs["1.22.6"]
			}
			runs := []run{{host: "host-0", word: "1.25.0"}}

			// The catalogue's pin.
			for _, policy := range []catalogue.Policy{catalogue.Exact, catalogue.AtLeastRunning} {
				m := &catalogue.Module{Name: "svc", Image: repo, Policy: policy, Pin: pinOf("1.30.0", named)}
				d := Resolve(ctx, inputOf(m, reg, nil, observed(m, runs, nil))).Decisions[0]
				if lie && (d.Refusal() == nil || d.Refusal().Kind != KindUnknown || !strings.Contains(d.Refusal().Error(), "only the tag 1.30.0")) {
					t.Errorf("%s pin 1.30.0@<1.22.6>: new %v, refusal %v; want an unknown order naming the tag", policy, d.New(), d.Refusal())
				}
				if !lie && (d.New() == nil || d.New().Digest != named.Digest) {
					t.Errorf("%s pin 1.30.0: new %v, refusal %v, err %v; want the pin", policy, d.New(), d.Refusal(), d.Err())
				}
			}

			// A lock entry whose tag and version lines say 1.30.0.
			m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
			old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.30.0", Version: "1.30.0", Digest: named.Digest, Source: "pin"}}}
			in := inputOf(m, reg, old, observed(m, runs, nil))
			d := Resolve(ctx, in).Decisions[0]
			if lie && (d.Refusal() == nil || d.Refusal().Kind != KindUnknown) {
				t.Errorf("resolve over a lock entry 1.30.0@<1.22.6>: new %v, refusal %v; want an unknown order", d.New(), d.Refusal())
			}
			if !lie && (d.New() == nil || d.New().Digest != named.Digest) {
				t.Errorf("resolve over a lock entry 1.30.0: new %v, refusal %v, err %v; want the entry kept", d.New(), d.Refusal(), d.Err())
			}
			in.Record.Host = "host-0"
			cuts, err := PlanCutover(ctx, in)
			if err != nil || len(cuts) != 1 {
				t.Fatalf("plan: %v %v", cuts, err)
			}
			if want := map[bool]Verdict{true: VerdictUnknown, false: VerdictUpgrade}[lie]; cuts[0].Verdict != want {
				t.Errorf("plan over the lock entry: %s (%s), want %s", cuts[0].Verdict, cuts[0].Order.Detail, want)
			}
			st := Outdated(ctx, in, nil)[0]
			if lie == st.Has(StatusCurrent) || lie != st.Has(StatusUnknownOrder) {
				t.Errorf("outdated over the lock entry: %v", st.Statuses)
			}

			// An admission request for svc:1.30.0@<digest>.
			j, err := Judge(ctx, inputOf(m, reg, nil, observed(m, runs, nil)), m, image.Image{Repository: repo, Tag: "1.30.0", Digest: named.Digest}, Override{})
			if err != nil {
				t.Fatal(err)
			}
			if j.Allowed() == lie {
				t.Errorf("judge svc:1.30.0@<%s>: allowed %v (%s: %s)", named.Tag, j.Allowed(), j.Verdict, j.Order.Detail)
			}
		})
	}
}

// TestTagClaimUnderstatedOnAFloor: a lock entry that calls 1.30.0's content
// "1.22.6" would let a 1.25.0 candidate past it; a pin that says too
// little only makes pin choose what runs.
func TestTagClaimUnderstatedOnAFloor(t *testing.T) {
	ctx := context.Background()
	reg, imgs := unlabelledFleet()
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Tags: nil}
	m.ConstraintText = "<1.26"
	m.Constraint = must(semver.NewConstraint("<1.26"))
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "track-upstream", Image: repo, Tag: "1.22.6", Version: "1.22.6", Digest: imgs["1.30.0"].Digest, Source: "upstream"}}}
	d := Resolve(ctx, inputOf(m, reg, old, observed(m, nil, nil))).Decisions[0]
	if d.Refusal() == nil || d.Refusal().Kind != KindUnknown {
		t.Errorf("track-upstream over an entry 1.22.6@<1.30.0>: new %v, refusal %v; want an unknown order", d.New(), d.Refusal())
	}

	// The pin says 1.22.0 of 1.30.0's content; a host runs 1.25.0: the
	// pin loses by what it says, and what runs is locked, no refusal.
	m = &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.22.0", imgs["1.30.0"])}
	d = Resolve(ctx, inputOf(m, reg, nil, observed(m, []run{{host: "host-0", word: "1.25.0"}}, nil))).Decisions[0]
	if d.New() == nil || d.New().Digest != imgs["1.25.0"].Digest {
		t.Errorf("pin 1.22.0@<1.30.0> against a running 1.25.0: new %v, refusal %v; want what runs", d.New(), d.Refusal())
	}
}

// TestTagClaimCost: a claim is checked with one HEAD, only where a version
// that only the tag says decides; labelled images and candidates fetched
// by tag cost nothing more.
func TestTagClaimCost(t *testing.T) {
	ctx := context.Background()
	reg, imgs := unlabelledFleet()
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.30.0", imgs["1.30.0"])}
	seen := observed(m, []run{{host: "host-0", word: "1.25.0"}, {host: "host-1", word: "1.22.6"}}, nil)
	if d := Resolve(ctx, inputOf(m, reg, nil, seen)).Decisions[0]; d.New() == nil {
		t.Fatalf("pin 1.30.0: %v %v", d.Refusal(), d.Err())
	}
	if !slices.Equal(reg.asked, []string{"1.30.0"}) {
		t.Errorf("HEADs asked: %q, want one for the pin's tag", reg.asked)
	}

	labelled := newFakeRegistry(repo, "1.25.0+1.25.0", "1.30.0+1.30.0")
	h := &headRegistry{Registry: labelled, heads: map[string]string{}}
	pin := word(repo, "1.30.0+1.30.0")
	m = &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Pin: pinOf("1.30.0", pin)}
	if d := Resolve(ctx, inputOf(m, h, nil, observed(m, []run{{host: "host-0", word: "1.25.0+1.25.0"}}, nil))).Decisions[0]; d.New() == nil {
		t.Fatalf("labelled: %v %v", d.Refusal(), d.Err())
	}
	if len(h.asked) != 0 {
		t.Errorf("labelled images: HEADs asked %q, want none", h.asked)
	}
}

// TestTagClaimCheckedOnceByOutdated: outdated weighs the lock against what
// runs and asks what resolve would decide; the lock entry's claim, which
// both weigh, is checked with one HEAD, not one each.
func TestTagClaimCheckedOnceByOutdated(t *testing.T) {
	ctx := context.Background()
	reg, imgs := unlabelledFleet()
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.30.0", imgs["1.30.0"])}
	locked := imgs["1.22.6"]
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.22.6", Version: "1.22.6", Digest: locked.Digest, Source: "pin"}}}
	s := Outdated(ctx, inputOf(m, reg, old, observed(m, []run{{host: "host-0", word: "1.25.0"}}, nil)), nil)[0]
	if !s.Has(StatusBehindRunning) {
		t.Fatalf("precondition: outdated says %v", s.Statuses)
	}
	n := 0
	for _, ref := range reg.asked {
		if ref == "1.22.6" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("HEADs of the lock entry's tag: %d (%q), want 1", n, reg.asked)
	}
}

// TestTagClaimOfAPinThatIsAlsoTheLock: a pin is checked only where it
// wins, a lock entry both ways; when the two are the same tag@digest, the
// entry's role decides. Here both call 1.30.0's content "1.22.6": what
// runs (1.25.0) must not be locked below the entry's real content.
func TestTagClaimOfAPinThatIsAlsoTheLock(t *testing.T) {
	ctx := context.Background()
	reg, imgs := unlabelledFleet()
	real := imgs["1.30.0"]
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.22.6", real)}
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.22.6", Version: "1.22.6", Digest: real.Digest, Source: "pin"}}}
	d := Resolve(ctx, inputOf(m, reg, old, observed(m, []run{{host: "host-0", word: "1.25.0"}}, nil))).Decisions[0]
	if d.New() != nil && d.New().Digest == imgs["1.25.0"].Digest {
		t.Errorf("locked 1.25.0 over a lock entry whose content is 1.30.0 (called 1.22.6 by the pin and the entry alike): %q", d.New().Reason)
	}
}

// TestHostTagIsAClaim: host-0 runs an unlabelled 2024 build (the registry
// serves its digest as 1.22.6) under a tag given on the host, 1.30.0
// ("docker tag"), which the registry does not hold; host-1 runs 1.25.0.
// The host's tag is a claim like a lock line's: where it would decide in
// the image's favour, one HEAD checks it, and a tag the registry does not
// hold leaves the order unknown. resolve, lock --from-host, plan and
// outdated agree. Told truthfully, it costs one HEAD and is believed.
func TestHostTagIsAClaim(t *testing.T) {
	ctx := context.Background()
	for _, lie := range []bool{true, false} {
		t.Run(map[bool]string{true: "lie", false: "truth"}[lie], func(t *testing.T) {
			reg, imgs := unlabelledFleet()
			ran := imgs["1.30.0"]
			if lie {
				ran = imgs["1.22.6"]
				delete(reg.heads, "1.30.0")
				f := reg.Registry.(*fakeRegistry)
				delete(f.byTag, "1.30.0")
			}
			m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
			seen := observed(m, []run{{host: "host-0", word: "1.30.0"}, {host: "host-1", word: "1.25.0"}}, nil)
			// host-0's container runs ran's content, as 1.30.0.
			seen.Snapshots["host-0"].Images[0].RepoDigests = []string{repo + "@" + ran.Digest}

			d := Resolve(ctx, inputOf(m, reg, nil, seen)).Decisions[0]
			switch {
			case lie && (d.Refusal() == nil || d.Refusal().Kind != KindUnknown || !strings.Contains(d.Refusal().Error(), "only the tag 1.30.0 says the version") ||
				!strings.Contains(d.Refusal().Error(), "the registry has no such tag")):
				t.Errorf("resolve: new %v, refusal %v; want an unknown order naming the host's tag", d.New(), d.Refusal())
			case !lie && (d.New() == nil || d.New().Digest != ran.Digest):
				t.Errorf("resolve, the host's tag true: new %v, refusal %v, err %v", d.New(), d.Refusal(), d.Err())
			}
			if !lie && !slices.Equal(reg.asked, []string{"1.30.0"}) {
				t.Errorf("HEADs asked: %q, want one for the host's tag", reg.asked)
			}

			// The lock names 1.25.0, read on both hosts.
			locked := imgs["1.25.0"]
			old := &lock.Lock{Hosts: []string{"host-0", "host-1"}, Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.25.0",
				Version: "1.25.0", Digest: locked.Digest, Source: "running", Hosts: []string{"host-0", "host-1"},
				Observed: []lock.Observation{{Host: "host-1", Container: "svc", Tag: "1.25.0", Digest: locked.Digest, Version: "1.25.0"}}}}}
			in := inputOf(m, reg, old, seen)
			in.Mode, in.Record.Host = ModeFromHost, "host-0"
			d = Resolve(ctx, in).Decisions[0]
			switch {
			case lie && (d.Refusal() == nil || d.Refusal().Kind != KindUnknown):
				t.Errorf("lock --from-host host-0: new %v, refusal %v; want an unknown order", d.New(), d.Refusal())
			case !lie && (d.New() == nil || d.New().Digest != ran.Digest):
				t.Errorf("lock --from-host host-0, the host's tag true: new %v, refusal %v", d.New(), d.Refusal())
			}
			in.Mode, in.Record.Host = ModeResolve, ""
			want := map[bool]Verdict{true: VerdictUnknown, false: VerdictDowngrade}[lie]
			if c := cutoverOf(t, in, "host-0"); c.Verdict != want {
				t.Errorf("plan host-0: %s (%s), want %s", c.Verdict, c.Order.Detail, want)
			}
			wantStatus := map[bool]Status{true: StatusUnknownOrder, false: StatusBehindRunning}[lie]
			if s := Outdated(ctx, in, nil)[0]; !s.Has(wantStatus) || s.Has(StatusBehindRunning) == lie {
				t.Errorf("outdated: %v %v; want %s", s.Statuses, s.Findings, wantStatus)
			}
		})
	}
}

// TestRecordedIndexVersionIsContent: host-1 ran an unlabelled index
// (1.23.1) under a tag given on the host, "2.0.0", and the lock recorded
// that container with the host's word as its version. lock --from-host
// host-0, where 1.23.2 runs, holds host-1's record as a floor: its
// version must be the content's (none: the tag decides, and the
// registry's 2.0.0 is another build), not the recorded line, which would
// call 1.23.1 "2.0.0" and keep it above 1.23.2. Found by the truth test
// (seed 99, history 5292).
func TestRecordedIndexVersionIsContent(t *testing.T) {
	ctx := context.Background()
	f := newFakeRegistry(repo, "1.23.2/2024-02-05+1.23.2", "2.0.0/2024-02-12+2.0.0")
	ir := newIndexRegistry(f)
	idx := ir.add("1.23.1", map[string]string{"linux/amd64": "1.23.1/2024-01-29", "linux/arm64": "1.23.1/2024-01-29"})
	reg := &headRegistry{Registry: ir, heads: map[string]string{"2.0.0": f.byTag["2.0.0"].Digest, "1.23.2": f.byTag["1.23.2"].Digest, "1.23.1": idx}}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning,
		RunsOn: []catalogue.RunsOn{{Host: "host-0", Container: "svc"}, {Host: "host-1", Container: "svc"}}}
	old := &lock.Lock{Hosts: []string{"host-0", "host-1"}, Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Digest: idx,
		Source: "running", Rule: "content", Reason: "host-1/svc runs it", Hosts: []string{"host-0", "host-1"},
		Observed: []lock.Observation{{Host: "host-1", Container: "svc", Tag: "2.0.0", Digest: idx, Version: "2.0.0"}}}}}
	seen := observed(m, []run{{host: "host-0", word: "1.23.2/2024-02-05+1.23.2"}}, nil)
	in := inputOf(m, reg, old, seen)
	in.Mode, in.Record.Host = ModeFromHost, "host-0"
	d := Resolve(ctx, in).Decisions[0]
	if n := d.New(); n != nil && n.Digest == idx {
		t.Errorf("lock --from-host host-0 kept 1.23.1 (called 2.0.0 by the host's tag) above the 1.23.2 host-0 runs: %+v", n)
	}
}
