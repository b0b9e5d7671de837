package resolve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
)

// The most common tags of all have one part (postgres:16, node:20,
// redis:7). Under the default scheme a one-part version is a precision
// of its own: 16 follows 17, never 17.1 or 17-alpine; the -alpine
// variant follows its own. Bare numbers that are dates or build stamps
// are no versions of the default scheme, as before: build dates order
// them. Written in the scenario language of scenarios.
//
// The peers' vectors (Renovate's docker versioning tests) come first:
// "3" is a version whose major is 3, "3" is newer than "2", "3" is not
// "4.0" (another precision), and a range "1" is satisfied by "1" alone
// among 0.9.8, 1.1.1, 1.1, 1.2.3, 1.2, 1, 2.2.2, 2.2, 2 (here, under
// at-least-running, the pin "1" keeps to tags of one part).
const onePartScenarios = `
track-upstream   2             -                  2,3                      -                 → upstream:3
track-upstream   3             -                  3,4.0                    -                 → upstream:3
track-upstream   8             -                  8,9,10,8.1,10-alpine     -                 → upstream:10
track-upstream   1             -                  0.9.8,1.1.1,1.1,1.2.3,1.2,1,2.2.2,2.2,2 -  → upstream:2
track-upstream   16            -                  15,16,17,17.1,18-alpine  -                 → upstream:17
track-upstream   16            17                 15,16,17.1               -                 → running:0
track-upstream   20-alpine     -                  20,21,21-alpine,22.1-alpine -              → upstream:21-alpine
track-upstream   7             -                  7,8-rc.1,7.2.4           -                 → upstream:7
track-upstream   -             16                 15,16,17,17.1            -                 → upstream:17
track-upstream   v7            -                  v7,v8,8                  -                 → upstream:v8
at-least-running 16            17                 -                        -                 → running:0
exact            16            17                 -                        -                 → refuse:downgrade
exact            16            16.2               -                        -                 → refuse:unknown-order
at-least-running 20200102/2026-08-20 20200101/2026-09-17 -             -                 → running:0
at-least-running 1694132170/2026-08-20 1694132169/2026-09-17 -         -                 → running:0
`

func TestOnePartVersions(t *testing.T) {
	for i, line := range strings.Split(strings.TrimSpace(onePartScenarios), "\n") {
		line = strings.TrimSpace(line)
		m := scenarioLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("scenario %d does not parse: %q", i, line)
		}
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			d := runScenario(t, m[1], m[2], m[3], m[4], m[5])
			if got := outcomeOf(d); got != m[6] {
				t.Errorf("%s\n got %s\nwant %s\nreason: %v %v %v", line, got, m[6], reason(d), d.Refusal(), d.Err())
			}
			checkInvariant(t, d)
		})
	}
}

// TestOnePartPinLoads: under track-upstream, pin = "16" loads without
// versioning = "numeric"; a date or a build stamp as a pin is refused as
// before.
func TestOnePartPinLoads(t *testing.T) {
	for pin, ok := range map[string]bool{"16": true, "20-alpine": true, "7": true, "20200101": false, "1694132169": false} {
		src := fmt.Sprintf("module \"db\" {\n  image  = \"registry.example.org/library/postgres\"\n  policy = \"track-upstream\"\n  pin    = %q\n}\n", pin)
		_, diags := catalogue.Parse(catalogue.Source{Filename: "catalogue.hcl", Bytes: []byte(src)})
		if diags.HasErrors() == ok {
			t.Errorf("pin = %q: %v", pin, diags)
		}
	}
}
