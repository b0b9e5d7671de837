package order

import (
	"fmt"
	"slices"
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
}

// earliestPlausible is the first build date taken as real. Reproducible
// builds stamp 1970-01-01 or 0001-01-01; no container image predates 1990.
var earliestPlausible = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)

// Compare orders a relative to b.
func Compare(a, b image.Image, o Options) Result {
	if sameContent(a, b) {
		return Result{Cmp: Equal, Rule: RuleContent, Detail: "same content"}
	}
	if r, ok := byVersion(a, b, o); ok {
		return r
	}
	ca, cb := o.Created(a), o.Created(b)
	if !ca.IsZero() && !cb.IsZero() && !ca.Equal(cb) {
		c := Older
		op := "<"
		if ca.After(cb) {
			c, op = Newer, ">"
		}
		return Result{Cmp: c, Rule: RuleCreated, Detail: fmt.Sprintf("built %s %s %s", ca.Format(time.RFC3339), op, cb.Format(time.RFC3339))}
	}
	return Result{Cmp: Unknown, Rule: RuleNone, Detail: "no rule decides: " + whyUnknown(a, b, o)}
}

func sameContent(a, b image.Image) bool {
	switch {
	case a.Digest != "" && a.Digest == b.Digest,
		a.ConfigDigest != "" && a.ConfigDigest == b.ConfigDigest:
		return true
	}
	for _, d := range b.Platforms {
		if d == a.Digest && d != "" {
			return true
		}
	}
	for _, d := range a.Platforms {
		if d == b.Digest && d != "" {
			return true
		}
	}
	// A host image ID is a config digest (classic store) or a manifest or
	// index digest (containerd store): match it against all of the other's.
	if a.ImageID != "" && slices.Contains(b.Identities(), a.ImageID) {
		return true
	}
	if b.ImageID != "" && slices.Contains(a.Identities(), b.ImageID) {
		return true
	}
	return false
}

// Version returns the version of an image under the scheme and whether it
// came from the tag (true) or the version label (false).
func (o Options) Version(i image.Image) (v version.Version, fromTag, ok bool) {
	if i.Tag != "" {
		if v, ok := o.Scheme.Parse(i.Tag); ok {
			return v, true, true
		}
	}
	if l := i.VersionLabel(); l != "" {
		if v, ok := o.Scheme.Parse(l); ok {
			return v, false, true
		}
	}
	return version.Version{}, false, false
}

// labelVersion is the version read from the label alone.
func (o Options) labelVersion(i image.Image) (version.Version, bool) {
	if l := i.VersionLabel(); l != "" {
		return o.Scheme.Parse(l)
	}
	return version.Version{}, false
}

func byVersion(a, b image.Image, o Options) (Result, bool) {
	va, ta, oka := o.Version(a)
	vb, tb, okb := o.Version(b)
	if !oka || !okb {
		return Result{}, false
	}
	if ta && tb && !o.AnyVariant && va.Variant() != vb.Variant() {
		// Tags of different variants do not compare; the labels may.
		la, okla := o.labelVersion(a)
		lb, oklb := o.labelVersion(b)
		if !okla || !oklb {
			return Result{}, false
		}
		va, vb = la, lb
	}
	c := version.Compare(va, vb)
	if c == 0 {
		// Same version, different content: a rebuild. Dates may decide.
		return Result{}, false
	}
	res := Result{Rule: RuleVersion, Cmp: Older, Detail: fmt.Sprintf("version %s < %s", va.Original, vb.Original)}
	if c > 0 {
		res.Cmp, res.Detail = Newer, fmt.Sprintf("version %s > %s", va.Original, vb.Original)
	}
	return res, true
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

// Known says in words what ordering could use of an image: its version and
// build date, or that they are missing or implausible.
func (o Options) Known(i image.Image) string {
	var parts []string
	if v, fromTag, ok := o.Version(i); ok {
		src := "label"
		if fromTag {
			src = "tag"
		}
		parts = append(parts, fmt.Sprintf("version %s (from the %s, variant %s)", v.Original, src, v.Variant()))
	} else {
		parts = append(parts, fmt.Sprintf("no %s version in its tag or label", o.Scheme))
	}
	if c := o.Created(i); !c.IsZero() {
		parts = append(parts, "built "+c.Format(time.RFC3339))
	} else if !i.Created.IsZero() {
		parts = append(parts, "build date "+i.Created.UTC().Format(time.RFC3339)+" (not plausible: treated as unknown)")
	} else {
		parts = append(parts, "no build date")
	}
	return strings.Join(parts, ", ")
}
