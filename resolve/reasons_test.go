package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
)

// invisible are reasons made of what nobody sees: a zero-width space, a
// word joiner, a byte order mark, a no-break space, spaces.
var invisible = []string{"\u200b", "\u2060", "\ufeff", " \u00a0\t "}

// TestInvisibleReasonAcceptsNothing: an override whose reason holds no
// letter or digit is refused like a blank one, in Judge (pin admit, pin
// authz read it from an annotation or a label) as in resolve; words in any
// script accept the downgrade.
func TestInvisibleReasonAcceptsNothing(t *testing.T) {
	ctx := context.Background()
	reg := newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6", "1.27.3/2026-09-01+1.27.3")
	older := reg.byTag["1.22.6"]
	for _, oneWay := range []bool{false, true} {
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, OneWay: oneWay}
		in := inputOf(m, reg, nil, observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil))
		img := image.Image{Repository: repo, Tag: "1.22.6", Digest: older.Digest}
		for _, why := range invisible {
			ov := Override{Downgrade: why, Restore: "snapshot 2026-09-16", How: "annotate it"}
			if oneWay {
				ov = Override{Downgrade: "the 1.27 migration broke search", Restore: why, How: "annotate it"}
			}
			j, err := Judge(ctx, in, m, img, ov)
			if err != nil {
				t.Fatal(err)
			}
			if j.Allowed() || !strings.Contains(j.Refusal.Error(), "the override gives no reason in words") {
				t.Errorf("one_way %v, override %+q / restore %+q: allowed %v (%s), refusal %v", oneWay, ov.Downgrade, ov.Restore, j.Allowed(), j.Reason, j.Refusal)
			}
		}
		ov := Override{Downgrade: "Rückkehr zu 1.22: die Suche ist kaputt", Restore: "快照 2026-09-16"}
		if j, err := Judge(ctx, in, m, img, ov); err != nil || !j.Allowed() {
			t.Errorf("one_way %v, a reason in words: %v %v", oneWay, j.Refusal, err)
		}

		// A catalogue built without the loader (which refuses these at
		// their line) accepts nothing with them either.
		m.Pin, m.Policy = pinOf("1.22.6", older), catalogue.Exact
		for _, why := range invisible {
			m.AllowDowngrade, m.Restore = why, "snapshot 2026-09-16"
			if oneWay {
				m.AllowDowngrade, m.Restore = "the 1.27 migration broke search", why
			}
			if d := Resolve(ctx, in).Decisions[0]; d.Refusal() == nil || d.Refusal().Kind != KindDowngrade {
				t.Errorf("one_way %v, allow_downgrade %+q restore %+q: new %v, refusal %v", oneWay, m.AllowDowngrade, m.Restore, d.New(), d.Refusal())
			}
		}
		m.Pin, m.Policy, m.AllowDowngrade, m.Restore = catalogue.Pin{}, catalogue.AtLeastRunning, "", ""
	}
}
