package propose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/forge"
)

// Handover is who and what a proposal's request is handed to: the
// catalogue's propose settings, with what the command line sets instead.
type Handover struct {
	Labels    []string `json:"labels"`
	Reviewers []string `json:"reviewers"`
	Assignees []string `json:"assignees"`
	// Automerge: pin asks the forge to merge the request once its
	// required checks pass.
	Automerge bool `json:"automerge"`
	// Held says why automerge was asked for and not set ("" when it was,
	// or was not asked for): the request holds a refusal or an accepted
	// downgrade, or is a promotion; a person merges it.
	Held string `json:"held"`
}

// settings are the run's propose settings: o's where the command line
// set them, else the catalogue's propose block (c, nil when it has
// none).
type settings struct {
	hand forge.Handover
	// block is the catalogue's propose block, for its schedule.
	block *catalogue.Propose
}

// settings reads the propose settings of catalogue c, with o's over
// them, and checks that the way the request is opened can carry them.
func (r *run) settings(c *catalogue.Catalogue) error {
	var s settings
	if c != nil && c.Propose != nil {
		p := c.Propose
		s.block = p
		s.hand = forge.Handover{Labels: p.Labels, Reviewers: p.Reviewers, Assignees: p.Assignees, Automerge: p.Automerge}
	}
	if r.o.Labels != nil {
		s.hand.Labels = r.o.Labels
	}
	if r.o.Reviewers != nil {
		s.hand.Reviewers = r.o.Reviewers
	}
	if r.o.Assignees != nil {
		s.hand.Assignees = r.o.Assignees
	}
	if r.o.Automerge != nil {
		s.hand.Automerge = *r.o.Automerge
	}
	for _, l := range []*[]string{&s.hand.Labels, &s.hand.Reviewers, &s.hand.Assignees} {
		*l = slices.Compact(slices.Sorted(slices.Values(*l)))
	}
	if r.d.Requests == nil && !r.o.DryRun {
		if err := r.o.Convention.Carries(s.hand); err != nil {
			return fmt.Errorf("%w: %w", ErrBadInput, err)
		}
	}
	r.set = s
	return nil
}

// handover is what p's request is handed to: the settings, with
// automerge held back from a request a person must merge.
func (r *run) handover(p *Proposal) Handover {
	h := Handover{Labels: nonNilStrings(r.set.hand.Labels), Reviewers: nonNilStrings(r.set.hand.Reviewers), Assignees: nonNilStrings(r.set.hand.Assignees)}
	if !r.set.hand.Automerge {
		return h
	}
	var downgrades []string
	for _, m := range p.Modules {
		if m.AllowDowngrade != "" {
			downgrades = append(downgrades, m.Name)
		}
	}
	var refused []string
	for _, x := range p.Refused {
		refused = append(refused, x.Module)
	}
	switch {
	case len(downgrades) > 0:
		h.Held = fmt.Sprintf("it holds a downgrade the catalogue accepts (%s), and a downgrade needs a person", strings.Join(downgrades, ", "))
	case len(refused) > 0:
		h.Held = fmt.Sprintf("pin refused %s, left as the base has it, and a refusal needs a person", strings.Join(refused, ", "))
	case p.Promotion != nil:
		h.Held = "a promotion's request is its approval, given by a person"
	default:
		h.Automerge = true
	}
	return h
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// handoverMarkdown is the body's section on automerge, "" when it was
// not asked for.
func handoverMarkdown(p *Proposal) string {
	switch {
	case p.Handover.Automerge:
		return "\n### Automerge\n\nOn: the forge merges this request once its required checks pass. pin never merges it itself, and takes automerge back from a request that comes to hold a refusal or an accepted downgrade.\n"
	case p.Handover.Held != "":
		return "\n### Automerge\n\nOff: " + oneLineText(p.Handover.Held) + ". A person merges this request.\n"
	}
	return ""
}

// Schedule is when a run outside the catalogue's schedule may push.
type Schedule struct {
	// Windows are the schedule's cron expressions, with their time zone.
	Windows string
	// Next is when the next window opens (zero: never, as cron reads it).
	Next time.Time
}

// outside reports whether now is outside the schedule, and when the
// next window opens.
func (r *run) outside() *Schedule {
	open, next := r.set.block.Window(r.o.Now)
	if open {
		return nil
	}
	return &Schedule{Windows: r.set.block.String(), Next: next}
}

// hand keeps request q (just opened when opened, its body just changed
// when updated) in step with h: adds the labels and assignees it lacks,
// asks the reviewers when the request is new or changed, and sets
// automerge when it is off. It reports whether it changed anything.
func (r *run) hand(ctx context.Context, q forge.Request, h Handover, auto, opened, updated bool) (bool, error) {
	add := forge.Handover{Labels: missing(h.Labels, q.Labels), Assignees: missing(h.Assignees, q.Assignees)}
	if opened || updated {
		add.Reviewers = h.Reviewers
	}
	changed := false
	if len(add.Labels)+len(add.Assignees)+len(add.Reviewers) > 0 {
		if err := r.d.Requests.Hand(ctx, q, add); err != nil {
			return false, fmt.Errorf("handing request %d over: %w", q.Number, err)
		}
		changed = true
	}
	if h.Automerge && !auto {
		if err := r.d.Requests.SetAutomerge(ctx, q.Number, true); err != nil {
			return false, fmt.Errorf("setting request %d to merge once its checks pass: %w", q.Number, err)
		}
		changed = true
	}
	return changed, nil
}

// missing are the names of want that have lacks.
func missing(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			out = append(out, w)
		}
	}
	return out
}
