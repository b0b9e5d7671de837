package order

import (
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
)

// TestReviewAnyVariantPrecision.
//
// HOLE: with any_variant, Compare orders versions of different precision
// with version.Compare, which pads the shorter with zeros: a running
// floating "1.27" (whatever 1.27.x it is: here built five months after
// 1.27.3) is "version 1.27 < 1.27.3", and an exact or at-least-running
// pin 1.27.3 is locked over it as an upgrade. any_variant is documented as
// comparing "tags of different variants (prefix, precision, suffix)", not
// as reading "1.27" as "1.27.0"; without any_variant the same pair is
// weighed by version.Relate (overlap, the dates decide: the running one is
// newer).
//
// FIX: order.go Compare: under AnyVariant, when the precisions differ,
// relate the versions as intervals (acrossVariants with version.Relate)
// instead of version.Compare; AnyVariant should only waive the prefix and
// suffix checks.
func TestReviewAnyVariantPrecision(t *testing.T) {
	pin := image.Image{Tag: "1.27.3", Digest: "sha256:" + rep("a"), Created: time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)}
	running := image.Image{Tag: "1.27", Digest: "sha256:" + rep("b"), Created: time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)}
	o := Options{AnyVariant: true, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	if r := Compare(pin, running, o); r.Cmp == Newer || r.Cmp == Equal {
		t.Errorf("any_variant: pin 1.27.3 (built 2026-01-10) is %s than a running 1.27 built 2026-06-10 (%s); without any_variant: %s",
			r.Cmp, r.Detail, Compare(pin, running, Options{Now: o.Now}).Cmp)
	}
}

func rep(s string) string {
	out := ""
	for len(out) < 64 {
		out += s
	}
	return out[:64]
}
