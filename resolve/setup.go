package resolve

import (
	"context"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// setUp is what every judgement of one module starts from, gathered once
// and the same way for each (decide, Judge, PlanCutover, checkModule):
// its ordering options and registry, the containers it takes over on the
// hosts read (described through the registry where a host names an image
// by digest alone), its previous entry, the entries of other modules it
// takes over, and the account of tag claims, the containers' tags vouched
// for by their hosts. A host of the module that failed, or a registry
// that failed to describe a container, is kept as an error for the caller
// to weigh: without every host, the floors are not known.
type setUp struct {
	m       *catalogue.Module
	opts    order.Options
	reg     Registry
	obs     []observe.Observation
	missing []string
	old     *lock.Module
	idx     *heirs
	heirs   []*lock.Module
	tags    *claims
	// hostErrs are the module's hosts that could not be read;
	// enrichErr a registry that failed to describe a container.
	hostErrs  []error
	enrichErr error
}

// look sets module m up under in. tags, when not nil, is the account of
// tag claims a caller already keeps for m; nil starts one.
func look(ctx context.Context, in Input, m *catalogue.Module, tags *claims) *setUp {
	u := &setUp{m: m, opts: orderOptions(m, in.Now), reg: in.registry(m), old: in.Old.Module(m.Name), tags: tags}
	u.hostErrs = observe.HostErrors(m, in.Observed)
	u.obs, u.missing = observe.Observations(m, in.Observed)
	u.enrichErr = observe.Enrich(ctx, u.reg, m, u.obs)
	u.idx = in.heirIndex()
	u.heirs = u.idx.takenOver(m, u.obs)
	if u.tags == nil {
		u.tags = newClaims(u.reg, m)
		u.tags.vouchHosts(u.obs)
	}
	return u
}
