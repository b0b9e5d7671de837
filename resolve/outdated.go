package resolve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
)

// Outdated reports, for every module of the catalogue (in the catalogue's
// order), how the current lock entry (in.Old) stands against what the
// hosts run (in.Observed), against what "pin resolve" would decide, and
// against the newest upstream candidate within the module's policy. It
// writes nothing and locks nothing.
//
// What "pin resolve" would refuse or fail on is reported too (regression,
// unknown-order, error): Outdated asks the same policy code. The candidate
// is, for track-upstream, what "pin resolve" weighs (the floating tag, or
// the newest tag passing the module's filters and variant), asked once.
// For exact and at-least-running, it is the newest release of the locked
// tag's variant, or the locked tag itself when that is not a version
// ("latest"): one tag list and one image per module. With no registry to
// ask, or one that cannot answer offline (image.ErrUnavailable: tag lists
// are never cached), there is no candidate, and that is not a failure.
//
// It never fails as a whole: each ModuleStatus carries its failures.
// progress, when not nil, is called after each module with the number done,
// never concurrently. in.Mode is ignored.
func Outdated(ctx context.Context, in Input, progress func(done, total int)) []*ModuleStatus {
	in.Mode, in.Record.Host = ModeResolve, ""
	in.heirs = newHeirs(in.Old, in.Catalogue, in.Record.Elsewhere)
	mods := in.Catalogue.Modules
	out := make([]*ModuleStatus, len(mods))
	eachModule(len(mods), in.atOnce(), func(i int) { out[i] = checkModule(ctx, in, mods[i]) }, progress)
	return out
}

// checker carries one module through its outdated check.
type checker struct {
	in     Input
	m      *catalogue.Module
	opts   order.Options
	reg    Registry
	s      *ModuleStatus
	locked *image.Image
	tags   *claims
}

func checkModule(ctx context.Context, in Input, m *catalogue.Module) *ModuleStatus {
	u := look(ctx, in, m, nil)
	s := &ModuleStatus{Module: m, Locked: u.old}
	c := &checker{in: in, m: m, opts: u.opts, reg: u.reg, s: s, tags: u.tags}
	for _, err := range u.hostErrs {
		c.fail(err)
	}
	hostFailed := len(u.hostErrs) > 0
	obs := u.obs
	s.Missing = u.missing
	enrichErr := u.enrichErr
	if enrichErr != nil {
		c.fail(enrichErr)
	}
	var floors []observe.Observation
	for _, o := range obs {
		if IsFloor(o) {
			floors = append(floors, o)
		}
	}
	// The order of the questions saves requests: by tag first (the
	// candidate of a policy other than track-upstream), then what "pin
	// resolve" would decide (the pin, the candidate of track-upstream, by
	// digest the images that run), then the locked image: digests already
	// read come from the cache.
	var cand *image.Image
	asked, regOK := false, true
	if enrichErr == nil && m.Policy != catalogue.TrackUpstream {
		cand, regOK = c.upstream(ctx, floors, nil, weighed{})
		asked = true
	}
	var d *Decision
	var w weighed
	if !hostFailed && enrichErr == nil && regOK {
		d, w = decide(ctx, in, u)
	}
	if s.Locked == nil {
		c.add(StatusUnlocked, fmt.Sprintf("the lock has no entry for module %q; run \"pin resolve\"", m.Name))
	} else {
		img := claimedImage(s.Locked)
		if f := lockedFloor(d); f != nil {
			img = f.Image
		} else if w.lockUnread {
			// The decision could not read it either, and its error says
			// why (wouldResolve reports it): not asked again.
		} else if enrichErr == nil {
			// (A registry that just failed is not asked again.)
			content, _, err := lockedImage(ctx, c.reg, m, s.Locked, c.opts, c.platform(floors))
			if err != nil {
				c.fail(err)
			} else {
				img = content
			}
		}
		c.locked = &img
		c.tags.holdUp([]Floor{{Kind: FloorLocked, Image: img}})
	}
	c.running(ctx, floors)
	if d != nil {
		c.wouldResolve(d, w)
		c.reportUnverified(d)
		c.reportSkipped(d)
	}
	if enrichErr == nil && !asked && (d == nil || !failedOnRegistry(d)) {
		// The registry that just failed is not asked again.
		cand, _ = c.upstream(ctx, floors, d, w)
	}
	if enrichErr == nil && regOK {
		c.liveness(ctx, cand)
	}
	c.judge(ctx, cand)
	c.finish()
	return s
}

// lockedFloor is the previous entry as d read it, or nil.
func lockedFloor(d *Decision) *Floor {
	if d == nil {
		return nil
	}
	for i := range d.Floors {
		if d.Floors[i].Kind == FloorLocked {
			return &d.Floors[i]
		}
	}
	return nil
}

// failedOnRegistry reports whether the decision failed on a registry.
func failedOnRegistry(d *Decision) bool {
	var se *observe.SourceError
	return d.Err() != nil && errors.As(d.Err(), &se)
}

func (c *checker) add(st Status, msg string) {
	c.s.Findings = append(c.s.Findings, Finding{Status: st, Message: msg})
}

func (c *checker) fail(err error) {
	c.s.Failures = append(c.s.Failures, err)
	c.add(StatusError, err.Error())
}

// running weighs each container that is a floor against the lock, and the
// running containers against each other.
func (c *checker) running(ctx context.Context, floors []observe.Observation) {
	memo := map[string]image.Image{}
	for _, o := range floors {
		rs := RunningStatus{Observation: o, Created: c.opts.Created(o.Image), Version: versionOf(c.opts, o.Image)}
		if c.locked != nil {
			// The locked index's build of the container's own platform,
			// as plan and resolve hold it.
			rs.Order = c.tags.compare(ctx, o.Image, *c.locked, o.Image, readOn(ctx, c.reg, c.m, *c.locked, o.Image.Platform, memo), c.opts)
			runs := "runs"
			if !o.Running() {
				runs = "ran (" + o.State + ")"
			}
			ran, locked := labels(c.opts, o.Image, *c.locked)
			switch rs.Order.Cmp {
			case order.Newer:
				c.add(StatusBehindRunning, fmt.Sprintf("%s %s %s, newer than the locked %s (%s): taking it over with the lock would be a downgrade%s",
					o.Where(), runs, ran, locked, rs.Order.Detail, c.allowed()))
			case order.Unknown:
				c.add(StatusUnknownOrder, fmt.Sprintf("what %s %s, %s, cannot be ordered against the locked %s (%s)",
					o.Where(), runs, ran, locked, rs.Order.Detail))
			}
		}
		c.s.Running = append(c.s.Running, rs)
	}
	if skew(floors, c.opts) {
		var parts []string
		for _, o := range floors {
			if o.Running() {
				parts = append(parts, o.Where()+" runs "+withDigest(Label(c.opts, o.Image), o.Image))
			}
		}
		c.add(StatusSkew, "hosts run different images: "+strings.Join(parts, "; "))
	}
}

// wouldResolve reports what "pin resolve" would refuse or fail on, where
// the comparisons with what runs have not said it already.
func (c *checker) wouldResolve(d *Decision, w weighed) {
	switch {
	case errors.Is(d.Err(), image.ErrUnavailable):
		// Offline, and the content is out of reach: not a failure.
	case d.Err() != nil:
		c.fail(d.Err())
	case d.Refusal() != nil:
		if c.s.hasAny(StatusBehindRunning, StatusUnknownOrder) || (w.unread && d.Refusal().Kind != KindDowngrade) {
			// Said already; or offline, where the pin's content is out
			// of reach and no order can be told: "pin resolve" refuses,
			// the lock is not at fault. A downgrade its text shows is
			// reported all the same.
			return
		}
		st := StatusError
		switch d.Refusal().Kind {
		case KindDowngrade:
			st = StatusRegression
		case KindUnknown:
			st = StatusUnknownOrder
		case KindUnverified:
			st = StatusUnverified
		}
		msg, _, _ := strings.Cut(d.Refusal().Error(), "\n")
		c.add(st, "pin resolve would refuse: "+msg)
	}
}

// reportSkipped reports the upstream candidates "pin resolve" skipped
// because their signals conflict: their order is unknown, and a module
// whose newest tags cannot be ordered is not current. One skipped while
// it cools down (min_age) is newer upstream, and says until when.
func (c *checker) reportSkipped(d *Decision) {
	if d.Refusal() != nil {
		return // said by the refusal
	}
	for _, sk := range d.Skipped {
		if !sk.CoolingUntil.IsZero() {
			c.add(StatusBehindUpstream, fmt.Sprintf("upstream offers %s, %s", short(sk.Image), sk.Why))
			continue
		}
		c.add(StatusUnknownOrder, fmt.Sprintf("upstream offers %s, skipped: %s, so its version is unknown; pin locks the newest tag whose tag and label agree", short(sk.Image), sk.Why))
	}
}

// allowed notes a downgrade the lock states.
func (c *checker) allowed() string {
	if l := c.s.Locked; l != nil && l.AllowDowngrade != "" {
		return "; the lock states it: " + l.AllowDowngrade
	}
	return ""
}
