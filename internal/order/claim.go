package order

import (
	"fmt"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

// ClaimKind says what an image's tag and version label claim its version
// is, and which of them say it.
type ClaimKind int

const (
	// NoVersion: neither the tag nor the label is a version under the
	// scheme.
	NoVersion ClaimKind = iota
	// FromTag: the tag is a version; the label is absent or no version.
	FromTag
	// FromLabel: the label is a version; the tag is absent or no version.
	FromLabel
	// FromBoth: tag and label are versions and agree.
	FromBoth
	// Conflicting: tag and label are versions and disagree; the image's
	// version is unknown and orders nothing.
	Conflicting
)

func (k ClaimKind) String() string {
	switch k {
	case FromTag:
		return "from the tag"
	case FromLabel:
		return "from the label"
	case FromBoth:
		return "from the tag and the label"
	case Conflicting:
		return "conflicting"
	}
	return "no version"
}

// Claim is what one image says its version is.
type Claim struct {
	Kind ClaimKind
	// Version is the image's version when Known: the tag's or the label's,
	// or when both agree the more precise of them (the tag's on equal
	// precision). Its variant (prefix, precision, suffix) is that
	// version's own. Zero when not Known.
	Version version.Version
	// Tag and Label are what each signal says, valid when HasTag and
	// HasLabel: the tag and the label parsed under the scheme.
	Tag, Label       version.Version
	HasTag, HasLabel bool
}

// Known reports whether the claim names a version the image can be ordered
// by: from the tag, the label or both, and not conflicting.
func (c Claim) Known() bool {
	return c.Kind == FromTag || c.Kind == FromLabel || c.Kind == FromBoth
}

// String says the claim in words: "version 1.22.6 (from the tag)",
// "version 1.27.9 (the tag 1.27 and the label 1.27.9 agree)",
// "conflicting versions: the tag says 1.30.0, the label says 1.22.6".
// Versions are written as the tag or label wrote them. NoVersion renders
// as "no version"; Options.Known names the scheme.
func (c Claim) String() string {
	switch c.Kind {
	case FromTag, FromLabel:
		return fmt.Sprintf("version %s (%s)", c.Version.Original, c.Kind)
	case FromBoth:
		return fmt.Sprintf("version %s (the tag %s and the label %s agree)", c.Version.Original, c.Tag.Original, c.Label.Original)
	case Conflicting:
		return fmt.Sprintf("conflicting versions: the tag says %s, the label says %s", c.Tag.Original, c.Label.Original)
	}
	return "no version"
}

// VersionOf reads an image's tag and its org.opencontainers.image.version
// label under the scheme and weighs the two claims: they agree when
// version.Agree says so (cores equal over the shorter precision, equal
// pre-release markers; prefix and suffix not compared), and then the more
// precise is the image's version. A tag or label that is no version under
// the scheme ("latest", a commit hash) is no claim.
func (o Options) VersionOf(i image.Image) Claim {
	var c Claim
	if i.Tag != "" {
		c.Tag, c.HasTag = o.Scheme.Parse(i.Tag)
	}
	if l := i.VersionLabel(); l != "" {
		c.Label, c.HasLabel = o.Scheme.Parse(l)
	}
	switch {
	case c.HasTag && c.HasLabel:
		if !version.Agree(c.Tag, c.Label) {
			c.Kind = Conflicting
			return c
		}
		c.Kind, c.Version = FromBoth, c.Tag
		if c.Label.Precision() > c.Tag.Precision() {
			c.Version = c.Label
		}
	case c.HasTag:
		c.Kind, c.Version = FromTag, c.Tag
	case c.HasLabel:
		c.Kind, c.Version = FromLabel, c.Label
	}
	return c
}

// Known says in words what ordering could use of an image: its version
// claim and its build date, or that they are missing or implausible.
func (o Options) Known(i image.Image) string {
	if local(i) {
		return fmt.Sprintf("built, committed or loaded on its host: it has no registry digest (image ID %s), so its tag and label are claims pin cannot check, and only the same content as what runs orders it", image.Short(i.ImageID))
	}
	var parts []string
	if c := o.VersionOf(i); c.Kind != NoVersion {
		parts = append(parts, c.String())
	} else {
		parts = append(parts, fmt.Sprintf("no %s version in its tag or label", o.Scheme))
	}
	if c := o.Created(i); !c.IsZero() {
		parts = append(parts, "built "+c.UTC().Format(time.RFC3339Nano)) // a fraction of a second only when there is one
	} else if !i.Created.IsZero() {
		parts = append(parts, "build date "+i.Created.UTC().Format(time.RFC3339)+" (not plausible: treated as unknown)")
	} else {
		parts = append(parts, "no build date")
	}
	return strings.Join(parts, ", ")
}

// local reports whether i is an image a host holds by no registry digest,
// judged by its image ID alone: its tag, label and build date are not
// weighed (see enforce.JudgeImage).
func local(i image.Image) bool {
	return i.Digest == "" && i.ImageID != "" && i.Tag == "" && i.Labels == nil && i.Created.IsZero()
}
