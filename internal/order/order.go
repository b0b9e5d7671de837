package order

import (
	"fmt"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

// Cmp is the order of A relative to B.
type Cmp int

const (
	Unknown Cmp = iota
	Older
	Equal
	Newer
)

func (c Cmp) String() string {
	switch c {
	case Older:
		return "older"
	case Equal:
		return "equal"
	case Newer:
		return "newer"
	}
	return "unknown"
}

// Rule names the rule that decided an order.
type Rule string

const (
	RuleContent Rule = "content"
	RuleVersion Rule = "version"
	RuleCreated Rule = "created"
	RuleNone    Rule = "none"
)

// Result is the order of A relative to B, the rule that decided it and a
// sentence saying how ("1.22.6 < 1.27.3").
type Result struct {
	Cmp    Cmp
	Rule   Rule
	Detail string
}

// Options are the module settings that ordering depends on.
type Options struct {
	Scheme version.Scheme
	// AnyVariant lets tags of different variants be compared.
	AnyVariant bool
	// Now bounds plausible build dates; dates after it are unknown.
	Now time.Time
	// Platform is the platform a pull takes an index for when the other
	// image does not say its own (the module's platform); "" is
	// linux/amd64.
	Platform string
}

// earliestPlausible is the first build date taken as real. Reproducible
// builds stamp 1970-01-01 or 0001-01-01; no container image predates 1990.
var earliestPlausible = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)

// Compare orders a relative to b, by the first rule that decides:
//
//  1. the same content: Equal.
//  2. a conflicting version on either side (tag and label disagree):
//     Unknown, whatever else is known.
//  3. both versions known and of one variant (or AnyVariant): the version
//     decides when the versions differ; equal versions (a rebuild) fall to
//     the build dates.
//  4. both versions known, of different variants: version.Relate reads
//     them as intervals; the plausible build dates decide only where they
//     agree with it (or where it says nothing), else Unknown. Without
//     plausible dates on both sides: Unknown.
//  5. the build dates, when both are plausible and differ.
//  6. Unknown.
//
// Compare is antisymmetric: Compare(b, a) mirrors Compare(a, b) (Older and
// Newer swap) by the same rule. An Unknown result has Rule RuleNone.
func Compare(a, b image.Image, o Options) Result {
	if sameContent(a, b, o) {
		return Result{Cmp: Equal, Rule: RuleContent, Detail: "same content"}
	}
	va, vb := o.VersionOf(a), o.VersionOf(b)
	if va.Kind == Conflicting || vb.Kind == Conflicting {
		return Result{Cmp: Unknown, Rule: RuleNone, Detail: conflict(a, va, b, vb)}
	}
	dates := byCreated(a, b, o)
	if va.Known() && vb.Known() {
		x, y := va.Version, vb.Version
		if o.AnyVariant && x.Precision() != y.Precision() {
			// any_variant waives prefix and suffix, not precision: a
			// floating 1.27 is any 1.27.x, not 1.27.0. Intervals that do
			// not overlap are ordered by version; others as across
			// variants.
			switch rel := version.Relate(x, y); rel {
			case version.Less:
				return Result{Rule: RuleVersion, Cmp: Older, Detail: fmt.Sprintf("version %s < %s", x.Original, y.Original)}
			case version.Greater:
				return Result{Rule: RuleVersion, Cmp: Newer, Detail: fmt.Sprintf("version %s > %s", x.Original, y.Original)}
			}
			return acrossVariants(x, y, dates)
		}
		if o.AnyVariant || version.SameVariant(x, y) {
			if c := version.Compare(x, y); c != 0 {
				res := Result{Rule: RuleVersion, Cmp: Older, Detail: fmt.Sprintf("version %s < %s", x.Original, y.Original)}
				if c > 0 {
					res.Cmp, res.Detail = Newer, fmt.Sprintf("version %s > %s", x.Original, y.Original)
				}
				return res
			}
			// Same version, different content: a rebuild. Dates may decide.
		} else {
			return acrossVariants(x, y, dates)
		}
	}
	if va.Known() != vb.Known() {
		// One side has a version, the other none: its build date cannot
		// be held against a version (a backport is built after the
		// release it is older than), so the order is not known.
		why := "only one of them has a version: "
		if local(a) || local(b) {
			why = "" // its tag and label are not weighed, as whyUnknown says
		}
		return Result{Cmp: Unknown, Rule: RuleNone, Detail: "no rule decides: " + why + whyUnknown(a, b, o)}
	}
	if dates.Cmp != Unknown {
		return dates
	}
	return Result{Cmp: Unknown, Rule: RuleNone, Detail: "no rule decides: " + whyUnknown(a, b, o)}
}

// acrossVariants weighs the versions of two variants against the build
// dates: the dates decide only where the versions do not contradict them.
func acrossVariants(x, y version.Version, dates Result) Result {
	rel := version.Relate(x, y)
	if dates.Cmp == Unknown {
		return Result{Cmp: Unknown, Rule: RuleNone, Detail: fmt.Sprintf("versions %s and %s are of different variants and no plausible build dates order them", x.Original, y.Original)}
	}
	switch {
	case rel == version.Overlap:
		dates.Detail += fmt.Sprintf(" (versions %s and %s do not order them)", x.Original, y.Original)
		return dates
	case rel.Below() && dates.Cmp == Older, rel.Above() && dates.Cmp == Newer:
		dates.Detail += fmt.Sprintf(", as versions %s %s %s", x.Original, rel, y.Original)
		return dates
	}
	return Result{Cmp: Unknown, Rule: RuleNone, Detail: fmt.Sprintf("the versions and the build dates disagree: version %s %s %s, but %s", x.Original, rel, y.Original, dates.Detail)}
}

// byCreated orders by plausible build dates; Unknown when either is missing
// or they are equal.
func byCreated(a, b image.Image, o Options) Result {
	ca, cb := o.Created(a), o.Created(b)
	if ca.IsZero() || cb.IsZero() || ca.Equal(cb) {
		return Result{Cmp: Unknown, Rule: RuleNone}
	}
	c, op := Older, "<"
	if ca.After(cb) {
		c, op = Newer, ">"
	}
	fa, fb := DatesApart(ca, cb)
	return Result{Cmp: c, Rule: RuleCreated, Detail: fmt.Sprintf("built %s %s %s", fa, op, fb)}
}

// DatesApart formats two different instants in RFC 3339, UTC, at the
// precision that tells them apart: whole seconds when those differ, else
// as many digits of the second as it takes, the same for both
// ("2026-09-17T00:00:00.8Z" and "2026-09-17T00:00:00.0Z"). Two builds
// 0.8 s apart are ordered by what the seconds alone do not show.
func DatesApart(a, b time.Time) (string, string) {
	a, b = a.UTC(), b.UTC()
	layout := time.RFC3339
	for digits := 0; digits <= 9 && a.Truncate(scale(digits)) == b.Truncate(scale(digits)); digits++ {
		layout = "2006-01-02T15:04:05." + strings.Repeat("0", digits+1) + "Z07:00"
	}
	return a.Format(layout), b.Format(layout)
}

// scale is the length of the last digit of a second written with digits
// digits: 1s, 100ms, 10ms, …
func scale(digits int) time.Duration {
	d := time.Second
	for range digits {
		d /= 10
	}
	return d
}

// conflict says which side's tag and label disagree.
func conflict(a image.Image, va Claim, b image.Image, vb Claim) string {
	switch {
	case va.Kind == Conflicting && vb.Kind == Conflicting:
		return fmt.Sprintf("%s has %s; %s has %s", a.Ref(), va, b.Ref(), vb)
	case va.Kind == Conflicting:
		return va.String()
	}
	return vb.String()
}

// sameContent reports whether a and b are the same image for the pull
// that would replace one with the other: the same manifest or index
// digest; the same config digest, of the same platform's build; a
// manifest and the entry an index gives a pull on that manifest's
// platform (the first matching entry, as engines pull: never "any
// entry", which a mixed index would fake); or a host's image ID (a config
// digest with Docker's classic store, a manifest or index digest with the
// containerd store) that is one of these.
func sameContent(a, b image.Image, o Options) bool {
	switch {
	case a.Digest != "" && a.Digest == b.Digest:
		return true
	case a.ConfigDigest != "" && a.ConfigDigest == b.ConfigDigest && sameBuild(a, b):
		return true
	}
	if d, ok := o.entryFor(b, a); ok && d == a.Digest && d != "" {
		return true
	}
	if d, ok := o.entryFor(a, b); ok && d == b.Digest && d != "" {
		return true
	}
	return hostID(a, b, o) || hostID(b, a, o)
}

// entryFor is the manifest digest a pull of index idx gets on the platform
// of other (its own, else the module's); ok is false when idx is not an
// index or has no entry for it.
func (o Options) entryFor(idx, other image.Image) (string, bool) {
	if len(idx.Platforms) == 0 && len(idx.Manifests) == 0 {
		return "", false
	}
	return idx.ManifestFor(o.platformOf(other))
}

func (o Options) platformOf(i image.Image) string {
	switch {
	case i.Platform != "":
		return i.Platform
	case o.Platform != "":
		return o.Platform
	}
	return "linux/amd64"
}

// sameBuild reports whether two images with one config digest are the
// build a pull would get: an index's config is that of the platform it
// was read for, which must be the other's.
func sameBuild(a, b image.Image) bool {
	index := func(i image.Image) bool { return len(i.Platforms) > 0 || len(i.Manifests) > 0 }
	if (index(a) || index(b)) && a.Platform != "" && b.Platform != "" {
		return image.MatchesPlatform(a.Platform, b.Platform) || image.MatchesPlatform(b.Platform, a.Platform)
	}
	return true
}

// hostID reports whether a's host image ID names b's content: b's digest,
// config or image ID, or the entry b's index gives a's platform.
func hostID(a, b image.Image, o Options) bool {
	if a.ImageID == "" {
		return false
	}
	if a.ImageID == b.Digest || a.ImageID == b.ImageID || (a.ImageID == b.ConfigDigest && sameBuild(a, b)) {
		return true
	}
	d, ok := o.entryFor(b, a)
	return ok && d == a.ImageID
}

// Created returns an image's plausible build date: the config's created,
// else the org.opencontainers.image.created label; zero when neither is
// plausible.
func (o Options) Created(i image.Image) time.Time {
	for _, t := range []time.Time{i.Created, i.CreatedLabel()} {
		if o.plausible(t) {
			return t.UTC()
		}
	}
	return time.Time{}
}

func (o Options) plausible(t time.Time) bool {
	if t.IsZero() || t.Before(earliestPlausible) {
		return false
	}
	return o.Now.IsZero() || !t.After(o.Now)
}

func whyUnknown(a, b image.Image, o Options) string {
	return fmt.Sprintf("%s is %s; %s is %s", a.Ref(), o.Known(a), b.Ref(), o.Known(b))
}
