package order

import (
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

// img builds an image with a digest, a tag, a version label (when label is
// not empty) and a build date (when created is not empty).
func img(digest, tag, label, created string) image.Image {
	i := image.Image{Repository: "r.example/x", Tag: tag, Digest: digest}
	if label != "" {
		i.Labels = map[string]string{image.LabelVersion: label}
	}
	if created != "" {
		i.Created = day(created)
	}
	return i
}

// TestSignalsAndVariants holds the cases of "fail closed everywhere": a tag
// and a label are two claims that must agree, and versions of different
// variants still count as evidence against the build dates.
func TestSignalsAndVariants(t *testing.T) {
	conflicting := img(d1, "1.30.0", "1.22.6", "2026-01-01")
	tests := []struct {
		name   string
		a, b   image.Image
		opts   Options
		cmp    Cmp
		rule   Rule
		detail string
	}{
		{name: "backport built later vs v-prefixed running", a: img(d1, "1.26.9", "", "2026-03-01"), b: img(d2, "v1.27.3", "", "2026-02-01"), cmp: Unknown, rule: RuleNone, detail: "the versions and the build dates disagree"},
		{name: "backport built later vs rootless running", a: img(d1, "1.26.9", "", "2026-03-01"), b: img(d2, "1.27.3-rootless", "", "2026-02-01"), cmp: Unknown, rule: RuleNone, detail: "the versions and the build dates disagree"},
		{name: "backport built earlier vs rootless running", a: img(d1, "1.26.9", "", "2026-01-01"), b: img(d2, "1.27.3-rootless", "", "2026-02-01"), cmp: Older, rule: RuleCreated},
		{name: "bottom of the alias rebuilt later", a: img(d1, "1.27.0", "", "2026-03-01"), b: img(d2, "1.27", "", "2026-02-01"), cmp: Unknown, rule: RuleNone, detail: "the versions and the build dates disagree"},
		{name: "bottom of the alias built earlier", a: img(d1, "1.27.0", "", "2026-01-01"), b: img(d2, "1.27", "", "2026-02-01"), cmp: Older, rule: RuleCreated},
		{name: "label against agreeing tag and label", a: img(d1, "", "1.27.3", "2026-03-01"), b: img(d2, "1.27", "1.27.9", "2026-02-01"), cmp: Older, rule: RuleVersion, detail: "version 1.27.3 < 1.27.9"},
		{name: "cores say nothing, dates decide", a: img(d1, "1.27.3", "", "2026-01-01"), b: img(d2, "latest", "1.27", "2026-02-01"), cmp: Older, rule: RuleCreated},
		{name: "conflicting vs tag", a: conflicting, b: img(d2, "1.22.6", "", "2025-01-01"), cmp: Unknown, rule: RuleNone, detail: "conflicting versions: the tag says 1.30.0, the label says 1.22.6"},
		{name: "conflicting vs label", a: conflicting, b: img(d2, "latest", "1.31.0", "2027-01-01"), cmp: Unknown, rule: RuleNone, detail: "conflicting versions: the tag says 1.30.0, the label says 1.22.6"},
		{name: "conflicting vs no version", a: conflicting, b: img(d2, "latest", "", "2025-01-01"), cmp: Unknown, rule: RuleNone, detail: "conflicting versions: the tag says 1.30.0, the label says 1.22.6"},
		{name: "conflicting with any variant", a: conflicting, b: img(d2, "1.22", "", "2025-01-01"), opts: Options{AnyVariant: true}, cmp: Unknown, rule: RuleNone, detail: "conflicting versions"},
		{name: "conflicting vs same content", a: conflicting, b: img(d1, "1.22.6", "", ""), cmp: Equal, rule: RuleContent},
		{name: "alias with precise label vs tag", a: img(d1, "1.22", "1.22.5", ""), b: img(d2, "1.22.6", "", ""), cmp: Older, rule: RuleVersion},
		{name: "alias with precise label vs label", a: img(d1, "1.22", "1.22.5", ""), b: img(d2, "", "1.22.4", ""), cmp: Newer, rule: RuleVersion},
		{name: "label-only versions pass the variant rule", a: img(d1, "latest", "1.27", ""), b: img(d2, "latest", "1.22.6", ""), cmp: Unknown, rule: RuleNone},
		{name: "label-only versions of one variant compare", a: img(d1, "latest", "1.27.1", ""), b: img(d2, "latest", "1.22.6", ""), cmp: Newer, rule: RuleVersion},
		{name: "backport in one variant ordered by version", a: img(d1, "1.26.9", "", "2026-03-01"), b: img(d2, "1.27.3", "", "2026-02-01"), cmp: Older, rule: RuleVersion},
		{name: "any variant compares tags by version", a: img(d1, "1.26.9", "", "2026-03-01"), b: img(d2, "v1.27.3", "", "2026-02-01"), opts: Options{AnyVariant: true}, cmp: Older, rule: RuleVersion},
		{name: "different variants without dates", a: img(d1, "1.26.9", "", ""), b: img(d2, "1.27.3-rootless", "", ""), cmp: Unknown, rule: RuleNone},
		{name: "pre-release of another variant below its release", a: img(d1, "1.27.3-rc.1-rootless", "", "2026-03-01"), b: img(d2, "1.27.3", "", "2026-02-01"), cmp: Unknown, rule: RuleNone, detail: "the versions and the build dates disagree"},
		{name: "equal cores, other suffix: dates decide", a: img(d1, "1.27.3-rootless", "", "2026-03-01"), b: img(d2, "1.27.3", "", "2026-02-01"), cmp: Newer, rule: RuleCreated},
		{name: "version against none: unknown (a backport is built after what it is older than)", a: img(d1, "1.27.3", "", "2026-03-01"), b: img(d2, "latest", "", "2026-02-01"), cmp: Unknown, rule: RuleNone, detail: "only one of them has a version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Now = day("2026-12-01")
			got := Compare(tt.a, tt.b, tt.opts)
			if got.Cmp != tt.cmp || got.Rule != tt.rule {
				t.Fatalf("Compare = %v by %s (%s), want %v by %s", got.Cmp, got.Rule, got.Detail, tt.cmp, tt.rule)
			}
			if !strings.Contains(got.Detail, tt.detail) {
				t.Errorf("detail = %q, want it to say %q", got.Detail, tt.detail)
			}
			back := Compare(tt.b, tt.a, tt.opts)
			want := map[Cmp]Cmp{Older: Newer, Newer: Older, Equal: Equal, Unknown: Unknown}[tt.cmp]
			if back.Cmp != want || back.Rule != tt.rule {
				t.Errorf("reverse = %v by %s (%s), want %v by %s", back.Cmp, back.Rule, back.Detail, want, tt.rule)
			}
		})
	}
}

// TestLongNumericTags: Unix-timestamp tags order by version.
func TestLongNumericTags(t *testing.T) {
	numeric, _ := version.ParseScheme("numeric")
	a := img(d1, "1733222400", "", "")
	b := img(d2, "1733308800", "", "")
	if got := Compare(a, b, Options{Scheme: numeric}); got.Cmp != Older || got.Rule != RuleVersion {
		t.Errorf("Compare = %v by %s (%s), want older by version", got.Cmp, got.Rule, got.Detail)
	}
}
