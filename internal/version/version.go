package version

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Kind names a versioning scheme.
type Kind string

const (
	SemVer  Kind = "semver"
	CalVer  Kind = "calver"
	Numeric Kind = "numeric"
	Regex   Kind = "regex"
)

// Scheme is a parsed versioning scheme. The zero value is SemVer.
type Scheme struct {
	Kind Kind
	re   *regexp.Regexp
	src  string
}

// ParseScheme parses "semver", "calver", "numeric" or "regex:<expr>". An
// empty string is "semver".
func ParseScheme(s string) (Scheme, error) {
	switch {
	case s == "" || s == string(SemVer):
		return Scheme{Kind: SemVer}, nil
	case s == string(CalVer):
		return Scheme{Kind: CalVer}, nil
	case s == string(Numeric):
		return Scheme{Kind: Numeric}, nil
	case strings.HasPrefix(s, "regex:"):
		expr := strings.TrimPrefix(s, "regex:")
		re, err := regexp.Compile(expr)
		if err != nil {
			return Scheme{}, fmt.Errorf("invalid regular expression: %w", err)
		}
		if re.SubexpIndex("version") < 0 {
			return Scheme{}, fmt.Errorf("regular expression %q has no named group (?P<version>…)", expr)
		}
		return Scheme{Kind: Regex, re: re, src: s}, nil
	}
	return Scheme{}, fmt.Errorf("unknown versioning scheme %q", s)
}

// String returns the scheme as written in a catalogue.
func (s Scheme) String() string {
	if s.Kind == Regex {
		return s.src
	}
	if s.Kind == "" {
		return string(SemVer)
	}
	return string(s.Kind)
}

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

var (
	// Calendar versions: a year first (dotted) or a compact date.
	calverDotRe = regexp.MustCompile(`^([vV]?)((?:\d{4}|\d{2})(?:\.\d{1,2}){1,2}(?:\.\d+)?)(.*)$`)
	// YYYYMM, YYYYMMDD, YYYYMMDDhhmm, YYYYMMDDhhmmss.
	calverCompactRe = regexp.MustCompile(`^([vV]?)(\d{4})(\d{2})(?:(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?)?((?:[-_.+].*)?)$`)
	numericRe       = regexp.MustCompile(`^(\D*?)(\d+)((?:[-_+].*)?)$`)
	// A pre-release marker, alone in a dash-separated segment.
	preSegRe = regexp.MustCompile(`(?i)^(alpha|beta|rc|pre|preview|dev|nightly|snapshot|canary|a|b|c)(?:[._]?\d+)*$`)
	// A marker attached to the core with no dash (3.7.0b1, 1.0rc2, 2.0.dev3).
	preAttachedRe = regexp.MustCompile(`(?i)^\.?((?:alpha|beta|rc|pre|preview|dev|nightly|snapshot|canary|a|b|c)(?:[._]?\d+)*)`)
	// The version group of a regex scheme: 1 or more numeric parts, the rest.
	regexCoreRe = regexp.MustCompile(`^(\d+(?:\.\d+)*)(.*)$`)
)

// Parse reads a version from a tag (or label value) under the scheme. ok is
// false when the text is not a version under it ("latest", "stable").
func (s Scheme) Parse(text string) (v Version, ok bool) {
	switch s.Kind {
	case "", SemVer:
		prefix, core, rest, ok := matchSemver(text)
		if !ok {
			return Version{}, false
		}
		return build(text, prefix, core, rest)
	case CalVer:
		if m := calverCompactRe.FindStringSubmatch(text); m != nil {
			core := m[2] + "." + m[3]
			for _, f := range m[4:8] {
				if f != "" {
					core += "." + f
				}
			}
			v, ok := build(text, m[1], core, m[8])
			return v, ok && plausibleCalendar(v.Parts) && plausibleClock(v.Parts)
		}
		m := calverDotRe.FindStringSubmatch(text)
		if m == nil {
			return Version{}, false
		}
		v, ok := build(text, m[1], m[2], m[3])
		return v, ok && plausibleCalendar(v.Parts)
	case Numeric:
		m := numericRe.FindStringSubmatch(text)
		if m == nil {
			return Version{}, false
		}
		return build(text, m[1], m[2], m[3])
	case Regex:
		idx := s.re.FindStringSubmatchIndex(text)
		gi := s.re.SubexpIndex("version")
		if idx == nil || idx[2*gi] < 0 {
			return Version{}, false
		}
		start, end := idx[2*gi], idx[2*gi+1]
		inner := text[start:end]
		m := regexCoreRe.FindStringSubmatch(inner)
		if m == nil {
			return Version{}, false
		}
		v, ok := build(inner, "", m[1], m[2])
		if !ok {
			return Version{}, false
		}
		// The variant is everything around the version group.
		v.Original = text
		v.Prefix = text[:start]
		v.Suffix = v.Suffix + text[end:]
		return v, true
	}
	return Version{}, false
}

// plausibleCalendar keeps calendar versions to real months and days, so that
// "1.2.3" is not read as a date.
func plausibleCalendar(p []string) bool {
	if len(p) < 2 {
		return false
	}
	y := small(p[0])
	if !(y >= 1970 && y <= 9999) && !(y >= 10 && y <= 99) {
		return false
	}
	if m := small(p[1]); m < 1 || m > 12 {
		return false
	}
	return len(p) < 3 || (small(p[2]) >= 1 && small(p[2]) <= 31)
}

// plausibleClock keeps the time of a compact date (YYYYMMDDhhmm[ss]) to a
// real hour, minute and second.
func plausibleClock(p []string) bool {
	limits := []int{23, 59, 59}
	for i := 3; i < len(p); i++ {
		if n := small(p[i]); n < 0 || n > limits[i-3] {
			return false
		}
	}
	return true
}

// small is a part as an int, or -1 when it has more than 9 digits.
func small(part string) int {
	part = trimZeros(part)
	if len(part) > 9 {
		return -1
	}
	n, _ := strconv.Atoi(part)
	return n
}

// build splits what follows the core into build metadata (ignored),
// pre-release markers and the variant suffix.
func build(orig, prefix, core, rest string) (Version, bool) {
	v := Version{Original: orig, Prefix: prefix, Parts: strings.Split(core, ".")}
	for i, f := range v.Parts {
		if !allDigits(f) {
			return Version{}, false
		}
		v.Parts[i] = trimZeros(f)
	}
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		rest = rest[:i]
	}
	if rest == "" {
		return v, true
	}
	if mayBeAttached(rest) {
		if m := preAttachedRe.FindStringSubmatch(rest); m != nil && (len(m[0]) == len(rest) || rest[len(m[0])] == '-') {
			v.Pre = m[1]
			rest = rest[len(m[0]):]
		}
	}
	if rest == "" {
		return v, true
	}
	if len(rest) > 1 && rest[0] == '.' && isDigit(rune(rest[1])) {
		// More numeric parts than the scheme allows: not a version.
		return Version{}, false
	}
	if rest[0] != '-' && rest[0] != '_' && rest[0] != '.' {
		// "1.2.3alpine": anything glued on that is not a marker is a variant.
		v.Suffix = rest
		return v, true
	}
	sep := rest[:1]
	segs := strings.Split(rest[1:], sep)
	var pre []string
	i := 0
	for ; i < len(segs) && preSegRe.MatchString(segs[i]) && !isLoneLetter(segs[i]); i++ {
		pre = append(pre, segs[i])
	}
	if len(pre) > 0 {
		if v.Pre != "" {
			pre = append([]string{v.Pre}, pre...)
		}
		v.Pre = strings.Join(pre, ".")
	}
	if i < len(segs) {
		v.Suffix = sep + strings.Join(segs[i:], sep)
	}
	return v, true
}

// isLoneLetter keeps "-a", "-b" and "-c" (without a number) as variants.
func isLoneLetter(s string) bool { return len(s) == 1 }

// Compare orders two versions: -1 when a < b, 0 when equal, +1 when a > b.
// Numeric parts are compared first, as numbers of any length (missing parts
// count as zero), then a
// release is newer than any of its pre-releases, then pre-releases are
// ordered by marker (dev, nightly, snapshot, canary < alpha < beta < pre,
// preview < rc) and number. The variant is not compared: callers check it.
func Compare(a, b Version) int {
	n := max(len(a.Parts), len(b.Parts))
	for i := range n {
		if c := cmpDigits(part(a.Parts, i), part(b.Parts, i)); c != 0 {
			return c
		}
	}
	switch {
	case a.Pre == "" && b.Pre == "":
		return 0
	case a.Pre == "":
		return 1
	case b.Pre == "":
		return -1
	}
	return comparePre(preIdents(a.Pre), preIdents(b.Pre))
}

func part(p []string, i int) string {
	if i < len(p) {
		return p[i]
	}
	return "0"
}

// trimZeros strips leading zeros from a digit string, leaving "0" for zero.
func trimZeros(d string) string {
	i := 0
	for i < len(d)-1 && d[i] == '0' {
		i++
	}
	return d[i:]
}

// cmpDigits compares two decimal digit strings as numbers of any length:
// without leading zeros, the longer is larger; of equal length, the first
// differing digit decides.
func cmpDigits(x, y string) int {
	x, y = trimZeros(x), trimZeros(y)
	if c := cmpInt(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(x, y)
}

func cmpInt(x, y int) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// preIdents splits "rc.1", "b1" or "dev_3" into identifiers: letters and
// numbers apart.
func preIdents(pre string) []string {
	var out []string
	cur := ""
	flush := func() {
		if cur != "" {
			out = append(out, cur)
			cur = ""
		}
	}
	for _, r := range strings.ToLower(pre) {
		switch {
		case r == '.' || r == '_' || r == '-':
			flush()
		case cur != "" && isDigit(r) != isDigit(rune(cur[len(cur)-1])):
			flush()
			cur = string(r)
		default:
			cur += string(r)
		}
	}
	flush()
	return out
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// The regular expressions' engine was most of the CPU of ranking a
// repository's tags (Parse was 13% of a warm 1,100-module
// resolve). The two matches every version takes are written out below;
// FuzzMatchSemver and FuzzAllDigits hold them to semverRe and digitsRe.

// allDigits is digitsRe.MatchString: s is one or more ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// mayBeAttached is false when preAttachedRe cannot match s: after an
// optional dot, every marker starts with one of a, b, c, d, n, p, r, s
// (in either case, and a non-ASCII letter may fold to one: "ſ" is an s).
// Most rests ("-alpine", "-rc.1") are ruled out without the regexp;
// FuzzMayBeAttached holds it to the regexp.
func mayBeAttached(s string) bool {
	if s != "" && s[0] == '.' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	if s[0] >= 0x80 {
		return true
	}
	switch s[0] | 0x20 { // ASCII lower case
	case 'a', 'b', 'c', 'd', 'n', 'p', 'r', 's':
		return true
	}
	return false
}

// matchSemver is semverRe's match: an optional v or V, then 2 to 4
// numeric parts (as many as there are, up to 4), then the rest, which
// holds no newline (the regexp's "." does not match one).
func matchSemver(s string) (prefix, core, rest string, ok bool) {
	digitsFrom := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	start := 0
	if s != "" && (s[0] == 'v' || s[0] == 'V') {
		start = 1
	}
	end := digitsFrom(start)
	if end == start {
		return "", "", "", false
	}
	parts := 1
	for parts < 4 && end < len(s) && s[end] == '.' {
		next := digitsFrom(end + 1)
		if next == end+1 {
			break
		}
		end = next
		parts++
	}
	if parts < 2 || strings.IndexByte(s[end:], '\n') >= 0 {
		return "", "", "", false
	}
	return s[:start], s[start:end], s[end:], true
}

var markerRank = map[string]int{
	"dev": 0, "nightly": 0, "snapshot": 0, "canary": 0,
	"a": 1, "alpha": 1,
	"b": 2, "beta": 2,
	"pre": 3, "preview": 3,
	"c": 4, "rc": 4,
}

func comparePre(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		xn, yn := allDigits(x), allDigits(y)
		switch {
		case xn && yn:
			if c := cmpDigits(x, y); c != 0 {
				return c
			}
		case xn != yn:
			// Numbers sort before words, as in semver.
			if xn {
				return -1
			}
			return 1
		default:
			rx, okx := markerRank[x]
			ry, oky := markerRank[y]
			if okx && oky && rx != ry {
				return cmpInt(rx, ry)
			}
			if c := strings.Compare(x, y); c != 0 && !(okx && oky && rx == ry) {
				return c
			}
		}
	}
	return cmpInt(len(a), len(b))
}
