package resolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/internal/version"
	"github.com/pin-tool/pin/lock"
)

// Status is one finding "pin outdated" reports for a module.
type Status string

const (
	// StatusBehindRunning: a host runs (or ran, in a stopped container) an
	// image newer than the lock's; a cutover to the lock would be a
	// downgrade.
	StatusBehindRunning Status = "behind-running"
	// StatusRegression: "pin resolve" would refuse the module: the
	// catalogue would take the lock back to an older image than a floor
	// (a pin edited down, an upstream tag moved back).
	StatusRegression Status = "regression"
	// StatusDigestGone: the registry no longer serves the locked digest
	// (a HEAD by digest finds nothing): the next pull of the lock fails.
	StatusDigestGone Status = "digest-gone"
	// StatusTagMoved: a locked tag that reads as a full semver version (the
	// entry's tag, or one of its recorded tags) names another digest now
	// (a HEAD by tag): upstream re-published it. The lock still pulls its
	// digest.
	StatusTagMoved Status = "tag-moved"
	// StatusUnknownOrder: what a host runs, or the upstream candidate,
	// cannot be ordered against the lock.
	StatusUnknownOrder Status = "unknown-order"
	// StatusSkew: the module's running containers run different images.
	StatusSkew Status = "skew"
	// StatusError: a host or registry failed for the module, or "pin
	// resolve" would fail on it (no tag passes the filters, a pin that does
	// not exist, a lock entry or pin that disagrees with its content).
	StatusError Status = "error"
	// StatusUnlocked: the lock has no entry for the module yet.
	StatusUnlocked Status = "unlocked"
	// StatusBehindUpstream: upstream offers a newer image within the
	// module's policy.
	StatusBehindUpstream Status = "behind-upstream"
	// StatusCurrent: none of the others.
	StatusCurrent Status = "current"
)

// Statuses lists every status in the order reports give them: the
// dangerous first.
var Statuses = []Status{StatusBehindRunning, StatusRegression, StatusDigestGone, StatusTagMoved, StatusUnknownOrder, StatusSkew, StatusUnverified, StatusError, StatusUnlocked, StatusBehindUpstream, StatusCurrent}

func statusRank(s Status) int { return slices.Index(Statuses, s) }

// ModuleStatus is how one module's current lock entry stands against what
// its hosts run and what upstream offers.
type ModuleStatus struct {
	Module *catalogue.Module
	// Locked is the module's entry in the lock; nil when it has none.
	Locked *lock.Module
	// Running are the containers the module takes over that are floors
	// (whatever their state but "created"), by host and container.
	Running []RunningStatus
	// Missing lists runs_on containers not found on their host.
	Missing []string
	// Upstream is the newest upstream candidate within the module's policy;
	// nil when there is none or no registry may be asked.
	Upstream *Candidate
	// Hint is the newest tag outside the module's constraint, when it is
	// newer than every tag within; only tags are read for it.
	Hint string
	// Statuses are the distinct statuses of Findings in the order of
	// Statuses; [current] when there are no findings.
	Statuses []Status
	// Findings say, one sentence each, what makes each status.
	Findings []Finding
	// Failures are the hosts and registries that failed for the module, and
	// what "pin resolve" would fail on.
	Failures []error
}

// RunningStatus is one container and its image against the lock.
type RunningStatus struct {
	observe.Observation
	// Version and Created are what ordering knew of the image: the version
	// under the module's versioning, and a plausible build date.
	Version string
	Created time.Time
	// Order is the running image against the locked one; Cmp is Unknown
	// with an empty Rule when nothing is locked.
	Order order.Result
}

// Candidate is the upstream image outdated weighs against the lock.
type Candidate struct {
	Image   image.Image
	Version string
	Created time.Time
	// Order is the candidate against the locked image (empty Rule when
	// nothing is locked).
	Order order.Result
}

// Finding is one reason for a status, in words.
type Finding struct {
	Status  Status
	Message string
}

// Has reports whether the module carries status st.
func (s *ModuleStatus) Has(st Status) bool { return slices.Contains(s.Statuses, st) }

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
	in.Mode, in.Host = ModeResolve, ""
	in.heirs = newHeirs(in.Old, in.Catalogue)
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
	s := &ModuleStatus{Module: m, Locked: in.Old.Module(m.Name)}
	c := &checker{in: in, m: m, opts: orderOptions(m, in.Now), reg: in.registry(m), s: s}
	c.tags = newClaims(c.reg, m)
	hostErrs := observe.HostErrors(m, in.Observed)
	for _, err := range hostErrs {
		c.fail(err)
	}
	hostFailed := len(hostErrs) > 0
	obs, missing := observe.Observations(m, in.Observed)
	s.Missing = missing
	enrichErr := observe.Enrich(ctx, c.reg, m, obs)
	if enrichErr != nil {
		c.fail(enrichErr)
	}
	var floors []observe.Observation
	c.tags.vouchHosts(obs)
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
		cand, regOK = c.upstream(ctx, floors, nil)
		asked = true
	}
	var d *Decision
	if !hostFailed && enrichErr == nil && regOK {
		d = decide(ctx, in, m, c.tags)
	}
	if s.Locked == nil {
		c.add(StatusUnlocked, fmt.Sprintf("the lock has no entry for module %q; run \"pin resolve\"", m.Name))
	} else {
		img := claimedImage(s.Locked)
		if f := lockedFloor(d); f != nil {
			img = f.Image
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
		c.wouldResolve(d)
		c.reportUnverified(d)
		c.reportSkipped(d)
	}
	if enrichErr == nil && !asked && (d == nil || !failedOnRegistry(d)) {
		// The registry that just failed is not asked again.
		cand, _ = c.upstream(ctx, floors, d)
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
	return d.Err != nil && errors.As(d.Err, &se)
}

func (c *checker) add(st Status, msg string) {
	c.s.Findings = append(c.s.Findings, Finding{Status: st, Message: msg})
}

func (c *checker) fail(err error) {
	for _, f := range c.s.Failures {
		if f.Error() == err.Error() {
			return
		}
	}
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
func (c *checker) wouldResolve(d *Decision) {
	switch {
	case errors.Is(d.Err, image.ErrUnavailable):
		// Offline, and the content is out of reach: not a failure.
	case d.Err != nil:
		c.fail(d.Err)
	case d.Refusal != nil:
		if c.s.hasAny(StatusBehindRunning, StatusUnknownOrder) || (d.unread && d.Refusal.Kind != KindDowngrade) {
			// Said already; or offline, where the pin's content is out
			// of reach and no order can be told: "pin resolve" refuses,
			// the lock is not at fault. A downgrade its text shows is
			// reported all the same.
			return
		}
		st := StatusError
		switch d.Refusal.Kind {
		case KindDowngrade:
			st = StatusRegression
		case KindUnknown:
			st = StatusUnknownOrder
		case KindUnverified:
			st = StatusUnverified
		}
		msg, _, _ := strings.Cut(d.Refusal.Error(), "\n")
		c.add(st, "pin resolve would refuse: "+msg)
	}
}

// reportSkipped reports the upstream candidates "pin resolve" skipped
// because their signals conflict: their order is unknown, and a module
// whose newest tags cannot be ordered is not current.
func (c *checker) reportSkipped(d *Decision) {
	if d.Refusal != nil {
		return // said by the refusal
	}
	for _, sk := range d.Skipped {
		c.add(StatusUnknownOrder, fmt.Sprintf("upstream offers %s, skipped: %s, so its version is unknown; pin locks the newest tag whose tag and label agree", short(sk.Image), sk.Why))
	}
}

func (s *ModuleStatus) hasAny(st ...Status) bool {
	return slices.ContainsFunc(s.Findings, func(f Finding) bool { return slices.Contains(st, f.Status) })
}

// allowed notes a downgrade the lock states.
func (c *checker) allowed() string {
	if l := c.s.Locked; l != nil && l.AllowDowngrade != "" {
		return "; the lock states it: " + l.AllowDowngrade
	}
	return ""
}

// upstream finds the newest candidate within the module's policy and
// describes it (judge weighs it against the lock). For track-upstream it
// is what d weighed, when d was decided. ok is false when the registry
// failed.
func (c *checker) upstream(ctx context.Context, floors []observe.Observation, d *Decision) (*image.Image, bool) {
	m := c.m
	if c.reg == nil {
		return nil, true // no registry may be asked: no candidate, and no failure
	}
	failed := false
	regErr := func(what string, err error) {
		failed = true
		c.fail(fmt.Errorf("%s: %w", what, &observe.SourceError{Source: "registry of " + m.Image, Err: err}))
	}
	var img *image.Image
	if m.Policy == catalogue.TrackUpstream && d != nil && (d.candidate != nil || d.listed) {
		img = d.candidate
		if d.listed {
			c.hint(d.tags, floors, tagOf(img))
		}
	} else {
		ref, followLocked := "", false
		switch {
		case m.Policy == catalogue.TrackUpstream && m.Tag != "":
			ref = m.Tag
		case m.Policy != catalogue.TrackUpstream && c.s.Locked != nil && c.s.Locked.Tag != "" && !c.isVersion(c.s.Locked.Tag):
			ref, followLocked = c.s.Locked.Tag, true // a floating tag was locked: follow it
		default:
			tags, err := c.reg.Tags(ctx, m.Image)
			if errors.Is(err, image.ErrUnavailable) {
				return nil, !failed // offline: tag lists are not kept, so no candidate, and no failure
			}
			if err != nil {
				regErr("listing tags", err)
				return nil, !failed
			}
			ref, _ = rank(tags, c.filters(), floors)
			c.hint(tags, floors, ref)
		}
		if ref == "" {
			return nil, !failed
		}
		got, err := c.reg.Image(ctx, m.Image, ref, c.platform(floors))
		switch {
		case followLocked && errors.Is(err, image.ErrNotFound):
			return nil, !failed // the tag is gone upstream: no candidate; the policy does not follow it
		case errors.Is(err, image.ErrUnavailable):
			return nil, !failed // offline, and the cache does not know the tag: no candidate
		case err != nil:
			regErr(fmt.Sprintf("describing the upstream tag %q", ref), err)
			return nil, !failed
		}
		got.Tag = ref
		c.tags.vouch(got)
		img = &got
	}
	return img, !failed
}

// judge weighs the upstream candidate against the lock.
func (c *checker) judge(ctx context.Context, img *image.Image) {
	if img == nil {
		return
	}
	cand := &Candidate{Image: *img, Version: versionOf(c.opts, *img), Created: c.opts.Created(*img)}
	if c.locked != nil {
		cand.Order = c.tags.compare(ctx, *img, *c.locked, *img, *c.locked, c.opts)
		up, locked := labels(c.opts, *img, *c.locked)
		switch cand.Order.Cmp {
		case order.Newer:
			c.add(StatusBehindUpstream, fmt.Sprintf("upstream offers %s, newer than the locked %s (%s)", up, locked, cand.Order.Detail))
		case order.Unknown:
			c.add(StatusUnknownOrder, fmt.Sprintf("the upstream %s cannot be ordered against the locked %s (%s)", up, locked, cand.Order.Detail))
		}
	}
	c.s.Upstream = cand
}

func tagOf(img *image.Image) string {
	if img == nil {
		return ""
	}
	return img.Tag
}

// platform is the platform to resolve an index to: that of a container the
// module takes over, else the module's.
func (c *checker) platform(floors []observe.Observation) string {
	for _, o := range floors {
		if o.Image.Platform != "" {
			return o.Image.Platform
		}
	}
	return c.m.Platform()
}

func (c *checker) isVersion(tag string) bool {
	_, ok := c.m.Versioning.Parse(tag)
	return ok
}

// filters rank upstream tags for the report. For track-upstream they are
// the module's, as "pin resolve" applies them. For exact and
// at-least-running, whose filters do not apply, only the variant of the
// locked tag is kept.
func (c *checker) filters() Filters {
	if c.m.Policy == catalogue.TrackUpstream {
		return moduleFilters(c.m)
	}
	f := Filters{Scheme: c.m.Versioning, AnyVariant: c.m.AnyVariant}
	if l := c.s.Locked; l != nil && l.Tag != "" && c.isVersion(l.Tag) {
		f.Reference = l.Tag
	}
	return f
}

// hint records the newest tag the constraint leaves out, when it is newer
// than the newest tag within. Only the tag list is read.
func (c *checker) hint(tags []string, floors []observe.Observation, within string) {
	m := c.m
	if m.Policy != catalogue.TrackUpstream || m.Constraint == nil {
		return
	}
	f := moduleFilters(m)
	f.Constraint, f.ConstraintText = nil, ""
	out, _ := rank(tags, f, floors)
	if out == "" || out == within {
		return
	}
	ov, _ := m.Versioning.Parse(out)
	if wv, ok := m.Versioning.Parse(within); ok && within != "" && version.Compare(ov, wv) <= 0 {
		return
	}
	c.s.Hint = out
}

// finish sorts the findings by status and derives the statuses.
func (c *checker) finish() {
	s := c.s
	slices.SortStableFunc(s.Findings, func(a, b Finding) int { return statusRank(a.Status) - statusRank(b.Status) })
	for _, f := range s.Findings {
		if !slices.Contains(s.Statuses, f.Status) {
			s.Statuses = append(s.Statuses, f.Status)
		}
	}
	if len(s.Statuses) == 0 {
		s.Statuses = []Status{StatusCurrent}
	}
}
