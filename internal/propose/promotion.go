package propose

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/promote"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Promote is a promotion proposed (pin propose --environment TO
// --promote FROM): TO's lock takes the builds FROM runs, as pin promote
// decides them, and the reviewed request is the approval.
type Promote struct {
	From, To string
}

// Promoter decides a promotion in the work tree of the base: it reads
// the catalogue and TO's lock at the paths given, the hosts of both
// environments (with their containers' starts), and decides with package
// promote, as pin promote does. It returns TO's share of the inputs (its
// view of the catalogue, its lock, its hosts: what the exports and the
// cutover gate read) and what promote decided.
type Promoter func(ctx context.Context, catalogue, lock string) (*source.Inputs, *promote.Result, error)

// Promotion is what a proposal promotes: its JSON is a proposal's
// "promotion" (docs/schema/propose.schema.json).
type Promotion struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Release is the unit's hash over its modules' digests (as each
	// entry's promoted block records it).
	Release string `json:"release"`
	// Skipped are modules the promotion leaves as they are: held in TO
	// by a manual pick, or run by no host of FROM.
	Skipped []Skipped `json:"skipped"`
}

// Skipped is a module a promotion leaves as it is, and why.
type Skipped struct {
	Module string `json:"module"`
	Kind   string `json:"kind"`
	Why    string `json:"why"`
}

// Promoted is where a promoted entry came from (the lock's promoted
// block).
type Promoted struct {
	From  string   `json:"from"`
	Hosts []string `json:"hosts"`
	// Since is when the build first ran on those hosts (RFC 3339), or "".
	Since   string `json:"since"`
	Release string `json:"release"`
	// Health is what the engines reported of each container of the
	// module on those hosts (the lock's health); absent when none was.
	Health []string `json:"health,omitempty"`
}

// valid checks a promotion's options: it is one unit, so it is not split
// or grouped, and it needs its promoter.
func (p *Promote) valid(o Options, d Deps) error {
	if p == nil {
		return nil
	}
	switch {
	case p.From == "" || p.To == "" || p.From == p.To:
		return fmt.Errorf("%w: a promotion names two environments, FROM and TO", ErrBadInput)
	case o.Split == SplitModule || len(o.Groups) > 0:
		return fmt.Errorf("%w: --split and --group cut a promotion into parts, but modules promoted together are one unit (one release): to promote a module on its own, name it (pin propose --environment %s --promote %s MODULE)", ErrBadInput, p.To, p.From)
	case d.Promote == nil:
		return fmt.Errorf("%w: a promotion needs its promoter (Deps.Promote)", ErrBadInput)
	}
	return nil
}

// group is the promotion's group: its branch is BranchPrefix + group.
func (p *Promote) group() string {
	return "promote-" + branchSafe(p.From) + "-" + branchSafe(p.To)
}

// promotion is a run that proposes a promotion: one unit, all or
// nothing. A module refused (by promote, or by the cutover gate) leaves
// the unit unproposed: nothing is committed or pushed.
func (r *run) promotion(ctx context.Context) error {
	in, pr, err := r.d.Promote(ctx, filepath.Join(r.wt, r.paths.catalogue), filepath.Join(r.wt, r.paths.lock))
	if err != nil {
		return err
	}
	exports, err := r.exports(in.Catalogue)
	if err != nil {
		return err
	}
	if err := r.settings(in.Catalogue); err != nil {
		return err
	}
	if hs := hostErrors(in.Observed); len(hs) > 0 {
		return fmt.Errorf("%w: host %s: %w; the floors of %s are not known, nothing proposed", ErrRemote, hs[0], in.Observed.Errors[hs[0]], r.o.Promote.To)
	}
	for _, x := range pr.Refusals {
		r.res.Refused = append(r.res.Refused, Refused{Module: x.Module, Kind: string(x.Kind), Message: r.inRepo(x.Error())})
	}
	if pr.Refused() {
		return nil
	}
	members := map[string]bool{}
	for _, e := range pr.Entries {
		if e.Changed() {
			members[e.Module] = true
		}
	}
	if len(members) == 0 {
		return nil
	}
	rin := in.Input(r.o.Now)
	lk := pr.Lock()
	dr, bad, err := r.draft(ctx, rin, in, exports, r.o.Promote.group(), members, lk, nil)
	if err != nil {
		return err
	}
	if len(dr.down) > 0 {
		// One unit: a reference it would make older keeps every one out.
		for _, name := range slices.Sorted(maps.Keys(dr.down)) {
			r.refuseWrite(dr.down[name])
		}
		return nil
	}
	if len(bad) > 0 {
		// One unit: a member the gate refuses keeps every one out.
		for _, name := range slices.Sorted(maps.Keys(bad)) {
			if !members[name] {
				return &ExportGateError{Module: name, Cutover: bad[name][0]}
			}
			r.res.Refused = append(r.res.Refused, Refused{Module: name, Kind: "cutover", Message: cutoverRefusal(name, bad[name])})
		}
		return nil
	}
	var mods []Module
	for _, e := range pr.Entries {
		if members[e.Module] {
			mods = append(mods, promotedChange(e, dr.cuts[e.Module]))
		}
	}
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Name, b.Name) })
	pm := &Promotion{From: r.o.Promote.From, To: r.o.Promote.To, Release: pr.Release, Skipped: []Skipped{}}
	for _, s := range pr.Skipped {
		pm.Skipped = append(pm.Skipped, Skipped{Module: s.Module, Kind: string(s.Kind), Why: r.inRepo(s.Why)})
	}
	p, err := r.commit(ctx, in, dr, mods, pm)
	if err != nil || p == nil {
		return err
	}
	r.res.Proposals = append(r.res.Proposals, p)
	return r.deliver(ctx, p)
}

// promotedChange describes a promoted entry, with the gate's cutovers of
// TO's containers.
func promotedChange(e promote.Entry, cuts []resolve.Cutover) Module {
	n := e.New
	m := Module{Name: n.Name, Policy: string(n.Policy), From: imageOf(e.Old), To: imageOf(n), Won: string(n.Source), Rule: string(n.Rule), Why: n.Reason,
		Running: []Running{}, Floors: []Floor{}, Cutover: []Cutover{}, TakesOver: []string{}}
	for _, o := range n.Observed {
		m.Running = append(m.Running, Running{Host: o.Host, Container: o.Container, Tag: o.Tag, Version: o.Version, Digest: o.Digest, Created: resolve.Created(o.Created)})
	}
	for _, c := range cuts {
		m.Cutover = append(m.Cutover, Cutover{Host: c.Observation.Host, Container: c.Observation.Container, Verdict: string(c.Verdict), Rule: string(c.Order.Rule)})
	}
	if n.Verified != "" {
		m.Signature = &Signature{Method: string(n.Verified), Signer: n.Signer, Digest: n.Signature}
	}
	if p := n.Promoted; p != nil {
		m.Promoted = &Promoted{From: p.From, Hosts: slices.Clone(p.Hosts), Since: lock.FormatTime(p.Since), Release: p.Release, Health: slices.Clone(p.Health)}
		if m.Promoted.Hosts == nil {
			m.Promoted.Hosts = []string{}
		}
	}
	m.Hold = n.Hold
	switch {
	case slices.ContainsFunc(cuts, func(c resolve.Cutover) bool { return c.Verdict == resolve.VerdictUpgrade }):
		m.Verdict = "upgrade"
	case e.Old == nil:
		m.Verdict = "add"
	case e.Old.Digest != n.Digest && len(cuts) == 0:
		m.Verdict = "upgrade"
	default:
		m.Verdict = "kept"
	}
	return m
}

// promotionTitle is a promotion's one-line summary.
func promotionTitle(p *Proposal) string {
	pm := p.Promotion
	if len(p.Modules) == 1 {
		return fmt.Sprintf("pin: promote %s %s from %s to %s", p.Modules[0].Name, p.Modules[0].To.Label(), pm.From, pm.To)
	}
	names := make([]string, 0, len(p.Modules))
	for _, m := range p.Modules {
		names = append(names, m.Name)
	}
	if len(names) > 3 {
		return fmt.Sprintf("pin: promote %s and %d more modules from %s to %s", strings.Join(names[:2], ", "), len(names)-2, pm.From, pm.To)
	}
	return fmt.Sprintf("pin: promote %s and %s from %s to %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], pm.From, pm.To)
}

// promotionMarkdown is a promotion's body for a reviewer, without the
// marker: each module from → to, the hosts of FROM that ran the build
// and since when, the release, and what was left out.
func promotionMarkdown(p *Proposal) string {
	pm := p.Promotion
	var b strings.Builder
	fmt.Fprintf(&b, "pin promotes %s from %s to %s: for each, the build running on every host of %s that runs it, as `pin promote %s %s` writes it, checked against the hosts of %s with the cutover gate of `pin plan`. Merging this request is the approval.\n\n",
		moduleWord(len(p.Modules)), esc(pm.From), esc(pm.To), esc(pm.From), esc(pm.From), esc(pm.To), esc(pm.To))
	fmt.Fprintf(&b, "Release `%s`: the modules promoted together, one unit.\n\n", pm.Release)
	fmt.Fprintf(&b, "| module | from → to | runs in %s | since | verdict | signature |\n|---|---|---|---|---|---|\n", esc(pm.From))
	for _, m := range p.Modules {
		hosts, since := "—", "—"
		if m.Promoted != nil {
			if len(m.Promoted.Hosts) > 0 {
				hosts = strings.Join(m.Promoted.Hosts, ", ")
			}
			if m.Promoted.Since != "" {
				since = m.Promoted.Since
			}
		}
		sig := "—"
		if m.Signature != nil {
			sig = esc(m.Signature.Method + ": " + m.Signature.Signer)
		}
		fmt.Fprintf(&b, "| %s | %s → %s | %s | %s | %s | %s |\n", esc(m.Name), esc(cell(m.From)), esc(cell(m.To)), esc(hosts), since, m.Verdict, sig)
	}
	b.WriteString("\n### Why\n\n")
	for _, m := range p.Modules {
		fmt.Fprintf(&b, "- **%s**: %s\n", esc(m.Name), oneLineText(m.Why))
		if m.Hold != "" {
			fmt.Fprintf(&b, "  - held: %s (pin resolve and later promotions keep it until pin promote --lift)\n", oneLineText(m.Hold))
		}
		if len(m.Cutover) > 0 {
			var cs []string
			for _, c := range m.Cutover {
				cs = append(cs, c.Host+"/"+c.Container+" "+c.Verdict)
			}
			fmt.Fprintf(&b, "  - deploying it: %s\n", oneLineText(strings.Join(cs, ", ")))
		}
	}
	if len(pm.Skipped) > 0 {
		b.WriteString("\n### Not promoted\n\n")
		for _, s := range pm.Skipped {
			fmt.Fprintf(&b, "- **%s** (%s): %s\n", esc(s.Module), s.Kind, oneLineText(s.Why))
		}
	}
	b.WriteString("\n### Files\n\n")
	for _, f := range p.Files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	return b.String()
}
