package resolve

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/version"
	"github.com/pin-tool/pin/lock"
)

// Filters are what ranks upstream tags: the module's versioning and
// filters for track-upstream, and for a report (Outdated) of another
// policy, none but the variant to keep.
type Filters struct {
	Scheme     version.Scheme
	Constraint *semver.Constraints
	// ConstraintText is Constraint as written, for messages.
	ConstraintText string
	Tags           *regexp.Regexp
	Prerelease     bool
	// AnyVariant ranks tags of every variant together.
	AnyVariant bool
	// Reference is the tag whose variant to keep ("" for none: then that of
	// a running container's tag, else the most common).
	Reference string
}

// moduleFilters are the filters "pin resolve" applies to a track-upstream
// module: its own, and the variant of its pin.
func moduleFilters(m *catalogue.Module) Filters {
	return Filters{Scheme: m.Versioning, Constraint: m.Constraint, ConstraintText: m.ConstraintText, Tags: m.Tags,
		Prerelease: m.Prerelease, AnyVariant: m.AnyVariant, Reference: m.Pin.Tag}
}

// String says the filters in words, " constraint <2, tags /^1\./", or "".
func (f Filters) String() string {
	var s []string
	if f.ConstraintText != "" {
		s = append(s, "constraint "+f.ConstraintText)
	}
	if f.Tags != nil {
		s = append(s, "tags /"+f.Tags.String()+"/")
	}
	if len(s) == 0 {
		return ""
	}
	return " " + strings.Join(s, ", ")
}

// NoTagError is a track-upstream module none of whose tags passes its
// filters.
type NoTagError struct {
	Repository string
	Listed     int
	Filters    string
}

func (e *NoTagError) Error() string {
	return fmt.Sprintf("no tag of %s matches the module's filters (%d tags listed)%s", e.Repository, e.Listed, e.Filters)
}

// trackUpstream locks the newest upstream candidate, or a floating tag,
// never below a floor. It records on d what it weighed, for Outdated.
func (dc *decider) trackUpstream(ctx context.Context, d *Decision) (choice, *Refusal, error) {
	if dc.reg == nil {
		return choice{}, nil, fmt.Errorf("registry of %s: policy track-upstream needs a registry or a mirror, and none may be asked (offline)", dc.m.Image)
	}
	if dc.m.Tag != "" {
		img, err := dc.fetch(ctx, dc.m.Tag)
		if err != nil {
			return choice{}, nil, fmt.Errorf("following tag %q: %w", dc.m.Tag, err)
		}
		img.Tag = dc.m.Tag
		if err := dc.mustVerify(ctx, img, "the floating tag "+dc.m.Tag); err != nil {
			return choice{}, nil, err
		}
		d.candidate = &img
		if err := dc.settle(ctx); err != nil {
			return choice{}, nil, err
		}
		return dc.pick(ctx, &img, "the floating tag", lock.SourceUpstream)
	}
	tags, err := dc.reg.Tags(ctx, dc.m.Image)
	if err != nil {
		return choice{}, nil, fmt.Errorf("listing tags: %w", &observe.SourceError{Source: "registry of " + dc.m.Image, Err: err})
	}
	d.tags, d.listed = tags, true
	f := moduleFilters(dc.m)
	best, n := rank(tags, f, dc.obs)
	best, n, verified, err := dc.newestVerified(ctx, tags, f, best, n)
	if err != nil {
		return choice{}, nil, err
	}
	if best == "" {
		if r := dc.noneVerified(); r != nil {
			return choice{}, nil, r
		}
		if !slices.ContainsFunc(dc.obs, IsFloor) && (dc.ver == nil || len(dc.ver.found.Skipped) == 0 || dc.old == nil) {
			return choice{}, nil, &NoTagError{Repository: dc.m.Image, Listed: len(tags), Filters: f.String()}
		}
		if err := dc.settle(ctx); err != nil {
			return choice{}, nil, err
		}
		return dc.pick(ctx, nil, "", lock.SourceUpstream)
	}
	img, err := dc.fetchOr(ctx, best, verified)
	if err != nil {
		return choice{}, nil, fmt.Errorf("describing the newest tag %q: %w", best, err)
	}
	img.Tag = best
	d.candidate = &img
	if err := dc.settle(ctx); err != nil {
		return choice{}, nil, err
	}
	return dc.pick(ctx, &img, "the newest upstream tag"+matching(f), lock.SourceUpstream)
}

// rank picks the newest tag that passes the filters and keeps the
// reference variant (else the variant of a running container's tag, else
// the most common). It returns the tag and how many tags qualified. Only
// tags are read: no manifest or config is fetched to rank.
func rank(tags []string, f Filters, obs []observe.Observation) (string, int) {
	type cand struct {
		tag string
		v   version.Version
	}
	var all []cand
	for _, t := range tags {
		v, ok := f.Scheme.Parse(t)
		if !ok {
			continue
		}
		if v.Prerelease() && !f.Prerelease {
			continue
		}
		if f.Tags != nil && !f.Tags.MatchString(t) {
			continue
		}
		if f.Constraint != nil {
			sv, ok := v.SemVerOK()
			if !ok || !f.Constraint.Check(sv) {
				continue
			}
		}
		all = append(all, cand{t, v})
	}
	if !f.AnyVariant {
		want, ok := referenceVariant(f, obs)
		if !ok {
			want = commonVariant(all, func(c cand) version.Version { return c.v })
		}
		all = slices.DeleteFunc(all, func(c cand) bool { return c.v.Variant() != want })
	}
	if len(all) == 0 {
		return "", 0
	}
	best := slices.MaxFunc(all, func(a, b cand) int {
		if c := version.Compare(a.v, b.v); c != 0 {
			return c
		}
		return strings.Compare(b.tag, a.tag) // equal versions: the first tag by name
	})
	return best.tag, len(all)
}

// referenceVariant is the variant to keep: the reference tag's, else that
// of the tag a container was started from.
func referenceVariant(f Filters, obs []observe.Observation) (string, bool) {
	if v, ok := f.Scheme.Parse(f.Reference); ok && f.Reference != "" {
		return v.Variant(), true
	}
	for _, o := range obs {
		if !IsFloor(o) {
			continue
		}
		if v, ok := f.Scheme.Parse(o.Image.Tag); ok && o.Image.Tag != "" {
			return v.Variant(), true
		}
	}
	return "", false
}

// commonVariant is the variant with no suffix that most tags share (ties:
// the higher precision, then the shorter prefix), for a module with neither
// a versioned pin nor a versioned running tag.
func commonVariant[T any](all []T, v func(T) version.Version) string {
	count := map[string]int{}
	prec := map[string]int{}
	for _, c := range all {
		x := v(c)
		if x.Suffix != "" {
			continue
		}
		count[x.Variant()]++
		prec[x.Variant()] = x.Precision()
	}
	best := ""
	for k, n := range count {
		switch {
		case best == "", n > count[best],
			n == count[best] && prec[k] > prec[best],
			n == count[best] && prec[k] == prec[best] && k < best:
			best = k
		}
	}
	return best
}

// matching says the filters an upstream tag passed, for reasons:
// " matching constraint < 1.25", or "" with none.
func matching(f Filters) string {
	if fs := f.String(); fs != "" {
		return " matching" + fs
	}
	return ""
}
