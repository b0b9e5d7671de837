package order

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

func TestVersionOf(t *testing.T) {
	tests := []struct {
		name       string
		tag, label string
		kind       ClaimKind
		version    string // the image's version, as written
		variant    string
		known      string
	}{
		{"tag only", "1.22.6", "", FromTag, "1.22.6", "{3}", "version 1.22.6 (from the tag)"},
		{"label only", "latest", "2.1.0", FromLabel, "2.1.0", "{3}", "version 2.1.0 (from the label)"},
		{"label more precise", "1.27", "1.27.9", FromBoth, "1.27.9", "{3}", "version 1.27.9 (the tag 1.27 and the label 1.27.9 agree)"},
		{"tag more precise", "1.27.0", "1.27", FromBoth, "1.27.0", "{3}", "version 1.27.0 (the tag 1.27.0 and the label 1.27 agree)"},
		{"equal precision takes the tag", "v1.27.3-rootless", "1.27.3", FromBoth, "v1.27.3-rootless", "v{3}-rootless", "version v1.27.3-rootless (the tag v1.27.3-rootless and the label 1.27.3 agree)"},
		{"alias with variant, precise label", "1.27-alpine", "1.27.3", FromBoth, "1.27.3", "{3}", ""},
		{"disagree", "1.30.0", "1.22.6", Conflicting, "", "", "conflicting versions: the tag says 1.30.0, the label says 1.22.6"},
		{"pre-release disagrees", "1.3.0", "1.3.0-rc.1", Conflicting, "", "", ""},
		{"label not a version", "1.2.3", "abc123", FromTag, "1.2.3", "{3}", ""},
		{"none", "latest", "", NoVersion, "", "", "no semver version in its tag or label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Options{}.VersionOf(img(d1, tt.tag, tt.label, ""))
			if c.Kind != tt.kind {
				t.Fatalf("kind = %v, want %v", c.Kind, tt.kind)
			}
			if c.Known() != (tt.version != "") {
				t.Errorf("Known() = %v", c.Known())
			}
			if tt.version != "" && (c.Version.Original != tt.version || c.Version.Variant() != tt.variant) {
				t.Errorf("version = %s of variant %s, want %s of %s", c.Version.Original, c.Version.Variant(), tt.version, tt.variant)
			}
			if k := (Options{}).Known(img(d1, tt.tag, tt.label, "")); !strings.HasPrefix(k, tt.known) {
				t.Errorf("Known() = %q, want it to begin %q", k, tt.known)
			}
		})
	}
}

// TestKnownInWords: what refusal messages print names no internal notation.
func TestKnownInWords(t *testing.T) {
	numeric, _ := version.ParseScheme("numeric")
	tests := []struct {
		i    image.Image
		o    Options
		want string
	}{
		{img(d1, "1.22.6", "", "2026-02-01"), Options{}, "version 1.22.6 (from the tag), built 2026-02-01T00:00:00Z"},
		{img(d1, "1.27", "1.27.9", ""), Options{}, "version 1.27.9 (the tag 1.27 and the label 1.27.9 agree), no build date"},
		{img(d1, "1.30.0", "1.22.6", "2026-02-01"), Options{}, "conflicting versions: the tag says 1.30.0, the label says 1.22.6, built 2026-02-01T00:00:00Z"},
		{img(d1, "1733222400", "", ""), Options{Scheme: numeric}, "version 1733222400 (from the tag), no build date"},
	}
	for _, tt := range tests {
		got := tt.o.Known(tt.i)
		if got != tt.want {
			t.Errorf("Known(%s) = %q, want %q", tt.i.Ref(), got, tt.want)
		}
		if strings.ContainsAny(got, "{}") {
			t.Errorf("Known(%s) = %q prints internal notation", tt.i.Ref(), got)
		}
	}
}

// TestDatesApart: a build date is printed at the precision that ordered
// it: whole seconds when they differ, else as many digits of the second
// as tell the two apart, the same for both.
func TestDatesApart(t *testing.T) {
	at := func(s string) image.Image {
		c, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return image.Image{Repository: "registry.example.org/team/svc", Digest: "sha256:" + fmt.Sprintf("%064x", sha256.Sum256([]byte(s))), Created: c}
	}
	for _, tt := range []struct{ a, b, detail, known string }{
		{"2026-09-17T00:00:00.8Z", "2026-09-17T00:00:00Z", "built 2026-09-17T00:00:00.8Z > 2026-09-17T00:00:00.0Z", "no semver version in its tag or label, built 2026-09-17T00:00:00.8Z"},
		{"2026-09-17T00:00:00.25Z", "2026-09-17T00:00:00.2Z", "built 2026-09-17T00:00:00.25Z > 2026-09-17T00:00:00.20Z", "no semver version in its tag or label, built 2026-09-17T00:00:00.25Z"},
		{"2026-09-17T00:00:01.5Z", "2026-09-17T00:00:00.5Z", "built 2026-09-17T00:00:01Z > 2026-09-17T00:00:00Z", "no semver version in its tag or label, built 2026-09-17T00:00:01.5Z"},
		{"2026-09-17T00:00:00.000000002Z", "2026-09-17T00:00:00.000000001Z", "built 2026-09-17T00:00:00.000000002Z > 2026-09-17T00:00:00.000000001Z", ""},
		{"2026-09-17T02:00:00+02:00", "2026-08-20T00:00:00Z", "built 2026-09-17T00:00:00Z > 2026-08-20T00:00:00Z", "no semver version in its tag or label, built 2026-09-17T00:00:00Z"},
	} {
		a, b := at(tt.a), at(tt.b)
		o := Options{Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
		res := Compare(a, b, o)
		if res.Cmp != Newer || res.Rule != RuleCreated || res.Detail != tt.detail {
			t.Errorf("%s against %s: %s by %s, %q; want newer by created, %q", tt.a, tt.b, res.Cmp, res.Rule, res.Detail, tt.detail)
		}
		if back := Compare(b, a, o); back.Cmp != Older || !strings.Contains(back.Detail, " < ") {
			t.Errorf("%s against %s: %s, %q", tt.b, tt.a, back.Cmp, back.Detail)
		}
		if k := o.Known(a); tt.known != "" && k != tt.known {
			t.Errorf("Known(%s) = %q, want %q", tt.a, k, tt.known)
		}
	}
}
