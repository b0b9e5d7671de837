package resolve

import (
	"context"
	"fmt"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// Verdict is what replacing a container with the locked image would be.
type Verdict string

// Verdicts of a cutover preview.
const (
	VerdictUpgrade   Verdict = "upgrade"
	VerdictSame      Verdict = "same"
	VerdictDowngrade Verdict = "downgrade"
	VerdictUnknown   Verdict = "unknown"
	VerdictUnlocked  Verdict = "unlocked"
	// VerdictMissing: a container a module takes over on the host (its
	// runs_on there) is not found, and it ran there before (the lock
	// recorded the module on the host) or a container no module takes
	// over runs the module's repository there (recreated under another
	// name): the gate cannot see what it guards. Not safe.
	VerdictMissing Verdict = "missing"
	// VerdictNew: the same, where nothing of the module ran on the host as
	// far as the lock and the host say: the lock would start it for the
	// first time. Safe, and said. (With no lock entry, VerdictUnlocked.)
	VerdictNew Verdict = "new"
)

// Cutover is, for one container a module takes over, what runs now, what
// the lock would start instead, and whether that is an upgrade.
type Cutover struct {
	Module      string
	Observation observe.Observation
	Locked      *lock.Module
	Verdict     Verdict
	Order       order.Result
	// Missing is set for a runs_on target not found on the host
	// (VerdictMissing, VerdictNew, or VerdictUnlocked without an entry):
	// what was expected, and what to do.
	Missing *Missing
}

// verdictOf is the one mapping of an order (the new image against what
// runs) to a verdict: newer an upgrade, equal the same, older a
// downgrade, anything else unknown, which is never safe.
func verdictOf(res order.Result) Verdict {
	switch res.Cmp {
	case order.Newer:
		return VerdictUpgrade
	case order.Equal:
		return VerdictSame
	case order.Older:
		return VerdictDowngrade
	}
	return VerdictUnknown
}

// Safe reports whether replacing the container is not a downgrade: an
// upgrade, the same image, or a first start where nothing of the module
// ran.
func (c Cutover) Safe() bool {
	return c.Verdict == VerdictUpgrade || c.Verdict == VerdictSame || c.Verdict == VerdictNew
}

// PlanCutover previews taking over the containers of host in.Record.Host: for
// every container there that a module takes over, the locked image against
// what runs. Stopped containers are previewed too: starting an older image
// over a stopped one's data is still a downgrade.
//
// The locked image is judged by what its digest names (the digest the
// deploy would pull), its lines checked against that content: a mismatch
// is a *LockMismatchError. Images a host names only by digest (Kubernetes)
// are described through the registry first (observe.Enrich). A registry
// that fails is returned as an error.
func PlanCutover(ctx context.Context, in Input) ([]Cutover, error) {
	var out []Cutover
	taken := takenOn(in)
	for _, m := range in.Catalogue.Modules {
		u := look(ctx, in, m, nil)
		obs, missing, reg, opts, locked, tags := u.obs, u.missing, u.reg, u.opts, u.old, u.tags
		if u.enrichErr != nil {
			return out, fmt.Errorf("module %q: %w", m.Name, u.enrichErr)
		}
		var lockedImg *image.Image
		lockedState := contentOffline
		memo := map[string]image.Image{}
		lost, checked := "", false // the locked image's lost verification
		for _, o := range obs {
			if o.Host != in.Record.Host {
				continue
			}
			if !checked {
				_, line, err := lockLost(ctx, in, m, locked)
				if err != nil {
					return out, fmt.Errorf("module %q: %w", m.Name, err)
				}
				lost, checked = line, true
			}
			cut := Cutover{Module: m.Name, Observation: o, Locked: locked, Verdict: VerdictUnlocked}
			if locked != nil {
				if lockedImg == nil {
					img, read, err := lockedImage(ctx, reg, m, locked, opts, o.Image.Platform)
					if err != nil {
						return out, fmt.Errorf("module %q: %w", m.Name, err)
					}
					lockedImg, lockedState = &img, read
				}
				// The build of the container's own platform is what the
				// deploy pulls there.
				cut.Order = tags.compare(ctx, *lockedImg, o.Image, readOn(ctx, reg, m, *lockedImg, o.Image.Platform, memo), o.Image, opts)
				if (cut.Order.Cmp == order.Newer || cut.Order.Cmp == order.Unknown) && lockedState != contentRead {
					// Not older by the entry's lines alone: the deploy
					// would pull a digest nobody could read.
					cut.Order = order.Result{Cmp: order.Unknown, Rule: order.RuleNone, Detail: unreadDetail(locked, cut.Order)}
				}
				cut.Verdict = verdictOf(cut.Order)
				if lost != "" {
					cut.Verdict, cut.Order = lostCutover(lost)
				}
			}
			out = append(out, cut)
		}
		out = append(out, missingOn(in, m, locked, missing, taken)...)
	}
	return out, nil
}
