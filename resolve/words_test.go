package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
)

// TestFloatingTagNamed: a track-upstream module that follows a floating
// tag names it in its reasons by the tag's own name, and says what it
// names now; never by the version alone, as if it were that tag.
func TestFloatingTagNamed(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		tag, serves, runs string
		want              string
	}{
		{"artful", "artful/2026-03-01+1.1.0", "1.0.0/2026-01-01+1.0.0",
			"the floating tag artful, now 1.1.0; newer than what host-0/svc runs (version 1.1.0 > 1.0.0): an upgrade"},
		{"artful", "artful/2026-03-01+1.1.0", "1.2.0/2026-05-01+1.2.0",
			"host-0/svc runs 1.2.0, newer than the floating tag artful, now 1.1.0 (version 1.2.0 > 1.1.0): locking the floating tag artful would be a downgrade"},
		{"latest", "latest/2026-09-17", "latest/2026-08-20",
			"the floating tag latest; newer than what host-0/svc runs (built 2026-09-17T00:00:00Z > 2026-08-20T00:00:00Z): an upgrade"},
		{"latest", "latest/2026-08-20", "latest/2026-09-17",
			"host-0/svc runs latest (sha256:248f08210eb8), newer than the floating tag latest, now sha256:9cad168fb0ec (built 2026-09-17T00:00:00Z > 2026-08-20T00:00:00Z): locking the floating tag latest would be a downgrade"},
		{"latest", "latest/2026-09-17", "",
			"the floating tag latest; no host runs this module"},
	} {
		reg := newFakeRegistry(repo, tc.serves)
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Tag: tc.tag}
		var runs []run
		if tc.runs != "" {
			runs = []run{{host: "host-0", word: tc.runs}}
		}
		d := Resolve(ctx, inputOf(m, reg, nil, observed(m, runs, nil))).Decisions[0]
		if d.New == nil {
			t.Fatalf("%s against %s: %v %v", tc.serves, tc.runs, d.Refusal, d.Err)
		}
		if !strings.HasPrefix(d.New.Reason, tc.want) {
			t.Errorf("%s against %s: the reason is\n  %s\nwant it to begin\n  %s", tc.serves, tc.runs, d.New.Reason, tc.want)
		}
	}
}
