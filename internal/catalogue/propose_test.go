package catalogue

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const proposeModule = "module \"m\" {\n  image  = \"r.example/m\"\n  policy = \"exact\"\n  pin    = \"1\"\n}\n"

// The propose block: every setting read; the windows read in its time
// zone.
func TestProposeBlock(t *testing.T) {
	c, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(proposeModule + `
propose {
  labels    = ["dependencies", "pin"]
  reviewers = ["alice"]
  assignees = ["bob", "carol"]
  automerge = true
  schedule  = ["* 0-5 * * 1", "* 22-23 * * 0"]
  timezone  = "UTC"
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := c.Propose
	if p == nil || !p.Automerge || p.DeclRange.Start.Line != 7 {
		t.Fatalf("propose: %+v", p)
	}
	if diff := cmp.Diff([][]string{{"dependencies", "pin"}, {"alice"}, {"bob", "carol"}}, [][]string{p.Labels, p.Reviewers, p.Assignees}); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if got := p.String(); got != `"* 0-5 * * 1", "* 22-23 * * 0" (UTC)` {
		t.Errorf("String: %s", got)
	}
	// 2026-12-07 is a Monday.
	for _, tc := range []struct {
		at   string
		open bool
		next string
	}{
		{"2026-12-07T00:00:00Z", true, ""},
		{"2026-12-07T05:59:59Z", true, ""},
		{"2026-12-07T06:00:00Z", false, "2026-12-13T22:00:00Z"},
		{"2026-12-13T21:30:10Z", false, "2026-12-13T22:00:00Z"},
		{"2026-12-13T23:59:00Z", true, ""},
		{"2026-12-06T21:59:59Z", false, "2026-12-06T22:00:00Z"},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		open, next := p.Window(at)
		got := ""
		if !next.IsZero() {
			got = next.UTC().Format(time.RFC3339)
		}
		if open != tc.open || got != tc.next {
			t.Errorf("at %s: open %v, next %q; want %v, %q", tc.at, open, got, tc.open, tc.next)
		}
	}
	// Without a schedule, always open; without the block, too.
	if open, _ := (&Propose{}).Window(time.Now()); !open {
		t.Error("no schedule: closed")
	}
	if open, _ := (*Propose)(nil).Window(time.Now()); !open {
		t.Error("no block: closed")
	}
}

// A window is read in the block's time zone: Monday 00:00 in Berlin is
// Sunday 23:00 UTC in winter.
func TestProposeWindowTimeZone(t *testing.T) {
	c, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(proposeModule + "propose {\n  schedule = [\"* 0 * * 1\"]\n  timezone = \"Europe/Berlin\"\n}\n")})
	if diags.HasErrors() {
		t.Skipf("no tzdata on this machine: %v", diags)
	}
	sunday := time.Date(2026, 12, 6, 23, 30, 0, 0, time.UTC)
	if open, _ := c.Propose.Window(sunday); !open {
		t.Errorf("23:30 UTC on Sunday is 00:30 in Berlin on Monday: closed")
	}
	if open, next := c.Propose.Window(sunday.Add(time.Hour)); open || !next.Equal(sunday.Add(7*24*time.Hour-30*time.Minute)) {
		t.Errorf("an hour later: open %v, next %s", open, next.UTC())
	}
}

// Mistakes are diagnostics at their attribute: a cron expression that
// is not one, an empty schedule, an unknown zone, an empty name, a
// second block, an attribute the block does not take.
func TestProposeBlockMistakes(t *testing.T) {
	for _, tc := range []struct {
		block, summary, detail string
		line                   int
	}{
		{"propose {\n  schedule = [\"every monday\"]\n}\n", "Invalid schedule", `schedule holds "every monday", which is not a cron expression`, 8},
		{"propose {\n  schedule = [\"* * * *\"]\n}\n", "Invalid schedule", "five fields", 8},
		{"propose {\n  schedule = []\n}\n", "Empty schedule", "would never push", 8},
		{"propose {\n  timezone = \"Mars/Olympus\"\n}\n", "Unknown time zone", `"Mars/Olympus"`, 8},
		{"propose {\n  labels = [\"\"]\n}\n", "Invalid label", "none empty", 8},
		{"propose {\n  automerge = \"yes\"\n}\n", "Invalid value", "automerge must be bool", 8},
		{"propose {\n  reviewer = [\"a\"]\n}\n", "Unsupported argument", "The propose block takes", 8},
		{"propose {}\npropose {}\n", "Duplicate propose block", "already, at c.hcl:7,1-8", 8},
	} {
		_, diags := Parse(Source{Filename: "c.hcl", Bytes: []byte(proposeModule + "\n" + tc.block)})
		if len(diags) != 1 || diags[0].Summary != tc.summary || !strings.Contains(diags[0].Detail, tc.detail) || diags[0].Subject.Start.Line != tc.line {
			t.Errorf("%q: %v", tc.block, diags)
			for _, d := range diags {
				t.Logf("  %s: %s at %v", d.Summary, d.Detail, d.Subject)
			}
		}
	}
}

// The guide's propose block loads, and its window is what the guide says:
// Monday from 00:00 to 05:59 in Berlin.
func TestProposeGuide(t *testing.T) {
	b, err := os.ReadFile("../../docs/guides/pull-requests.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "```hcl\n")
	block, _, _ := strings.Cut(rest, "```")
	c, diags := Parse(Source{Filename: "guide.hcl", Bytes: []byte(proposeModule + block)})
	if diags.HasErrors() {
		t.Skipf("the guide's block (no tzdata on this machine?): %v", diags)
	}
	p := c.Propose
	if !p.Automerge || len(p.Labels) != 1 || p.String() != `"* 0-5 * * 1" (Europe/Berlin)` {
		t.Fatalf("guide: %+v", p)
	}
	berlin := p.Location
	for _, tc := range []struct {
		at   time.Time
		open bool
	}{
		{time.Date(2026, 12, 7, 0, 0, 0, 0, berlin), true},
		{time.Date(2026, 12, 7, 5, 59, 0, 0, berlin), true},
		{time.Date(2026, 12, 7, 6, 0, 0, 0, berlin), false},
		{time.Date(2026, 12, 6, 23, 59, 0, 0, berlin), false},
	} {
		if open, _ := p.Window(tc.at); open != tc.open {
			t.Errorf("at %s: open %v", tc.at, open)
		}
	}
	if !strings.Contains(string(b), "the next window opens at 2026-12-07 00:00 CET.") {
		t.Error("the guide's message")
	}
	if _, next := p.Window(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)); next.Format("2006-01-02 15:04 MST") != "2026-12-07 00:00 CET" {
		t.Errorf("next window %s", next.Format("2006-01-02 15:04 MST"))
	}
}
