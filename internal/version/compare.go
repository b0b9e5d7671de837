package version

import "strings"

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
