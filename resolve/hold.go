package resolve

import (
	"context"
	"fmt"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// held keeps a previous entry that holds its image (lock.Module.Hold: a
// manual pick "pin promote --pick" recorded): the held image is locked as
// an exact pin at its digest would be, whatever the policy, the pin or
// upstream offer, until the hold is lifted ("pin promote --lift"). A hold
// is part of the entry it was placed on and follows it wherever its floor
// follows (holder: the module's own entry, or one it takes over: a
// rename, a removal and return, a host moved in). A hold never locks
// below a floor: where a container runs something newer than the held
// image, or something that cannot be ordered against it, the module is
// refused (a hold pins what was picked, it does not take a host back),
// unless the catalogue states the downgrade (allow_downgrade), exactly as
// for an exact pin. The entry is kept as it was, provenance and hold
// included, with this run's observations.
func (dc *decider) held(ctx context.Context, holder *lock.Module) (*settled, choice, *Refusal, error) {
	s, err := dc.settle(ctx)
	if err != nil {
		return s, choice{}, nil, err
	}
	var f *Floor
	for i := range s.floors {
		if s.floors[i].entry() && s.floors[i].Entry == holder {
			f = &s.floors[i]
			break
		}
	}
	if f == nil {
		return s, choice{}, nil, fmt.Errorf("module %q: the held entry is not among the floors", dc.m.Name)
	}
	if f.unread() {
		// Its lines alone cannot be kept (settle reads the content).
		return s, choice{}, nil, lockUnreadRefusal(dc.m, dc.opts, *f, holder)
	}
	img := f.Image
	what := fmt.Sprintf("the held image (hold %q)", holder.Hold)
	dg, err := s.checkFloors(ctx, img, what)
	if r, ok := err.(*Refusal); ok {
		r.fix = holdFix(dc.m.Name, r.fix)
		return s, choice{}, nil, r
	}
	if err != nil {
		return s, choice{}, nil, err
	}
	reason, rule := s.describeWin(ctx, fmt.Sprintf("held at %s by a manual pick (%q), kept until it is lifted", dc.label(img), holder.Hold), img, dg)
	c := choice{keep: true, reason: reason, rule: rule}
	if holder != dc.old {
		c.from = holder
	}
	return s, c, dg, nil
}

// holder is the entry whose hold binds module m's decision: its own
// previous entry's, else that of the first entry it takes over that holds
// one (a hold follows its floor); nil when none holds.
func holder(old *lock.Module, takenOver []*lock.Module) *lock.Module {
	if old != nil && old.Hold != "" {
		return old
	}
	for _, e := range takenOver {
		if e.Hold != "" {
			return e
		}
	}
	return nil
}

// HeldBy is the entry whose hold binds module m under in (nil when none
// does): m's own previous entry's hold, else that of an entry m takes
// over (a rename, a removal and return, a host moved in). Resolve keeps
// it, and a promotion that names no build skips it, as it skips a hold
// on the module's own entry.
func HeldBy(in Input, m *catalogue.Module) *lock.Module {
	obs, _ := observe.Observations(m, in.Observed)
	return holder(in.Old.Module(m.Name), in.heirIndex().takenOver(m, obs))
}

// holdFix is what to do about a held image below what runs: lift the
// hold, or state the downgrade the hold would be.
func holdFix(module, fix string) string {
	s := fmt.Sprintf("lift the hold (pin promote --lift FROM TO %s) so that the module follows its policy again", module)
	if fix != "" {
		s += "; or " + fix
	}
	return s
}

// OrderOptions are module m's ordering settings as Resolve orders by them
// (its versioning, variants, platform; now bounds plausible build dates):
// for callers that order images of a module the same way (package
// promote).
func OrderOptions(m *catalogue.Module, now time.Time) order.Options { return orderOptions(m, now) }

// LockedVersion renders img's version as a lock entry records it: the
// version its tag and label agree on, "" when it has none or they
// conflict.
func LockedVersion(opts order.Options, img image.Image) string { return versionOf(opts, img) }
