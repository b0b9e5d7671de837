package propose

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/forge"
)

const handoverBlock = `
propose {
  labels    = ["pin", "dependencies"]
  reviewers = ["alice"]
  assignees = ["bob"]
  automerge = true
}
`

// The catalogue's propose block hands the request over when pin opens
// it: labels, reviewer, assignee, automerge, and the body says
// automerge is on. The same result changes nothing; a label the command
// line adds is added, and nothing else; a new result asks the reviewers
// again.
func TestProposeHandover(t *testing.T) {
	f := newFixture(t, func(s string) string { return s + handoverBlock })
	reqs := &fakeRequests{}
	d := f.deps()
	d.Requests = reqs
	run := func(o Options) *Proposal {
		t.Helper()
		res, err := Run(context.Background(), o, d)
		if err != nil {
			t.Fatal(err)
		}
		return res.Proposals[0]
	}
	p := run(f.options())
	if p.Request.Action != "opened" || !p.Handover.Automerge || p.Handover.Held != "" {
		t.Fatalf("first run: %+v, %+v", p.Request, p.Handover)
	}
	q := reqs.open[0]
	if diff := cmp.Diff([][]string{{"dependencies", "pin"}, {"alice"}, {"bob"}}, [][]string{q.Labels, q.Reviewers, q.Assignees}); diff != "" {
		t.Errorf("handed to (-want +got):\n%s", diff)
	}
	if !reqs.auto[1] || !strings.Contains(p.Body, "### Automerge\n\nOn: the forge merges this request once its required checks pass.") || !strings.Contains(q.Body, "### Automerge") {
		t.Errorf("automerge %v; body:\n%s", reqs.auto[1], p.Body)
	}
	hands, autos := len(reqs.hands), len(reqs.autos)

	if p := run(f.options()); p.Request.Action != "unchanged" || len(reqs.hands) != hands || len(reqs.autos) != autos {
		t.Fatalf("same result: %+v, %d hands, %d automerge calls", p.Request, len(reqs.hands), len(reqs.autos))
	}

	// The command line's labels replace the catalogue's: the one missing
	// is added; the request's others stay (a person may have added them).
	o := f.options()
	o.Labels = []string{"urgent"}
	if p := run(o); p.Request.Action != "updated" || len(reqs.hands) != hands+1 || !slices.Equal(reqs.hands[hands].Labels, []string{"urgent"}) || len(reqs.hands[hands].Reviewers) != 0 {
		t.Fatalf("a label more: %+v, %+v", p.Request, reqs.hands[hands:])
	}

	// A new result: the reviewers are asked again, for what is new.
	f.commitToMain(map[string]string{"examples/incident/mesh-1.json": snapshot(t, "forgejo", "analytics")})
	if p := run(f.options()); p.Request.Action != "updated" || !slices.Equal(reqs.hands[len(reqs.hands)-1].Reviewers, []string{"alice"}) || len(reqs.autos) != autos {
		t.Fatalf("new result: %+v, %+v, %v", p.Request, reqs.hands, reqs.autos)
	}
}

// A request that comes to hold a refusal has its automerge taken back,
// before the commit that holds it is pushed; the body says it is off,
// and why.
func TestProposeAutomergeTakenBack(t *testing.T) {
	f := newFixture(t, func(s string) string { return s + handoverBlock })
	reqs := &fakeRequests{}
	d := f.deps()
	d.Requests = reqs
	if _, err := Run(context.Background(), f.options(), d); err != nil {
		t.Fatal(err)
	}
	if !reqs.auto[1] {
		t.Fatal("automerge not set on the first run")
	}
	before := f.branch("pin/update")
	var atCancel string
	reqs.before = func(n int, on bool) {
		if !on {
			atCancel = f.branch("pin/update")
		}
	}
	// forge is exact now: its pin is older than what runs, refused.
	cat := read(t, f.clone+"/catalogue.hcl")
	f.commitToMain(map[string]string{"catalogue.hcl": strings.Replace(cat, "policy  = \"at-least-running\"\n  pin     = \"1.22.6@", "policy  = \"exact\"\n  pin     = \"1.22.6@", 1)})
	res, err := Run(context.Background(), f.options(), d)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Proposals[0]
	if len(res.Refused) != 1 || p.Handover.Automerge || !strings.Contains(p.Handover.Held, `pin refused forge`) {
		t.Fatalf("refused %+v, handover %+v", res.Refused, p.Handover)
	}
	if reqs.auto[1] || !slices.Equal(reqs.autos, []string{"1 true", "1 false"}) {
		t.Errorf("automerge %v after %v", reqs.auto[1], reqs.autos)
	}
	if atCancel != before || f.branch("pin/update") == before {
		t.Errorf("taken back with the branch at %s: want %s, the commit before the push (now %s)", atCancel, before, f.branch("pin/update"))
	}
	if !strings.Contains(p.Body, "### Automerge\n\nOff: pin refused forge, left as the base has it, and a refusal needs a person. A person merges this request.") {
		t.Errorf("body:\n%s", p.Body)
	}
}

// Automerge is held from a request holding a downgrade the catalogue
// accepts, or a refusal, and from a promotion; set on any other when
// asked for, and never when not.
func TestHandoverHeld(t *testing.T) {
	on := &run{set: settings{hand: forge.Handover{Automerge: true}}}
	for _, tc := range []struct {
		name string
		r    *run
		p    *Proposal
		auto bool
		held string
	}{
		{"plain", on, &Proposal{Modules: []Module{{Name: "forge"}}}, true, ""},
		{"not asked", &run{}, &Proposal{Modules: []Module{{Name: "forge", AllowDowngrade: "x"}}}, false, ""},
		{"accepted downgrade", on, &Proposal{Modules: []Module{{Name: "analytics"}, {Name: "forge", AllowDowngrade: "1.27 corrupts attachments"}}}, false, "it holds a downgrade the catalogue accepts (forge), and a downgrade needs a person"},
		{"refusal", on, &Proposal{Modules: []Module{{Name: "forge"}}, Refused: []Refused{{Module: "packages"}}}, false, "pin refused packages, left as the base has it, and a refusal needs a person"},
		{"promotion", on, &Proposal{Modules: []Module{{Name: "forge"}}, Promotion: &Promotion{}}, false, "a promotion's request is its approval, given by a person"},
	} {
		h := tc.r.handover(tc.p)
		if h.Automerge != tc.auto || h.Held != tc.held {
			t.Errorf("%s: %+v", tc.name, h)
		}
	}
}

// Outside the schedule, the run computes and commits, but pushes
// nothing and asks no forge, and says when the next window opens.
func TestProposeOutsideSchedule(t *testing.T) {
	f := newFixture(t, func(s string) string {
		return s + "\npropose {\n  labels   = [\"pin\"]\n  schedule = [\"* 0-5 * * 1\"]\n}\n"
	})
	reqs := &fakeRequests{}
	d := f.deps()
	d.Requests = reqs
	o := f.options()
	o.Now = time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC) // a Wednesday
	res, err := Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proposals) != 1 || res.Proposals[0].Outcome != OutcomeOutsideSchedule || res.Proposals[0].Commit == "" || res.Outside == nil {
		t.Fatalf("outside: %+v, %+v", res.Proposals, res.Outside)
	}
	if want := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC); !res.Outside.Next.Equal(want) || res.Outside.Windows != `"* 0-5 * * 1" (UTC)` {
		t.Errorf("next window %s (%s), want %s", res.Outside.Next, res.Outside.Windows, want)
	}
	if b := f.branch("pin/update"); b != "" || reqs.opened != 0 || len(reqs.hands) != 0 {
		t.Errorf("pushed %q, opened %d", b, reqs.opened)
	}
	// Inside the window, it pushes.
	o.Now = time.Date(2026, 12, 7, 5, 59, 0, 0, time.UTC)
	if res, err := Run(context.Background(), o, d); err != nil || res.Proposals[0].Outcome != OutcomePushed || res.Outside != nil || reqs.opened != 1 {
		t.Fatalf("inside: %v, %+v", err, res)
	}
}

// A convention that cannot carry the hand-over is refused before
// anything is pushed: a plain branch has no request to label.
func TestProposeHandoverNeedsAForge(t *testing.T) {
	f := newFixture(t, nil)
	o := f.options()
	o.Reviewers = []string{"alice"}
	if _, err := f.run(o); err == nil || !strings.Contains(err.Error(), "the branch convention opens no request pin can hand over") {
		t.Fatalf("err %v", err)
	}
	if b := f.branch("pin/update"); b != "" {
		t.Errorf("pushed %s", b)
	}
}
