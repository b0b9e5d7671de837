package resolve

import "github.com/pin-tool/pin/lock"

// Outcome is what became of one module's decision: exactly one of the
// kinds below, with the value that kind carries. A Decision holds one
// Outcome, so it can never say two things at once (a refusal and an
// entry, a failure and a kept entry).
type Outcome int

const (
	// OutcomeSkipped: lock --from-host, for a module that runs nothing
	// on the host and has no entry yet: no entry, nothing wrong. It is
	// the zero Outcome.
	OutcomeSkipped Outcome = iota
	// OutcomeLocked: a new entry for the lock (Decision.New).
	OutcomeLocked
	// OutcomeKept: the previous lock won; Decision.New is that entry
	// kept with this run's observations and reason, Decision.Kept the
	// entry it came from (the module's own, or one taken over).
	OutcomeKept
	// OutcomeDowngrade: an entry below a floor, accepted by
	// allow_downgrade; Decision.Downgrade says which floor, Decision.New
	// is the entry (Decision.Kept, when the accepted image is the one
	// locked before, the entry it came from).
	OutcomeDowngrade
	// OutcomeRefused: no entry; Decision.Refusal says why.
	OutcomeRefused
	// OutcomeFailed: no entry; a host or registry failed, or the pin or
	// the lock's entry disagrees with its content (Decision.Err).
	OutcomeFailed
	// OutcomeUnselected: Record.Only did not name the module; New is Old,
	// the same entry, and nothing was asked.
	OutcomeUnselected
)

// outcome is a Decision's one outcome and what it carries; the
// constructors below are the only way to make one.
type outcome struct {
	kind Outcome
	// entry is the new lock's entry: locked, kept, downgrade, unselected.
	entry *lock.Module
	// from is the previous entry that won: kept, and a downgrade that
	// accepted the image locked before.
	from *lock.Module
	// refusal: refused, or the floor a downgrade accepted went below.
	refusal *Refusal
	err     error
}

func locked(e *lock.Module) outcome { return outcome{kind: OutcomeLocked, entry: e} }

func kept(e, from *lock.Module) outcome { return outcome{kind: OutcomeKept, entry: e, from: from} }

func downgraded(e, from *lock.Module, dg *Refusal) outcome {
	return outcome{kind: OutcomeDowngrade, entry: e, from: from, refusal: dg}
}

func refused(r *Refusal) outcome { return outcome{kind: OutcomeRefused, refusal: r} }

func failed(err error) outcome { return outcome{kind: OutcomeFailed, err: err} }

func skipped() outcome { return outcome{kind: OutcomeSkipped} }

func unselected(old *lock.Module) outcome { return outcome{kind: OutcomeUnselected, entry: old} }

// Outcome is what became of the decision.
func (d *Decision) Outcome() Outcome { return d.outcome.kind }

// New is the entry for the new lock; nil when refused, failed or skipped.
func (d *Decision) New() *lock.Module { return d.outcome.entry }

// Refusal is why the decision was refused (a downgrade, or an order that
// cannot be decided); nil unless OutcomeRefused.
func (d *Decision) Refusal() *Refusal {
	if d.outcome.kind != OutcomeRefused {
		return nil
	}
	return d.outcome.refusal
}

// Downgrade is the downgrade allow_downgrade accepted; nil unless
// OutcomeDowngrade.
func (d *Decision) Downgrade() *Refusal {
	if d.outcome.kind != OutcomeDowngrade {
		return nil
	}
	return d.outcome.refusal
}

// Kept is the previous entry that won, the module's own (Old) or, taken
// over, another module's: New is that entry kept, and New.Source says
// what won when the entry was written, not in this run. Nil when this
// run's choice won.
func (d *Decision) Kept() *lock.Module { return d.outcome.from }

// Err is why the decision failed: a host or registry failed for this
// module, or the catalogue's pin or the lock's entry disagrees with its
// content. Nil unless OutcomeFailed.
func (d *Decision) Err() error { return d.outcome.err }

// Unselected reports that Record.Only did not name the module: New is Old,
// the same entry, and nothing was asked.
func (d *Decision) Unselected() bool { return d.outcome.kind == OutcomeUnselected }
