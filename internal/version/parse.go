package version

import (
	"regexp"
	"strconv"
	"strings"
)

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
			if prefix, core, rest, ok = matchOnePart(text); !ok {
				return Version{}, false
			}
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

// maxOnePart is how many digits a one-part version may have under the
// default scheme: "16", "20", "7", "2026"; longer bare numbers are dates
// and build stamps (20200101, 1694132169), not versions under it.
const maxOnePart = 4

// matchOnePart is a one-part version of the default scheme: an optional
// v or V, 1 to maxOnePart digits, then nothing, or a rest that starts
// with "-", "_" or "+" ("16-alpine", "7-rc.1", "20+build"). A rest glued
// to the number ("8f3c2d1", a commit hash) is not read as a variant.
func matchOnePart(s string) (prefix, core, rest string, ok bool) {
	start := 0
	if s != "" && (s[0] == 'v' || s[0] == 'V') {
		start = 1
	}
	end := start
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == start || end-start > maxOnePart || strings.IndexByte(s[end:], '\n') >= 0 {
		return "", "", "", false
	}
	if end < len(s) && s[end] != '-' && s[end] != '_' && s[end] != '+' {
		return "", "", "", false
	}
	return s[:start], s[start:end], s[end:], true
}
