package resolve

import (
	"context"
	"errors"
	"fmt"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/internal/version"
)

// upstream finds the newest candidate within the module's policy and
// describes it (judge weighs it against the lock). For track-upstream it
// is what the decision d weighed (w), when d was decided. ok is false when
// the registry failed.
func (c *checker) upstream(ctx context.Context, floors []observe.Observation, d *Decision, w weighed) (*image.Image, bool) {
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
	if m.Policy == catalogue.TrackUpstream && d != nil && (w.candidate != nil || w.listed) {
		img = w.candidate
		if w.listed {
			c.hint(w.tags, floors, tagOf(img))
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
