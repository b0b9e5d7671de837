package catalogue

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/robfig/cron/v3"
)

var proposeSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "labels"}, {Name: "reviewers"}, {Name: "assignees"}, {Name: "automerge"}, {Name: "schedule"}, {Name: "timezone"},
}}

// Propose is the catalogue's propose block: how pin propose hands its
// requests over, and when it pushes them. The command line's --label,
// --reviewer, --assignee and --automerge replace what it says.
type Propose struct {
	// Labels, Reviewers and Assignees are set on every request pin opens
	// or updates (names as the forge knows them).
	Labels, Reviewers, Assignees []string
	// Automerge asks the forge to merge a request once its required
	// checks pass, unless it holds a refusal or an accepted downgrade.
	Automerge bool
	// Schedule are the windows in which pin propose pushes; none: always.
	Schedule []Window
	// Location is the time zone the windows are read in (UTC unless
	// timezone says otherwise).
	Location  *time.Location
	DeclRange hcl.Range
}

// Window is a cron expression, "minute hour day-of-month month
// day-of-week": every minute it matches is inside the window ("* 0-5 * *
// 1" is Monday from 00:00 to 05:59).
type Window struct {
	Spec  string
	sched cron.Schedule
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ParseWindow reads a cron expression of five fields.
func ParseWindow(spec string) (Window, error) {
	s, err := cronParser.Parse(spec)
	if err != nil {
		return Window{}, err
	}
	return Window{Spec: spec, sched: s}, nil
}

// Open reports whether t's minute is inside w, t read in loc.
func (w Window) Open(t time.Time, loc *time.Location) bool {
	m := t.In(loc).Truncate(time.Minute)
	return w.sched.Next(m.Add(-time.Second)).Equal(m)
}

// Next is when w next opens after t, read in loc (zero if never within
// five years, as cron reads a date that never comes).
func (w Window) Next(t time.Time, loc *time.Location) time.Time {
	return w.sched.Next(t.In(loc))
}

// Window reports whether t is inside one of p's windows (always, with
// none), and if not, when the next one opens.
func (p *Propose) Window(t time.Time) (open bool, next time.Time) {
	if p == nil || len(p.Schedule) == 0 {
		return true, time.Time{}
	}
	loc := p.Location
	if loc == nil {
		loc = time.UTC
	}
	for _, w := range p.Schedule {
		if w.Open(t, loc) {
			return true, time.Time{}
		}
		if n := w.Next(t, loc); !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return false, next
}

const proposeWords = `labels = ["dependencies"], reviewers = ["alice"], assignees = ["bob"], automerge = true, schedule = ["* 0-5 * * 1"] and timezone = "Europe/Berlin"`

func (l *loader) propose(b *hcl.Block) hcl.Diagnostics {
	content, diags := b.Body.Content(proposeSchema)
	diags = explainUnsupported(diags, "The propose block takes "+proposeWords+".")
	p := &Propose{DeclRange: b.DefRange, Location: time.UTC}
	if prev := l.c.Propose; prev != nil {
		diags = append(diags, errorf(b.DefRange, "Duplicate propose block", "The catalogue has a propose block already, at %s. Merge the two: one block says how pin propose hands its requests over.", prev.DeclRange))
	} else {
		l.c.Propose = p
	}
	a := content.Attributes
	for _, f := range []struct {
		name string
		dst  *[]string
	}{{"labels", &p.Labels}, {"reviewers", &p.Reviewers}, {"assignees", &p.Assignees}} {
		d := strList(a[f.name], f.dst)
		diags = append(diags, d...)
		for _, s := range *f.dst {
			if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\r\n") {
				diags = append(diags, errorf(a[f.name].Expr.Range(), "Invalid "+strings.TrimSuffix(f.name, "s"), "%s holds %q: write names as the forge knows them, one line each, none empty.", f.name, s))
			}
		}
	}
	diags = append(diags, boolean(a["automerge"], &p.Automerge)...)
	if attr := a["timezone"]; attr != nil {
		var tz string
		d := str(attr, &tz)
		diags = append(diags, d...)
		if len(d) == 0 {
			loc, err := time.LoadLocation(tz)
			if err != nil || tz == "" {
				diags = append(diags, errorf(attr.Expr.Range(), "Unknown time zone", "timezone %q is not a time zone this machine knows: write an IANA name such as \"Europe/Berlin\", or \"UTC\".", tz))
			} else {
				p.Location = loc
			}
		}
	}
	var specs []string
	d := strList(a["schedule"], &specs)
	diags = append(diags, d...)
	for _, s := range specs {
		w, err := ParseWindow(s)
		if err != nil {
			diags = append(diags, errorf(a["schedule"].Expr.Range(), "Invalid schedule", "schedule holds %q, which is not a cron expression of five fields (%v): write minute hour day-of-month month day-of-week, with * in the minutes for whole hours, such as \"* 0-5 * * 1\" (Monday, 00:00 to 05:59).", s, err))
			continue
		}
		p.Schedule = append(p.Schedule, w)
	}
	if attr := a["schedule"]; attr != nil && len(specs) == 0 && len(d) == 0 {
		diags = append(diags, errorf(attr.Expr.Range(), "Empty schedule", "schedule is empty, so pin propose would never push. Write a window such as [\"* 0-5 * * 1\"], or drop schedule to push on every run."))
	}
	return diags
}

// String names the windows, for messages: "* 0-5 * * 1 (UTC)".
func (p *Propose) String() string {
	var specs []string
	for _, w := range p.Schedule {
		specs = append(specs, fmt.Sprintf("%q", w.Spec))
	}
	loc := "UTC"
	if p.Location != nil {
		loc = p.Location.String()
	}
	return strings.Join(specs, ", ") + " (" + loc + ")"
}
