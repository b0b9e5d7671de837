package resolve

import (
	"slices"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// Plan is the outcome of resolving a catalogue: one Decision per module, in
// catalogue order, and what becomes of the lock entries of modules no
// longer in the catalogue.
type Plan struct {
	Decisions []*Decision
	// Retired are the previous entries of modules no longer in the
	// catalogue that no module took over: they stay in the lock as
	// retired entries (lock.Lock.Retired), floors for whatever module
	// takes over what they were held against. By name.
	Retired []Retired
	// TakenOver are the previous entries of modules no longer in the
	// catalogue (retired ones, or the entry of a module that left the
	// catalogue in this very edit) that a module decided by this run took
	// over: they leave the lock, their floor now that module's. By name.
	TakenOver []TakenOver
	// Kept are the entries of modules no longer in the catalogue that stay
	// as module entries because Record.Only named other modules.
	Kept []*lock.Module
	// Hosts are the catalogue hosts the new lock is held against (see
	// lock.Lock.Hosts).
	Hosts []string

	retired map[*lock.Module]bool
	// elsewhere: the entries of other locks this run read, by lock file.
	elsewhere map[*lock.Module]string
}

// Retired is an entry that stays in the lock as a retired one.
type Retired struct {
	Entry *lock.Module
	// Now: its module left the catalogue since the previous lock (the
	// entry was a module entry there); else it was retired already.
	Now bool
}

// TakenOver is an entry of a module no longer in the catalogue that
// modules decided by this run took over (see Decision.TakenOver).
type TakenOver struct {
	Entry *lock.Module
	// Retired: it was a retired entry in the previous lock; else the
	// entry of a module that left the catalogue since.
	Retired bool
	// By names the modules that took it over.
	By []string
}

// Decision is what resolving decided for one module.
type Decision struct {
	Module *catalogue.Module
	// Old is the module's entry in the previous lock, nil if none.
	Old *lock.Module
	// outcome is the decision's one outcome (Outcome, New, Kept,
	// Downgrade, Refusal, Err, Unselected read it).
	outcome outcome
	// Observations are the containers the module takes over, whatever
	// their state.
	Observations []observe.Observation
	// Floors are what New must not go below (see IsFloor and floors).
	Floors []Floor
	// Missing lists runs_on containers not found on their host.
	Missing []string
	// Skew is true when the module's containers run different images.
	Skew bool
	// Repository is set when New names another repository than the
	// module's image: the catalogue's image moved, and the previous
	// entry, which won, is kept as it was locked.
	Repository *RepositoryKept
	// Verification is what the module's verify policy found (skipped
	// candidates, unverified floors); nil without a policy.
	Verification *Verification
	// TakenOver are the previous lock's entries of other modules (or
	// retired ones) whose floors this module takes over (see takeover.go),
	// by name: each was a floor of the decision.
	TakenOver []*lock.Module
	// Skipped are the upstream candidates newer than the one weighed that
	// track-upstream did not lock, newest first: their tag and version
	// label conflict, so their version is unknown.
	Skipped []Skipped
}

// weighed is what a module's decision weighed on the way, beside the
// Decision: what Outdated reports without asking again, and Resolve lets
// go. decide returns it.
type weighed struct {
	// candidate is the upstream image track-upstream weighed, nil if none;
	// tags the tag list it read, when listed.
	candidate *image.Image
	tags      []string
	listed    bool
	// skipped are the newer upstream tags track-upstream did not lock
	// (Decision.Skipped).
	skipped []Skipped
	// unread: the pin's content was out of reach offline, and only its
	// text was weighed.
	unread bool
	// lockUnread: the previous entry's content could not be read, and
	// Decision.Err says why.
	lockUnread bool
}

// Change classifies the decision against the old lock.
func (d *Decision) Change() Change {
	switch {
	case d.Err() != nil:
		return ChangeError
	case d.Refusal() != nil:
		return ChangeRefused
	case d.New() == nil:
		return ChangeSkipped
	case d.Old == nil:
		return ChangeAdd
	case d.Old.Equal(d.New()):
		return ChangeNone
	}
	return ChangeUpdate
}

// Change is how a module's lock entry changes.
type Change string

const (
	ChangeNone   Change = "unchanged"
	ChangeAdd    Change = "add"
	ChangeUpdate Change = "update"
	// ChangeRemove: an entry leaves the lock. pin writes it no more: the
	// entry of a module that left the catalogue is retired (ChangeRetire),
	// and leaves the lock only when a module takes it over
	// (ChangeTakenOver).
	ChangeRemove Change = "remove"
	// ChangeRetire: a module left the catalogue; its entry stays in the
	// lock as a retired entry, a floor. ChangeRetired: a retired entry
	// stays. ChangeTakenOver: a module took the entry of one that left
	// the catalogue over; the entry leaves the lock.
	ChangeRetire    Change = "retire"
	ChangeRetired   Change = "retired"
	ChangeTakenOver Change = "taken-over"
	ChangeRefused   Change = "refused"
	ChangeError     Change = "error"
	// ChangeSkipped: lock --from-host, for a module that runs nothing on
	// the host and has no entry yet.
	ChangeSkipped Change = "skipped"
)

// WasRetired reports whether e is a retired entry of the previous lock (of
// a module that left the catalogue before this run).
func (p *Plan) WasRetired(e *lock.Module) bool { return p.retired[e] }

// Elsewhere is the lock file entry e is in when it is another lock's
// (Input.Record.Elsewhere), else "".
func (p *Plan) Elsewhere(e *lock.Module) string { return p.elsewhere[e] }

// Refused reports whether any module was refused.
func (p *Plan) Refused() bool {
	return slices.ContainsFunc(p.Decisions, func(d *Decision) bool { return d.Refusal() != nil })
}

// Failed reports whether any module's host, registry, pin or lock entry
// failed.
func (p *Plan) Failed() bool {
	return slices.ContainsFunc(p.Decisions, func(d *Decision) bool { return d.Err() != nil })
}

// Lock is the new lock. It is complete only when the plan has neither
// refusals nor failures; callers must not write it otherwise.
func (p *Plan) Lock() *lock.Lock {
	l := &lock.Lock{Hosts: p.Hosts}
	for _, d := range p.Decisions {
		if d.New() != nil {
			l.Modules = append(l.Modules, d.New())
		}
	}
	l.Modules = append(l.Modules, p.Kept...)
	for _, r := range p.Retired {
		l.Retired = append(l.Retired, r.Entry)
	}
	return l
}

// Created renders a date for output, or "": as the lock writes it
// (lock.FormatTime), so that a report and the lock agree to the second.
func Created(t time.Time) string { return lock.FormatTime(t) }

// orderOptions are the ordering settings of a module.
func orderOptions(m *catalogue.Module, now time.Time) order.Options {
	return order.Options{Scheme: m.Versioning, AnyVariant: m.AnyVariant, Now: now, Platform: m.Platform()}
}

// RepositoryKept says why a new entry names another repository than its
// module's image, and what to write to move it.
type RepositoryKept struct {
	// Catalogue is the module's image; Locked the repository the entry
	// names, where it was locked.
	Catalogue, Locked string
	// Why says it in words, ending with what to write or run.
	Why string
}
