package resolve

import (
	"context"
	"fmt"
	"time"

	"github.com/pin-tool/pin/internal/observe"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// Verdicts of a cutover preview.
const (
	VerdictUpgrade   = "upgrade"
	VerdictSame      = "same"
	VerdictDowngrade = "downgrade"
	VerdictUnknown   = "unknown"
	VerdictUnlocked  = "unlocked"
)

// Cutover is, for one container a module takes over, what runs now, what
// the lock would start instead, and whether that is an upgrade.
type Cutover struct {
	Module      string
	Observation observe.Observation
	Locked      *lock.Module
	Verdict     string
	Order       order.Result
}

// Safe reports whether replacing the container is not a downgrade.
func (c Cutover) Safe() bool { return c.Verdict == VerdictUpgrade || c.Verdict == VerdictSame }

// PlanCutover previews taking over the containers of one host: for every
// container there that a module takes over, the lock's image against what
// runs. Stopped containers are previewed too: starting an older image over
// a stopped one's data is still a downgrade.
//
// Images a host names only by digest (Kubernetes) are described through
// registry first (see observe.Enrich); registry may be nil, and a failure to
// describe is returned.
func PlanCutover(ctx context.Context, c *catalogue.Catalogue, l *lock.Lock, seen observe.Observed, hostName string, registry func(repo string) Registry, now time.Time) ([]Cutover, error) {
	var out []Cutover
	for _, m := range c.Modules {
		obs, _ := observe.Observations(m, seen)
		var reg Registry
		if registry != nil {
			reg = registry(m.Image)
		}
		if err := observe.Enrich(ctx, reg, m, obs); err != nil {
			return out, fmt.Errorf("module %q: %w", m.Name, err)
		}
		for _, o := range obs {
			if o.Host != hostName {
				continue
			}
			cut := Cutover{Module: m.Name, Observation: o, Locked: l.Module(m.Name), Verdict: VerdictUnlocked}
			if cut.Locked != nil {
				cut.Order = order.Compare(LockedImage(cut.Locked), o.Image, orderOptions(m, now))
				switch cut.Order.Cmp {
				case order.Newer:
					cut.Verdict = VerdictUpgrade
				case order.Equal:
					cut.Verdict = VerdictSame
				case order.Older:
					cut.Verdict = VerdictDowngrade
				default:
					cut.Verdict = VerdictUnknown
				}
			}
			out = append(out, cut)
		}
	}
	return out, nil
}

// orderOptions are the ordering settings of a module.
func orderOptions(m *catalogue.Module, now time.Time) order.Options {
	return order.Options{Scheme: m.Versioning, AnyVariant: m.AnyVariant, Now: now}
}
