package resolve

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
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
// never below a floor. It records on w what it weighed (the candidate, the
// tag list, the tags skipped), for the Decision and for Outdated.
func (dc *decider) trackUpstream(ctx context.Context, w *weighed) (*settled, choice, *Refusal, error) {
	if dc.reg == nil {
		return nil, choice{}, nil, fmt.Errorf("registry of %s: policy track-upstream needs a registry or a mirror, and none may be asked (offline)", dc.m.Image)
	}
	if dc.m.Tag != "" {
		img, err := dc.fetch(ctx, dc.m.Tag)
		if err != nil {
			return nil, choice{}, nil, fmt.Errorf("following tag %q: %w", dc.m.Tag, err)
		}
		img.Tag = dc.m.Tag
		if err := dc.mustVerify(ctx, img, "the floating tag "+dc.m.Tag); err != nil {
			return nil, choice{}, nil, err
		}
		if c := dc.opts.VersionOf(img); c.Kind == order.Conflicting {
			// The module follows this tag: it cannot be skipped.
			return nil, choice{}, nil, floatingUnknownRefusal(dc.m, dc.opts, img, c)
		}
		if sk, cooling := dc.coolingDown(img); cooling {
			// What the tag names now waits; the floors (the previous
			// entry among them) are locked meanwhile.
			w.skipped = []Skipped{sk}
			s, err := dc.settle(ctx)
			if err != nil {
				return s, choice{}, nil, err
			}
			return s.with(s.pick(ctx, nil, false, "", lock.SourceUpstream))
		}
		w.candidate = &img
		s, err := dc.settle(ctx)
		if err != nil {
			return s, choice{}, nil, err
		}
		return s.with(s.pick(ctx, &img, false, "the floating tag "+dc.m.Tag, lock.SourceUpstream))
	}
	tags, err := dc.reg.Tags(ctx, dc.m.Image)
	if err != nil {
		return nil, choice{}, nil, fmt.Errorf("listing tags: %w", &observe.SourceError{Source: "registry of " + dc.m.Image, Err: err})
	}
	w.tags, w.listed = tags, true
	f := moduleFilters(dc.m)
	best, img, skipped, err := dc.newestAgreeing(ctx, tags, f)
	w.skipped = skipped
	if err != nil {
		return nil, choice{}, nil, err
	}
	if best == "" {
		if r := dc.noneVerified(); r != nil {
			return nil, choice{}, nil, r
		}
		if r := dc.coolingRefusal(skipped); r != nil {
			return nil, choice{}, nil, r
		}
		if r := dc.noneAgree(skipped); r != nil {
			return nil, choice{}, nil, r
		}
		if !slices.ContainsFunc(dc.obs, IsFloor) && len(skipped) == 0 && (dc.ver == nil || len(dc.ver.found.Skipped) == 0 || dc.old == nil) {
			return nil, choice{}, nil, &NoTagError{Repository: dc.m.Image, Listed: len(tags), Filters: f.String()}
		}
		s, err := dc.settle(ctx)
		if err != nil {
			return s, choice{}, nil, err
		}
		return s.with(s.pick(ctx, nil, false, "", lock.SourceUpstream))
	}
	w.candidate = &img
	s, err := dc.settle(ctx)
	if err != nil {
		return s, choice{}, nil, err
	}
	return s.with(s.pick(ctx, &img, false, "the newest upstream tag"+matching(f), lock.SourceUpstream))
}

// maxSkipped bounds how many upstream tags whose signals conflict, newest
// first, a track-upstream module skips before it settles for its floors:
// each costs a manifest and a config.
const maxSkipped = 10

// Skipped is an upstream candidate pin did not lock, and why.
type Skipped struct {
	Image image.Image
	// Why says it in words: "conflicting versions: the tag says 2.0.0,
	// the label says 1.0.0".
	Why string
	// CoolingUntil, when set, is when the candidate is old enough for the
	// module's min_age (cooldown.go): it is skipped until then, and its
	// version is known.
	CoolingUntil time.Time
}

// newestAgreeing is the newest upstream tag passing the filters (and the
// module's verify policy) whose image's tag and version label agree, and
// that image. A newer one whose signals conflict (tag 2.0.0, label 1.0.0)
// has a version nobody knows: it is never picked, even with nothing to
// hold it against, but skipped, and returned (the plan and outdated show
// it). "" when none is left, or after maxSkipped.
func (dc *decider) newestAgreeing(ctx context.Context, tags []string, f Filters) (string, image.Image, []Skipped, error) {
	left := tags
	var skipped []Skipped
	for range maxSkipped + 1 {
		best, n := rank(left, f, dc.obs)
		best, _, verified, err := dc.newestVerified(ctx, left, f, best, n)
		if err != nil || best == "" {
			return "", image.Image{}, skipped, err
		}
		img, err := dc.fetchOr(ctx, best, verified)
		if err != nil {
			return "", image.Image{}, skipped, fmt.Errorf("describing the newest tag %q: %w", best, err)
		}
		img.Tag = best
		c := dc.opts.VersionOf(img)
		if c.Kind != order.Conflicting {
			sk, cooling := dc.coolingDown(img)
			if !cooling {
				return best, img, skipped, nil
			}
			skipped = append(skipped, sk)
			left = slices.DeleteFunc(slices.Clone(left), func(t string) bool { return t == best })
			continue
		}
		skipped = append(skipped, Skipped{Image: img, Why: c.String()})
		left = slices.DeleteFunc(slices.Clone(left), func(t string) bool { return t == best })
	}
	return "", image.Image{}, skipped, nil
}

// noneAgree refuses a track-upstream module whose newest tags all have
// conflicting signals when nothing runs and nothing was locked: there is
// no floor to settle for. Nil otherwise.
func (dc *decider) noneAgree(skipped []Skipped) *Refusal {
	if len(skipped) == 0 || onlyCooling(skipped) || dc.old != nil || len(dc.heirs) > 0 || slices.ContainsFunc(dc.obs, IsFloor) {
		return nil
	}
	return noneAgreeRefusal(dc.m, dc.opts, skipped)
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
