package version

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Version is a version read from a tag or a label.
type Version struct {
	// Original is the text it was read from, unchanged.
	Original string
	// Prefix and Suffix are the variant around the version ("v", "-alpine").
	Prefix, Suffix string
	// Parts are the numeric parts of the version core, as decimal digit
	// strings of any length without leading zeros ("0" for zero): a Unix
	// timestamp or a 14-digit date is one part, and no part overflows.
	Parts []string
	// Pre is the pre-release marker ("rc.1", "b1"); empty for a release.
	Pre string
}

// Variant identifies the family of tags this version can be compared with:
// prefix, precision and suffix. It is a key for grouping ("v{3}-alpine"),
// not words for people: say the version's Original instead.
func (v Version) Variant() string {
	return fmt.Sprintf("%s{%d}%s", v.Prefix, len(v.Parts), v.Suffix)
}

// Precision is the number of numeric parts of the core: 2 for "1.27", 3 for
// "1.27.3", 1 for a numeric version.
func (v Version) Precision() int { return len(v.Parts) }

// SameVariant reports whether a and b are of one variant: the same prefix,
// precision and suffix.
func SameVariant(a, b Version) bool {
	return a.Prefix == b.Prefix && len(a.Parts) == len(b.Parts) && a.Suffix == b.Suffix
}

// Prerelease reports whether the version carries a pre-release marker.
func (v Version) Prerelease() bool { return v.Pre != "" }

// Core renders the numeric core, "1.27.3".
func (v Version) Core() string {
	s := make([]string, len(v.Parts))
	for i, p := range v.Parts {
		s[i] = trimZeros(p)
	}
	return strings.Join(s, ".")
}

// String renders core and pre-release, without the variant: "1.3.0-rc.1".
func (v Version) String() string {
	if v.Pre != "" {
		return v.Core() + "-" + v.Pre
	}
	return v.Core()
}

// SemVerOK returns the version core (first three parts, missing ones zero)
// with its pre-release as a Masterminds semver value, for checking
// constraints. ok is false when one of those parts exceeds the largest
// uint64 (18446744073709551615), which Masterminds cannot hold: such a
// version satisfies no constraint, so a caller must treat it as failing.
// A fourth part is left out, as semver has none.
func (v Version) SemVerOK() (sv *semver.Version, ok bool) {
	var p [3]uint64
	ok = true
	for i := 0; i < 3 && i < len(v.Parts); i++ {
		n, err := strconv.ParseUint(trimZeros(v.Parts[i]), 10, 64)
		if err != nil {
			n, ok = math.MaxUint64, false
		}
		p[i] = n
	}
	return semver.New(p[0], p[1], p[2], semverPre(v.Pre), ""), ok
}

// SemVer is SemVerOK without ok: a part beyond uint64 is clamped to the
// largest uint64. The clamp keeps "greater than" constraints right but can
// pass a constraint that names that very number; use SemVerOK where a
// version outside uint64 must fail.
func (v Version) SemVer() *semver.Version {
	sv, _ := v.SemVerOK()
	return sv
}

// semverPre turns a pre-release marker into a valid semver pre-release
// ("b1" → "b1", "rc.1" → "rc.1", "dev_3" → "dev.3").
func semverPre(pre string) string {
	if pre == "" {
		return ""
	}
	return strings.Join(preIdents(pre), ".")
}
