package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/pin-tool/pin/internal/promote"
	"github.com/pin-tool/pin/internal/propose"
	"github.com/pin-tool/pin/internal/source"
)

// wirePromotion makes po a promotion when --promote is given.
func (o *proposeOptions) wirePromotion(po *propose.Options) error {
	if o.Promote == "" {
		if o.Pick != "" || o.Reason != "" {
			return withCode(exitInput, errors.New("--pick and --reason pick a build for a promotion: give --promote FROM with them"))
		}
		return nil
	}
	if o.Environment == "" {
		return withCode(exitInput, fmt.Errorf("--promote %s names where the builds come from: name the environment they go to with --environment TO", o.Promote))
	}
	po.Promote = &propose.Promote{From: o.Promote, To: o.Environment}
	return nil
}

// promoter decides a proposed promotion in the work tree as pin promote
// decides one (decidePromotion): every host read with its containers'
// starts, TO's lock the work tree's. nil without --promote.
func (o *proposeOptions) promoter(s streams) propose.Promoter {
	if o.Promote == "" {
		return nil
	}
	return func(ctx context.Context, cat, lk string) (*source.Inputs, *promote.Result, error) {
		g := *o.globalOptions
		g.Catalogue, g.Lock = cat, lk
		in, err := loadStarts(ctx, &g, s, "")
		if err != nil {
			return nil, nil, err
		}
		po := &promoteOptions{globalOptions: &g, From: o.Promote, To: o.Environment, Modules: o.Modules, Pick: o.Pick, Reason: o.Reason}
		// lk is TO's own lock file, in the work tree.
		run, err := selectPromotion(in, po, lk, true)
		if err != nil {
			return nil, nil, err
		}
		res, err := decidePromotion(ctx, po, in, run)
		requestSummary(&g, s, in.Registries)
		if err != nil {
			return nil, nil, withCode(sourceCode(err), fmt.Errorf("%w; nothing proposed", err))
		}
		return run.Envs[0].Inputs, res, nil
	}
}

// writePromotionProposal adds a promotion's lines to a proposal's.
func writePromotionProposal(w io.Writer, p *propose.Proposal) {
	pm := p.Promotion
	if pm == nil {
		return
	}
	fmt.Fprintf(w, "  release  %s (%s → %s)\n", pm.Release, pm.From, pm.To)
	for _, m := range p.Modules {
		if m.Promoted != nil {
			fmt.Fprintf(w, "  ran      %s on %s of %s since %s\n", m.Name, joinAnd(m.Promoted.Hosts), pm.From, m.Promoted.Since)
		}
		if m.Hold != "" {
			fmt.Fprintf(w, "  held     %s: %s\n", m.Name, m.Hold)
		}
	}
	for _, sk := range pm.Skipped {
		fmt.Fprintf(w, "  skipped  %s: %s (%s)\n", sk.Module, sk.Why, sk.Kind)
	}
}
