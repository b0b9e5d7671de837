package resolve

import (
	"fmt"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// Plan is the outcome of resolving a catalogue: one Decision per module, by
// module name, and the lock entries of modules no longer in the catalogue.
type Plan struct {
	Decisions []*Decision
	Removed   []*lock.Module
}

// Decision is what resolving decided for one module.
type Decision struct {
	Module *catalogue.Module
	// Old is the module's entry in the previous lock, nil if none.
	Old *lock.Module
	// New is the entry for the new lock; nil when refused or failed.
	New *lock.Module
	// observe.Observations are the containers the module takes over, running or not.
	Observations []observe.Observation
	// Missing lists runs_on containers not found on their host.
	Missing []string
	// Skew is true when running containers of the module run different images.
	Skew bool
	// Rule is the ordering rule that decided New.
	Rule string
	// Refusal is set when the decision would be a downgrade or rests on an
	// order that cannot be decided.
	Refusal *Refusal
	// Downgrade is set when a downgrade was accepted by allow_downgrade.
	Downgrade *Refusal
	// Err is set when a host or registry failed for this module.
	Err error
}

// Floors are the running observations: those the lock must not go below.
func (d *Decision) Floors() []observe.Observation {
	var f []observe.Observation
	for _, o := range d.Observations {
		if o.Floor() {
			f = append(f, o)
		}
	}
	return f
}

// Change classifies the decision against the old lock.
func (d *Decision) Change() Change {
	switch {
	case d.Err != nil:
		return ChangeError
	case d.Refusal != nil:
		return ChangeRefused
	case d.New == nil:
		return ChangeSkipped
	case d.Old == nil:
		return ChangeAdd
	case string(lock.Format(&lock.Lock{Modules: []*lock.Module{d.Old}})) == string(lock.Format(&lock.Lock{Modules: []*lock.Module{d.New}})):
		return ChangeNone
	}
	return ChangeUpdate
}

// Change is how a module's lock entry changes.
type Change string

const (
	ChangeNone    Change = "unchanged"
	ChangeAdd     Change = "add"
	ChangeUpdate  Change = "update"
	ChangeRemove  Change = "remove"
	ChangeRefused Change = "refused"
	ChangeError   Change = "error"
	// ChangeSkipped: lock --from-host, for a module that runs nothing on
	// the host and has no entry yet.
	ChangeSkipped Change = "skipped"
)

// Refused reports whether any module was refused.
func (p *Plan) Refused() bool {
	for _, d := range p.Decisions {
		if d.Refusal != nil {
			return true
		}
	}
	return false
}

// Failed reports whether any module's host or registry failed.
func (p *Plan) Failed() bool {
	for _, d := range p.Decisions {
		if d.Err != nil {
			return true
		}
	}
	return false
}

// Lock is the new lock. It is complete only when the plan has neither
// refusals nor failures; callers must not write it otherwise.
func (p *Plan) Lock() *lock.Lock {
	l := &lock.Lock{}
	for _, d := range p.Decisions {
		if d.New != nil {
			l.Modules = append(l.Modules, d.New)
		}
	}
	return l
}

// Refusal kinds.
const (
	KindDowngrade = "downgrade"
	KindUnknown   = "unknown-order"
	KindNoDigest  = "no-registry-digest"
	KindNothing   = "nothing-to-lock"
)

// Refusal says why a module cannot be locked: the image that would be
// locked is older than what a host runs, or cannot be ordered against it.
type Refusal struct {
	Module string
	Kind   string
	// Chosen is the image that would be locked and What names it ("the
	// exact pin").
	Chosen      image.Image
	What        string
	Observation observe.Observation
	Order       order.Result
	opts        order.Options
	fix         string
}

// Error renders the refusal for people: the module, the host, both images
// with what was known of each, the rule and what to write to decide.
func (r *Refusal) Error() string {
	var b strings.Builder
	switch r.Kind {
	case KindDowngrade:
		fmt.Fprintf(&b, "module %q: refusing a downgrade: %s is older than what %s runs", r.Module, r.What, r.Observation.Where())
	case KindNoDigest, KindNothing:
		fmt.Fprintf(&b, "module %q: refusing: %s", r.Module, r.fix)
		return b.String()
	default:
		fmt.Fprintf(&b, "module %q: refusing: %s cannot be ordered against what %s runs", r.Module, r.What, r.Observation.Where())
	}
	fmt.Fprintf(&b, "\n  %s: %s\n    %s", r.What, r.Chosen.Ref(), r.opts.Known(r.Chosen))
	fmt.Fprintf(&b, "\n  %s runs: %s\n    %s", r.Observation.Where(), r.Observation.Image.Ref(), r.opts.Known(r.Observation.Image))
	fmt.Fprintf(&b, "\n  ordered by rule %q: %s", r.Order.Rule, r.Order.Detail)
	if r.fix != "" {
		fmt.Fprintf(&b, "\n  to decide, %s", r.fix)
	}
	return b.String()
}

// Created renders a date for output, or "".
func Created(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
