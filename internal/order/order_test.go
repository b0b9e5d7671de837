package order

import (
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

const (
	d1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	d2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	d3 = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	d4 = "sha256:4444444444444444444444444444444444444444444444444444444444444444"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestCompare(t *testing.T) {
	now := day("2026-12-01")
	calver, _ := version.ParseScheme("calver")
	tests := []struct {
		name   string
		a, b   image.Image
		opts   Options
		cmp    Cmp
		rule   Rule
		detail string
	}{
		{name: "same digest", a: image.Image{Tag: "1.0.0", Digest: d1}, b: image.Image{Tag: "2.0.0", Digest: d1}, cmp: Equal, rule: RuleContent},
		{name: "same config", a: image.Image{Digest: d1, ConfigDigest: d3}, b: image.Image{Digest: d2, ConfigDigest: d3}, cmp: Equal, rule: RuleContent},
		{name: "classic image ID is config digest", a: image.Image{ImageID: d3}, b: image.Image{Digest: d1, ConfigDigest: d3}, cmp: Equal, rule: RuleContent},
		{name: "containerd image ID is index digest", a: image.Image{Digest: d1, ConfigDigest: d4}, b: image.Image{ImageID: d1}, cmp: Equal, rule: RuleContent},
		{name: "platform entry of index", a: image.Image{Digest: d2}, b: image.Image{Digest: d1, Platforms: map[string]string{"linux/amd64": d2}}, cmp: Equal, rule: RuleContent},
		{name: "image ID never taken as the other's image ID alone unless equal", a: image.Image{ImageID: d1}, b: image.Image{ImageID: d2}, cmp: Unknown, rule: RuleNone},
		{name: "semver older", a: image.Image{Tag: "1.22.6", Digest: d1}, b: image.Image{Tag: "1.27.3", Digest: d2}, cmp: Older, rule: RuleVersion, detail: "version 1.22.6 < 1.27.3"},
		{name: "semver newer v prefix", a: image.Image{Tag: "v1.10.0", Digest: d1}, b: image.Image{Tag: "v1.9.9", Digest: d2}, cmp: Newer, rule: RuleVersion},
		{name: "tag and label disagree: conflicting", a: image.Image{Tag: "6.10.3", Digest: d1, Labels: map[string]string{image.LabelVersion: "1.0.0"}}, b: image.Image{Tag: "6.10.1", Digest: d2}, cmp: Unknown, rule: RuleNone, detail: "conflicting versions: the tag says 6.10.3, the label says 1.0.0"},
		{name: "label when no tag version", a: image.Image{Tag: "latest", Digest: d1, Labels: map[string]string{image.LabelVersion: "2.1.0"}}, b: image.Image{Tag: "2.0.0", Digest: d2}, cmp: Newer, rule: RuleVersion},
		{name: "variants do not compare, dates decide where the cores agree", a: image.Image{Tag: "1.22.6-rootless", Digest: d1, Created: day("2026-01-01")}, b: image.Image{Tag: "1.27.3", Digest: d2, Created: day("2026-02-01")}, cmp: Older, rule: RuleCreated},
		{name: "variants do not compare, cores and dates disagree", a: image.Image{Tag: "1.27.3-rootless", Digest: d1, Created: day("2026-01-01")}, b: image.Image{Tag: "1.22.6", Digest: d2, Created: day("2026-02-01")}, cmp: Unknown, rule: RuleNone},
		{name: "variants do not compare, labels do", a: image.Image{Tag: "1.27-alpine", Digest: d1, Labels: map[string]string{image.LabelVersion: "1.27.3"}}, b: image.Image{Tag: "1.22.6", Digest: d2, Labels: map[string]string{image.LabelVersion: "1.22.6"}}, cmp: Newer, rule: RuleVersion},
		{name: "precision is a variant", a: image.Image{Tag: "1.27", Digest: d1}, b: image.Image{Tag: "1.22.6", Digest: d2}, cmp: Unknown, rule: RuleNone},
		{name: "any variant allowed", a: image.Image{Tag: "1.27", Digest: d1}, b: image.Image{Tag: "1.22.6", Digest: d2}, opts: Options{AnyVariant: true}, cmp: Newer, rule: RuleVersion},
		{name: "pre-release older than release", a: image.Image{Tag: "1.3.0-rc.1", Digest: d1}, b: image.Image{Tag: "1.3.0", Digest: d2}, cmp: Older, rule: RuleVersion},
		{name: "same version rebuild decided by date", a: image.Image{Tag: "1.2.3", Digest: d1, Created: day("2026-03-01")}, b: image.Image{Tag: "1.2.3", Digest: d2, Created: day("2026-02-01")}, cmp: Newer, rule: RuleCreated},
		{name: "same version no dates", a: image.Image{Tag: "1.2.3", Digest: d1}, b: image.Image{Tag: "1.2.3", Digest: d2}, cmp: Unknown, rule: RuleNone},
		{name: "build dates", a: image.Image{Tag: "latest", Digest: d1, Created: day("2026-08-20")}, b: image.Image{Digest: d2, Created: day("2026-09-17")}, cmp: Older, rule: RuleCreated},
		{name: "created label when config has none", a: image.Image{Digest: d1, Labels: map[string]string{image.LabelCreated: "2026-09-17T00:00:00Z"}}, b: image.Image{Digest: d2, Created: day("2026-08-20")}, cmp: Newer, rule: RuleCreated},
		{name: "epoch is unknown not old", a: image.Image{Digest: d1, Created: time.Unix(0, 0)}, b: image.Image{Digest: d2, Created: day("2026-08-20")}, cmp: Unknown, rule: RuleNone},
		{name: "year one is unknown", a: image.Image{Digest: d1, Created: time.Time{}.Add(time.Hour)}, b: image.Image{Digest: d2, Created: day("2026-08-20")}, cmp: Unknown, rule: RuleNone},
		{name: "future date is unknown", a: image.Image{Digest: d1, Created: day("2027-06-01")}, b: image.Image{Digest: d2, Created: day("2026-08-20")}, opts: Options{Now: now}, cmp: Unknown, rule: RuleNone},
		{name: "equal dates are unknown", a: image.Image{Digest: d1, Created: day("2026-08-20")}, b: image.Image{Digest: d2, Created: day("2026-08-20")}, cmp: Unknown, rule: RuleNone},
		{name: "calver tags", a: image.Image{Tag: "2026.09.17", Digest: d1}, b: image.Image{Tag: "2026.08.20", Digest: d2}, opts: Options{Scheme: calver}, cmp: Newer, rule: RuleVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.a, tt.b, tt.opts)
			if got.Cmp != tt.cmp || got.Rule != tt.rule {
				t.Fatalf("Compare = %v by %s (%s), want %v by %s", got.Cmp, got.Rule, got.Detail, tt.cmp, tt.rule)
			}
			if tt.detail != "" && got.Detail != tt.detail {
				t.Errorf("detail = %q, want %q", got.Detail, tt.detail)
			}
			// The reverse comparison mirrors it, by the same rule.
			back := Compare(tt.b, tt.a, tt.opts)
			want := map[Cmp]Cmp{Older: Newer, Newer: Older, Equal: Equal, Unknown: Unknown}[tt.cmp]
			if back.Cmp != want || back.Rule != tt.rule {
				t.Errorf("reverse = %v by %s, want %v by %s", back.Cmp, back.Rule, want, tt.rule)
			}
		})
	}
}

func TestUnknownSaysWhatWasKnown(t *testing.T) {
	a := image.Image{Repository: "r.example/x", Tag: "1.2.3", Digest: d1, Created: time.Unix(0, 0)}
	b := image.Image{Repository: "r.example/x", Tag: "1.2.3", Digest: d2}
	got := Compare(a, b, Options{})
	for _, want := range []string{"r.example/x:1.2.3@" + d1, "version 1.2.3 (from the tag", "1970-01-01T00:00:00Z (not plausible", "no build date"} {
		if !strings.Contains(got.Detail, want) {
			t.Errorf("detail %q does not mention %q", got.Detail, want)
		}
	}
}
