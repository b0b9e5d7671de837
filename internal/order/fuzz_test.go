package order

import (
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

// fuzzDate turns a number into a build date: negative is none, zero the
// epoch (implausible), else that many days after 2020-01-01 (some after
// fuzzNow, so implausible too).
func fuzzDate(d int16) time.Time {
	switch {
	case d < 0:
		return time.Time{}
	case d == 0:
		return time.Unix(0, 0)
	}
	return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(d))
}

var fuzzNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// FuzzCompareAntisymmetric: Compare(a, b) and Compare(b, a) are mirror
// images by the same rule, over generated tags, labels and build dates; a
// conflicting claim orders nothing; Unknown and RuleNone go together.
func FuzzCompareAntisymmetric(f *testing.F) {
	seeds := []struct {
		ta, la, tb, lb string
		da, db         int16
	}{
		{"1.26.9", "", "v1.27.3", "", 2300, 2200},
		{"1.26.9", "", "1.27.3-rootless", "", 2300, 2200},
		{"1.27.0", "", "1.27", "", 2300, 2200},
		{"", "1.27.3", "1.27", "1.27.9", 2300, 2200},
		{"1.27.3", "", "latest", "1.27", 2100, 2200},
		{"1.30.0", "1.22.6", "1.22.6", "", 2100, 2200},
		{"1.22", "1.22.5", "1.22.6", "", -1, -1},
		{"1.22", "1.22.5", "", "1.22.4", 0, 9000},
		{"1.3.0-rc.1-alpine", "1.3.0-rc1", "1.3.0", "1.3.0", 2100, 2100},
		{"1733222400", "", "20261203091500", "", 10, 20},
		{"2026.08.20", "", "20260820", "", 2000, 2001},
		{"build-17", "17", "r18-slim", "", 5, 6},
	}
	for i, s := range seeds {
		f.Add(s.ta, s.la, s.tb, s.lb, s.da, s.db, i%2 == 0, uint8(i))
	}
	regex, err := version.ParseScheme(`regex:^(?P<version>[0-9.]+)(-.*)?$`)
	if err != nil {
		f.Fatal(err)
	}
	schemes := []version.Scheme{{Kind: version.SemVer}, {Kind: version.CalVer}, {Kind: version.Numeric}, regex}
	mirror := map[Cmp]Cmp{Older: Newer, Newer: Older, Equal: Equal, Unknown: Unknown}
	f.Fuzz(func(t *testing.T, ta, la, tb, lb string, da, db int16, anyVariant bool, scheme uint8) {
		o := Options{Scheme: schemes[int(scheme)%len(schemes)], AnyVariant: anyVariant, Now: fuzzNow}
		mk := func(digest, tag, label string, d int16) image.Image {
			i := image.Image{Repository: "r.example/x", Tag: tag, Digest: digest, Created: fuzzDate(d)}
			if label != "" {
				i.Labels = map[string]string{image.LabelVersion: label}
			}
			return i
		}
		a, b := mk(d1, ta, la, da), mk(d2, tb, lb, db)
		ab, ba := Compare(a, b, o), Compare(b, a, o)
		if ba.Cmp != mirror[ab.Cmp] || ba.Rule != ab.Rule {
			t.Fatalf("Compare(a, b) = %v by %s (%s) but Compare(b, a) = %v by %s (%s)", ab.Cmp, ab.Rule, ab.Detail, ba.Cmp, ba.Rule, ba.Detail)
		}
		if (ab.Cmp == Unknown) != (ab.Rule == RuleNone) {
			t.Fatalf("Compare(a, b) = %v by %s", ab.Cmp, ab.Rule)
		}
		if ab.Cmp == Equal {
			t.Fatalf("images of other content compare equal: %s", ab.Detail)
		}
		if (o.VersionOf(a).Kind == Conflicting || o.VersionOf(b).Kind == Conflicting) && ab.Cmp != Unknown {
			t.Fatalf("a conflicting version ordered: %v by %s (%s)", ab.Cmp, ab.Rule, ab.Detail)
		}
		if c := Compare(a, a, o); c.Cmp != Equal {
			t.Fatalf("an image is not equal to itself: %v", c.Cmp)
		}
	})
}
