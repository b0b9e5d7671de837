package version

import (
	"regexp"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		scheme, tag string
		ok          bool
		variant     string
		version     string
	}{
		{"semver", "1.27.3", true, "{3}", "1.27.3"},
		{"semver", "v1.2", true, "v{2}", "1.2"},
		{"semver", "1.2.3.4", true, "{4}", "1.2.3.4"},
		{"semver", "1.27", true, "{2}", "1.27"},
		{"semver", "1.27.3-alpine", true, "{3}-alpine", "1.27.3"},
		{"semver", "1.27.3-rootless", true, "{3}-rootless", "1.27.3"},
		{"semver", "1.3.0-rc.1", true, "{3}", "1.3.0-rc.1"},
		{"semver", "1.3.0-rc1-alpine", true, "{3}-alpine", "1.3.0-rc1"},
		{"semver", "3.7.0b1", true, "{3}", "3.7.0-b1"},
		{"semver", "2.0.dev3", true, "{2}", "2.0-dev3"},
		{"semver", "1.2.3+build.5", true, "{3}", "1.2.3"},
		{"semver", "1.2.3-a", true, "{3}-a", "1.2.3"},
		{"semver", "1.2.3-alpine3.19", true, "{3}-alpine3.19", "1.2.3"},
		{"semver", "latest", false, "", ""},
		{"semver", "7", true, "{1}", "7"},
		{"semver", "16-alpine", true, "{1}-alpine", "16"},
		{"semver", "v20", true, "v{1}", "20"},
		{"semver", "7-rc.1", true, "{1}", "7-rc.1"},
		{"semver", "20200101", false, "", ""},   // a date
		{"semver", "1694132169", false, "", ""}, // a build stamp
		{"semver", "8f3c2d1", false, "", ""},    // a commit
		{"semver", "16.", false, "", ""},
		{"semver", "1.2.3.4.5", false, "", ""},
		{"calver", "2026.08.20", true, "{3}", "2026.8.20"},
		{"calver", "20260820", true, "{3}", "2026.8.20"},
		{"calver", "24.04", true, "{2}", "24.4"},
		{"calver", "2026.13.01", false, "", ""},
		{"calver", "latest", false, "", ""},
		{"numeric", "1234", true, "{1}", "1234"},
		{"numeric", "build-17", true, "build-{1}", "17"},
		{"numeric", "r17-slim", true, "r{1}-slim", "17"},
		{"regex:^release-(?P<version>[0-9.]+)-(linux)$", "release-1.4.2-linux", true, "release-{3}-linux", "1.4.2"},
		{"regex:^release-(?P<version>[0-9.]+)$", "nightly", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.scheme+"/"+tt.tag, func(t *testing.T) {
			s, err := ParseScheme(tt.scheme)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := s.Parse(tt.tag)
			if ok != tt.ok {
				t.Fatalf("Parse(%q) ok = %v, want %v", tt.tag, ok, tt.ok)
			}
			if !ok {
				return
			}
			if got := v.Variant(); got != tt.variant {
				t.Errorf("variant = %q, want %q", got, tt.variant)
			}
			if got := v.String(); got != tt.version {
				t.Errorf("version = %q, want %q", got, tt.version)
			}
			if v.Original != tt.tag {
				t.Errorf("original = %q, want the tag unchanged", v.Original)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	// Each list is strictly ascending.
	ladders := [][]string{
		{"1.22.6", "1.23.0", "1.27.3", "1.27.10", "2.0.0"},
		{"1.3.0-dev1", "1.3.0-alpha.1", "1.3.0-alpha.2", "1.3.0-beta", "1.3.0-rc.1", "1.3.0-rc.2", "1.3.0"},
		{"3.7.0a1", "3.7.0b1", "3.7.0b2", "3.7.0rc1", "3.7.0"},
		{"1.2", "1.2.1", "1.2.1.1", "1.3"},
	}
	s := Scheme{}
	for _, l := range ladders {
		for i := range l {
			for j := range l {
				a, _ := s.Parse(l[i])
				b, _ := s.Parse(l[j])
				want := cmpInt(i, j)
				if got := Compare(a, b); got != want {
					t.Errorf("Compare(%s, %s) = %d, want %d", l[i], l[j], got, want)
				}
			}
		}
	}
}

func TestParseScheme(t *testing.T) {
	for _, bad := range []string{"semvar", "regex:(", "regex:^v[0-9]+$"} {
		if _, err := ParseScheme(bad); err == nil {
			t.Errorf("ParseScheme(%q) succeeded, want an error", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1.2.3", "v1.2-rc.1-alpine", "3.7.0b1", "20260820", "latest", "1.2.3+x", "1..2", "v-"} {
		f.Add(s)
	}
	schemes := []Scheme{{Kind: SemVer}, {Kind: CalVer}, {Kind: Numeric}}
	re, _ := ParseScheme("regex:^(?P<version>[0-9.]+)(-.*)?$")
	schemes = append(schemes, re)
	f.Fuzz(func(t *testing.T, tag string) {
		for _, s := range schemes {
			v, ok := s.Parse(tag)
			if !ok {
				continue
			}
			if len(v.Parts) == 0 {
				t.Fatalf("%s: %q parsed with no parts", s, tag)
			}
			// A version equals itself and ordering is antisymmetric.
			if Compare(v, v) != 0 {
				t.Fatalf("%s: %q does not equal itself", s, tag)
			}
			w, _ := s.Parse("1.0.0")
			if len(w.Parts) > 0 && Compare(v, w) != -Compare(w, v) {
				t.Fatalf("%s: Compare not antisymmetric for %q", s, tag)
			}
			_ = v.SemVer()
			if v.Precision() != len(v.Parts) {
				t.Fatalf("%s: %q precision %d, %d parts", s, tag, v.Precision(), len(v.Parts))
			}
			// Agree is symmetric and Relate antisymmetric, against versions
			// of other precisions and markers.
			for _, o := range []string{"1.0", "1.0.0", "1.0.0-rc.1", "0.9.9.9"} {
				u, _ := (Scheme{}).Parse(o)
				if Agree(v, u) != Agree(u, v) {
					t.Fatalf("Agree(%q, %q) not symmetric", tag, o)
				}
				if Relate(v, u) != mirror(Relate(u, v)) {
					t.Fatalf("Relate(%q, %q) = %v but Relate(%q, %q) = %v", tag, o, Relate(v, u), o, tag, Relate(u, v))
				}
			}
		}
	})
}

// TestLongNumbers: numeric parts of any length parse and compare without
// overflow (Unix timestamps, 14-digit dates, numbers beyond uint64).
func TestLongNumbers(t *testing.T) {
	numeric, _ := ParseScheme("numeric")
	calver, _ := ParseScheme("calver")
	tests := []struct {
		s       Scheme
		tag     string
		version string
		prec    int
	}{
		{numeric, "1733222400", "1733222400", 1},
		{numeric, "20261203091500", "20261203091500", 1},
		{numeric, "build-123456789012345678901234567890", "123456789012345678901234567890", 1},
		{numeric, "0042", "42", 1},
		{Scheme{}, "1.12345678901.0", "1.12345678901.0", 3},
		{calver, "20261203", "2026.12.3", 3},
		{calver, "202612030915", "2026.12.3.9.15", 5},
		{calver, "20261203091500", "2026.12.3.9.15.0", 6},
		{calver, "v20261203091500-slim", "2026.12.3.9.15.0", 6},
	}
	for _, tt := range tests {
		v, ok := tt.s.Parse(tt.tag)
		if !ok {
			t.Errorf("%s: Parse(%q) failed", tt.s, tt.tag)
			continue
		}
		if v.String() != tt.version || v.Precision() != tt.prec {
			t.Errorf("%s: Parse(%q) = %s with precision %d, want %s with %d", tt.s, tt.tag, v, v.Precision(), tt.version, tt.prec)
		}
	}
	for _, bad := range []string{"20261203250000", "20261203096000", "202612031", "2026120309"} {
		if v, ok := calver.Parse(bad); ok {
			t.Errorf("calver: Parse(%q) = %s, want no version", bad, v)
		}
	}
	// Each ladder is strictly ascending.
	ladders := []struct {
		s    Scheme
		tags []string
	}{
		{numeric, []string{"9", "10", "999999999", "1000000000", "1733222400", "1733308800", "9223372036854775807", "9223372036854775808", "18446744073709551616", "20261203091500000000000"}},
		{calver, []string{"20261202", "20261203"}},
		{calver, []string{"202612030915", "202612031200"}},
		{calver, []string{"20261203091500", "20261203091501", "20261203100000", "20261204000000"}},
		{Scheme{}, []string{"1.2.3-rc.9", "1.2.3-rc.10", "1.2.3-rc.99999999999999999999", "1.2.3-rc.100000000000000000000", "1.2.3"}},
	}
	for _, l := range ladders {
		for i := range l.tags {
			for j := range l.tags {
				a, oka := l.s.Parse(l.tags[i])
				b, okb := l.s.Parse(l.tags[j])
				if !oka || !okb {
					t.Fatalf("%s: %q or %q does not parse", l.s, l.tags[i], l.tags[j])
				}
				if got, want := Compare(a, b), cmpInt(i, j); got != want {
					t.Errorf("%s: Compare(%s, %s) = %d, want %d", l.s, l.tags[i], l.tags[j], got, want)
				}
			}
		}
	}
	// Leading zeros do not count.
	a, _ := numeric.Parse("007")
	b, _ := numeric.Parse("7")
	if Compare(a, b) != 0 {
		t.Errorf("Compare(007, 7) = %d, want 0", Compare(a, b))
	}
}

// TestSemVerOverflow: a part beyond uint64 has no Masterminds form.
func TestSemVerOverflow(t *testing.T) {
	numeric, _ := ParseScheme("numeric")
	v, _ := numeric.Parse("1733222400")
	if sv, ok := v.SemVerOK(); !ok || sv.Major() != 1733222400 {
		t.Errorf("SemVerOK(1733222400) = %v, %v", sv, ok)
	}
	v, _ = numeric.Parse("18446744073709551615")
	if sv, ok := v.SemVerOK(); !ok || sv.Major() != 18446744073709551615 {
		t.Errorf("SemVerOK(max uint64) = %v, %v", sv, ok)
	}
	v, _ = numeric.Parse("18446744073709551616")
	if sv, ok := v.SemVerOK(); ok {
		t.Errorf("SemVerOK(max uint64 + 1) = %v, want not ok", sv)
	}
	if sv := v.SemVer(); sv.Major() != 18446744073709551615 {
		t.Errorf("SemVer(max uint64 + 1) = %v, want the clamp to max uint64", sv)
	}
	v, _ = (Scheme{}).Parse("1.2.99999999999999999999999-rc.1")
	if _, ok := v.SemVerOK(); ok {
		t.Errorf("SemVerOK(%s) ok, want not ok", v)
	}
	if sv := v.SemVer(); sv.Major() != 1 || sv.Minor() != 2 || sv.Patch() != 18446744073709551615 || sv.Prerelease() != "rc.1" {
		t.Errorf("SemVer(%s) = %v", v, sv)
	}
}

// The oracles of the matches written out in version.go: tolerant semver
// (an optional v, 2 to 4 numeric parts, the rest) and a run of digits.
var (
	semverRe = regexp.MustCompile(`^([vV]?)(\d+(?:\.\d+){1,3})(.*)$`)
	digitsRe = regexp.MustCompile(`^\d+$`)
)

func FuzzMatchSemver(f *testing.F) {
	for _, s := range []string{"1.2.3", "v1.2-rc.1-alpine", "V1.2", "vv1.2", "v", "1", "1.", "1.2.3.4.5", "1.2.3.4", "12.x", "1.2\n", "1.2-a\nb",
		"01.002.3", ".1.2", "1..2", "v1.2.3+meta", "1.2.3\xff", "\n1.2", "1.2.3.", "१.२"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prefix, core, rest, ok := matchSemver(s)
		m := semverRe.FindStringSubmatch(s)
		if ok != (m != nil) {
			t.Fatalf("%q: matchSemver says %v, the regexp %v", s, ok, m != nil)
		}
		if ok && (prefix != m[1] || core != m[2] || rest != m[3]) {
			t.Fatalf("%q: matchSemver (%q, %q, %q), the regexp (%q, %q, %q)", s, prefix, core, rest, m[1], m[2], m[3])
		}
	})
}

func FuzzAllDigits(f *testing.F) {
	for _, s := range []string{"", "0", "123", "12a", "a12", "1\n", "١٢", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := allDigits(s), digitsRe.MatchString(s); got != want {
			t.Fatalf("%q: allDigits %v, the regexp %v", s, got, want)
		}
	})
}

func FuzzMayBeAttached(f *testing.F) {
	for _, s := range []string{"", ".", "b1", "B1", ".rc2", "-rc.1", "-alpine", "alpine", "dev3", "Nightly", "snapshot", "x", ".x", "..b", "\u212aa", "ſnapshot"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if preAttachedRe.MatchString(s) && !mayBeAttached(s) {
			t.Fatalf("%q: the regexp matches, mayBeAttached rules it out", s)
		}
	})
}
