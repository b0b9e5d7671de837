package resolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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
	// StatusBehindRunning: a host runs an image newer than the lock's; a
	// cutover to the lock would be a downgrade.
	StatusBehindRunning Status = "behind-running"
	// StatusUnknownOrder: what a host runs, or the upstream candidate,
	// cannot be ordered against the lock.
	StatusUnknownOrder Status = "unknown-order"
	// StatusSkew: the module's running containers run different images.
	StatusSkew Status = "skew"
	// StatusError: a host or registry failed for the module.
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
var Statuses = []Status{StatusBehindRunning, StatusUnknownOrder, StatusSkew, StatusError, StatusUnlocked, StatusBehindUpstream, StatusCurrent}

func statusRank(s Status) int { return slices.Index(Statuses, s) }

// ModuleStatus is how one module's current lock entry stands against what
// its hosts run and what upstream offers.
type ModuleStatus struct {
	Module *catalogue.Module
	// Locked is the module's entry in the lock; nil when it has none.
	Locked *lock.Module
	// Running are the running containers the module takes over, by host and
	// container; stopped ones are not floors and are left out.
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
	// Failures are the hosts and registries that failed for the module.
	Failures []error
}

// RunningStatus is one running container and its image against the lock.
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

// Outdated reports, for every module of the catalogue (by name, in the
// catalogue's order), how the current lock entry (in.Old) stands against
// what the hosts run (in.Observed) and the newest upstream candidate within
// the module's policy. It writes nothing and locks nothing; it asks each
// registry for at most one tag list and one image per module: the
// candidate's tag is ranked from the list, and only it is described.
//
// The candidate is, for track-upstream, what "pin resolve" would weigh: the
// floating tag, or the newest tag passing the module's filters and variant.
// For exact and at-least-running, it is the newest release of the locked
// tag's variant, or the locked tag itself when that is not a version
// ("latest"). With no registry to ask, or one that cannot answer offline
// (image.ErrUnavailable: tag lists are never cached), there is no candidate,
// and that is not a failure.
//
// It never fails as a whole: each ModuleStatus carries its failures.
// progress, when not nil, is called after each module with the number done,
// never concurrently. in.FromHost is ignored.
func Outdated(ctx context.Context, in Input, progress func(done, total int)) []*ModuleStatus {
	mods := in.Catalogue.Modules
	out := make([]*ModuleStatus, len(mods))
	n := in.Concurrency
	if n <= 0 {
		n = 16
	}
	sem := make(chan struct{}, n)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for i, m := range mods {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = checkModule(ctx, in, m)
			if progress != nil {
				mu.Lock()
				done++
				progress(done, len(mods))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// checker carries one module through its outdated check.
type checker struct {
	r      *resolver // for the ranking and platform helpers of resolve
	s      *ModuleStatus
	locked *image.Image
}

func checkModule(ctx context.Context, in Input, m *catalogue.Module) *ModuleStatus {
	s := &ModuleStatus{Module: m, Locked: in.Old.Module(m.Name)}
	c := &checker{s: s, r: &resolver{ctx: ctx, in: in, m: m, opts: orderOptions(m, in.Now), d: &Decision{Module: m}}}
	if in.Registry != nil {
		c.r.reg = in.Registry(m.Image)
	}
	if s.Locked != nil {
		img := LockedImage(s.Locked)
		c.locked = &img
	} else {
		c.add(StatusUnlocked, fmt.Sprintf("the lock has no entry for module %q; run \"pin resolve\"", m.Name))
	}
	var failed []string
	for _, ro := range m.RunsOn {
		if err, ok := in.Observed.Errors[ro.Host]; ok && !slices.Contains(failed, ro.Host) {
			failed = append(failed, ro.Host)
			c.fail(&observe.SourceError{Source: "host " + ro.Host, Err: err})
		}
	}
	obs, missing := observe.Observations(m, in.Observed)
	s.Missing = missing
	enrichErr := observe.Enrich(ctx, c.r.reg, m, obs)
	if enrichErr != nil {
		c.fail(enrichErr)
	}
	var floors []observe.Observation
	for _, o := range obs {
		if o.Floor() {
			floors = append(floors, o)
		}
	}
	c.running(floors)
	if enrichErr == nil {
		// The registry that just failed is not asked again.
		c.upstream(floors)
	}
	c.finish()
	return s
}

func (c *checker) add(st Status, msg string) {
	c.s.Findings = append(c.s.Findings, Finding{Status: st, Message: msg})
}

func (c *checker) fail(err error) {
	c.s.Failures = append(c.s.Failures, err)
	c.add(StatusError, err.Error())
}

// running weighs each running container against the lock, and the running
// containers against each other.
func (c *checker) running(floors []observe.Observation) {
	opts := c.r.opts
	for _, o := range floors {
		rs := RunningStatus{Observation: o, Created: opts.Created(o.Image), Version: versionOf(opts, o.Image)}
		if c.locked != nil {
			rs.Order = order.Compare(o.Image, *c.locked, opts)
			switch rs.Order.Cmp {
			case order.Newer:
				c.add(StatusBehindRunning, fmt.Sprintf("%s runs %s, newer than the locked %s (%s): taking it over with the lock would be a downgrade%s",
					o.Where(), short(o.Image), short(*c.locked), rs.Order.Detail, c.allowed()))
			case order.Unknown:
				c.add(StatusUnknownOrder, fmt.Sprintf("what %s runs, %s, cannot be ordered against the locked %s (%s)",
					o.Where(), short(o.Image), short(*c.locked), rs.Order.Detail))
			}
		}
		c.s.Running = append(c.s.Running, rs)
	}
	if skew(floors, opts) {
		var parts []string
		for _, o := range floors {
			parts = append(parts, o.Where()+" runs "+short(o.Image))
		}
		c.add(StatusSkew, "hosts run different images: "+strings.Join(parts, "; "))
	}
}

// allowed notes a downgrade the lock states.
func (c *checker) allowed() string {
	if l := c.s.Locked; l != nil && l.AllowDowngrade != "" {
		return "; the lock states it: " + l.AllowDowngrade
	}
	return ""
}

// upstream finds the newest candidate within the module's policy, describes
// it, and weighs it against the lock.
func (c *checker) upstream(floors []observe.Observation) {
	r, m := c.r, c.r.m
	if r.reg == nil {
		return // no registry may be asked: no candidate, and no failure
	}
	regErr := func(what string, err error) {
		c.fail(fmt.Errorf("%s: %w", what, &observe.SourceError{Source: "registry of " + m.Image, Err: err}))
	}
	ref, followLocked := "", false
	switch {
	case m.Policy == catalogue.TrackUpstream && m.Tag != "":
		ref = m.Tag
	case m.Policy != catalogue.TrackUpstream && c.s.Locked != nil && c.s.Locked.Tag != "" && !c.isVersion(c.s.Locked.Tag):
		ref, followLocked = c.s.Locked.Tag, true // a floating tag was locked: follow it
	default:
		tags, err := r.reg.Tags(r.ctx, m.Image)
		if errors.Is(err, image.ErrUnavailable) {
			return // offline: tag lists are not kept, so no candidate, and no failure
		}
		if err != nil {
			regErr("listing tags", err)
			return
		}
		ranked := c.rankModule()
		ref, _ = ranked.rank(tags, floors)
		c.hint(tags, floors, ref)
	}
	if ref == "" {
		return
	}
	img, err := r.reg.Image(r.ctx, m.Image, ref, r.platform(floors))
	switch {
	case followLocked && errors.Is(err, image.ErrNotFound):
		return // the tag is gone upstream: no candidate; the policy does not follow it
	case errors.Is(err, image.ErrUnavailable):
		return // offline, and the cache does not know the tag: no candidate
	}
	if err != nil {
		regErr(fmt.Sprintf("describing the upstream tag %q", ref), err)
		return
	}
	img.Tag = ref
	cand := &Candidate{Image: img, Version: versionOf(r.opts, img), Created: r.opts.Created(img)}
	if c.locked != nil {
		cand.Order = order.Compare(img, *c.locked, r.opts)
		switch cand.Order.Cmp {
		case order.Newer:
			c.add(StatusBehindUpstream, fmt.Sprintf("upstream offers %s, newer than the locked %s (%s)", short(img), short(*c.locked), cand.Order.Detail))
		case order.Unknown:
			c.add(StatusUnknownOrder, fmt.Sprintf("the upstream %s cannot be ordered against the locked %s (%s)", short(img), short(*c.locked), cand.Order.Detail))
		}
	}
	c.s.Upstream = cand
}

func (c *checker) isVersion(tag string) bool {
	_, ok := c.r.m.Versioning.Parse(tag)
	return ok
}

// rankModule is the resolver that ranks upstream tags for the module. For
// track-upstream it is resolve's own: filters and variant as "pin resolve"
// applies them. For exact and at-least-running, whose filters are ignored,
// the variant to keep is the locked tag's.
func (c *checker) rankModule() *resolver {
	m := c.r.m
	if m.Policy == catalogue.TrackUpstream {
		return c.r
	}
	cp := *m
	cp.Tag, cp.Constraint, cp.ConstraintText, cp.Tags, cp.Prerelease = "", nil, "", nil, false
	if l := c.s.Locked; l != nil && l.Tag != "" && c.isVersion(l.Tag) {
		cp.Pin = catalogue.Pin{Tag: l.Tag}
	}
	r := *c.r
	r.m = &cp
	return &r
}

// hint records the newest tag the constraint leaves out, when it is newer
// than the newest tag within. Only the tag list is read.
func (c *checker) hint(tags []string, floors []observe.Observation, within string) {
	m := c.r.m
	if m.Policy != catalogue.TrackUpstream || m.Constraint == nil {
		return
	}
	cp := *m
	cp.Constraint, cp.ConstraintText = nil, ""
	r := *c.r
	r.m = &cp
	out, _ := r.rank(tags, floors)
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

// versionOf renders an image's version as a lock entry records it.
func versionOf(opts order.Options, img image.Image) string {
	v, fromTag, ok := opts.Version(img)
	switch {
	case !ok:
		return ""
	case fromTag:
		return v.String()
	}
	return v.Original
}
