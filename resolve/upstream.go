package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/observe"

	"github.com/pin-tool/pin/internal/version"
	"github.com/pin-tool/pin/lock"
)

// trackUpstream locks the newest upstream candidate, or a floating tag,
// never older than what runs.
func (r *resolver) trackUpstream(floors []observe.Observation) {
	if r.reg == nil {
		r.d.Err = &observe.SourceError{Source: "registry of " + r.m.Image, Err: fmt.Errorf("policy track-upstream needs a registry or a mirror, and none may be asked (offline)")}
		return
	}
	if r.m.Tag != "" {
		img, err := r.fetch(r.m.Tag, r.platform(floors))
		if err != nil {
			r.d.Err = fmt.Errorf("following tag %q: %w", r.m.Tag, err)
			return
		}
		r.pick(&img, "the floating tag "+r.m.Tag, lock.SourceUpstream, floors)
		return
	}
	tags, err := r.reg.Tags(r.ctx, r.m.Image)
	if err != nil {
		r.d.Err = fmt.Errorf("listing tags: %w", &observe.SourceError{Source: "registry of " + r.m.Image, Err: err})
		return
	}
	best, n := r.rank(tags, floors)
	if best == "" {
		if len(floors) == 0 {
			r.d.Err = fmt.Errorf("no tag of %s matches the module's filters (%d tags listed)%s", r.m.Image, len(tags), r.filters())
			return
		}
		r.pick(nil, "", lock.SourceUpstream, floors)
		return
	}
	img, err := r.fetch(best, r.platform(floors))
	if err != nil {
		r.d.Err = fmt.Errorf("describing the newest tag %q: %w", best, err)
		return
	}
	r.pick(&img, fmt.Sprintf("the newest upstream tag of %d matching%s,", n, r.filters()), lock.SourceUpstream, floors)
}

func (r *resolver) filters() string {
	var f []string
	if r.m.ConstraintText != "" {
		f = append(f, "constraint "+r.m.ConstraintText)
	}
	if r.m.Tags != nil {
		f = append(f, "tags /"+r.m.Tags.String()+"/")
	}
	if len(f) == 0 {
		return ""
	}
	return " " + strings.Join(f, ", ")
}

// rank picks the newest tag that passes the module's filters and keeps the
// variant of the pin (else of the running tag). It returns the tag and how
// many tags qualified. Only tags are read: no manifest or config is fetched
// to rank.
func (r *resolver) rank(tags []string, floors []observe.Observation) (string, int) {
	s := r.m.Versioning
	type cand struct {
		tag string
		v   version.Version
	}
	var all []cand
	for _, t := range tags {
		v, ok := s.Parse(t)
		if !ok {
			continue
		}
		if v.Prerelease() && !r.m.Prerelease {
			continue
		}
		if r.m.Tags != nil && !r.m.Tags.MatchString(t) {
			continue
		}
		if r.m.Constraint != nil && !r.m.Constraint.Check(v.SemVer()) {
			continue
		}
		all = append(all, cand{t, v})
	}
	if !r.m.AnyVariant {
		want, ok := r.referenceVariant(floors)
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

// referenceVariant is the variant to keep: the pin's tag, else the tag a
// running container was started from.
func (r *resolver) referenceVariant(floors []observe.Observation) (string, bool) {
	if v, ok := r.m.Versioning.Parse(r.m.Pin.Tag); ok && r.m.Pin.Tag != "" {
		return v.Variant(), true
	}
	for _, o := range floors {
		if v, ok := r.m.Versioning.Parse(o.Image.Tag); ok && o.Image.Tag != "" {
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
		prec[x.Variant()] = len(x.Parts)
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
