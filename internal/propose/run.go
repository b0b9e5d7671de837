package propose

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/export"
	"github.com/pin-tool/pin/internal/forge"
	"github.com/pin-tool/pin/internal/git"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// run is one pin propose, once the base is checked out in the work tree.
type run struct {
	o     Options
	d     Deps
	res   *Result
	top   string // the user's checkout
	wt    string // the work tree of the base
	paths repoPaths
	base  git.CommitInfo
	// released are the releases read, by source repository.
	released map[string]releasesRead
	// set are the propose settings, read with the catalogue.
	set settings
}

// draft is a group's change, settled before anything is committed.
type draft struct {
	group   string
	members map[string]bool
	lock    *lock.Lock
	cuts    map[string][]resolve.Cutover
	files   []export.File
	finds   []export.Finding
	// down are the modules whose exported reference the draft would
	// make name an older or unorderable image than the file names
	// (export.Downgrades, as pin export refuses them).
	down map[string]export.Downgrade
}

func (r *run) propose(ctx context.Context) error {
	if r.o.Promote != nil {
		return r.promotion(ctx)
	}
	in, err := r.d.Load(ctx, filepath.Join(r.wt, r.paths.catalogue), filepath.Join(r.wt, r.paths.lock))
	if err != nil {
		return err
	}
	if unknown := resolve.UnknownModules(in.Catalogue, r.o.Modules); len(unknown) > 0 {
		return fmt.Errorf("%w: no module %s in the catalogue", ErrBadInput, strings.Join(unknown, ", "))
	}
	for _, g := range r.o.Groups {
		if unknown := resolve.UnknownModules(in.Catalogue, g.Modules); len(unknown) > 0 {
			return fmt.Errorf("%w: group %q names %s, not in the catalogue", ErrBadInput, g.Name, strings.Join(unknown, ", "))
		}
	}
	exports, err := r.exports(in.Catalogue)
	if err != nil {
		return err
	}
	if err := r.settings(in.Catalogue); err != nil {
		return err
	}
	if hs := hostErrors(in.Observed); len(hs) > 0 {
		return fmt.Errorf("%w: host %s: %w; its floors are not known, nothing proposed", ErrRemote, hs[0], in.Observed.Errors[hs[0]])
	}
	rin := in.Input(r.o.Now)
	rin.Record.Only = r.o.Modules
	plan := resolve.Resolve(ctx, rin)
	r.res.Plan = plan
	if plan.Failed() {
		return ErrFailed
	}

	// Which module goes where: every change pin resolve would make,
	// grouped; refused modules stay as they are.
	groups := map[string]map[string]bool{}
	add := func(name string) {
		g := r.o.groupOf(name)
		if groups[g] == nil {
			groups[g] = map[string]bool{}
		}
		groups[g][name] = true
	}
	for _, d := range plan.Decisions {
		switch {
		case d.Refusal() != nil:
			r.res.Refused = append(r.res.Refused, Refused{Module: d.Module.Name, Kind: string(d.Refusal().Kind), Message: r.inRepo(d.Refusal().Error())})
		case changed(d):
			add(d.Module.Name)
		}
	}
	for _, r := range plan.Retired {
		if r.Now {
			add(r.Entry.Name)
		}
	}

	var drafts []*draft
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		dr, err := r.settle(ctx, rin, in, plan, exports, g, groups[g])
		if err != nil {
			return err
		}
		if dr != nil {
			drafts = append(drafts, dr)
		}
	}
	slices.SortFunc(r.res.Refused, func(a, b Refused) int { return strings.Compare(a.Module, b.Module) })
	for i, dr := range drafts {
		if i > 0 {
			if err := r.d.Git.Reset(ctx, r.wt, r.res.BaseCommit); err != nil {
				return err
			}
		}
		mods := planChanges(plan, dr)
		r.upstream(ctx, in, plan, mods)
		p, err := r.commit(ctx, in, dr, mods, nil)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		r.res.Proposals = append(r.res.Proposals, p)
		if err := r.deliver(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// settle decides what group g proposes: its lock and its exports,
// checked with the cutover gate on every host; members whose new entry the gate refuses
// are left out (and listed as refused). A module whose exported reference
// would name an older or unorderable image than the file names is refused
// as pin export refuses it: left out, and its references left as the
// files name them. nil when nothing is left.
func (r *run) settle(ctx context.Context, rin resolve.Input, in *source.Inputs, plan *resolve.Plan, exports Exports, g string, members map[string]bool) (*draft, error) {
	unwritten := map[string]bool{}
	for {
		dr, bad, err := r.draft(ctx, rin, in, exports, g, members, groupLock(plan, members), unwritten)
		if err != nil {
			return nil, err
		}
		if len(dr.down) > 0 {
			members = maps.Clone(members)
			for _, name := range slices.Sorted(maps.Keys(dr.down)) {
				unwritten[name] = true
				delete(members, name)
				r.refuseWrite(dr.down[name])
			}
			continue
		}
		if len(bad) == 0 {
			if len(members) == 0 {
				return nil, nil
			}
			return dr, nil
		}
		members = maps.Clone(members)
		for _, name := range slices.Sorted(maps.Keys(bad)) {
			if !members[name] {
				refused := slices.ContainsFunc(r.res.Refused, func(x Refused) bool { return x.Module == name })
				return nil, &ExportGateError{Module: name, Cutover: bad[name][0], Refused: refused}
			}
			delete(members, name)
			r.res.Refused = append(r.res.Refused, Refused{Module: name, Kind: "cutover", Message: cutoverRefusal(name, bad[name])})
		}
	}
}

// draft is group g's change to lock lk with its exports (which leave the
// references of the modules in unwritten as the files name them), and
// the gate's verdicts: the modules whose cutover it refuses (bad), among
// the members and the modules whose exported reference the commit
// writes anew.
func (r *run) draft(ctx context.Context, rin resolve.Input, in *source.Inputs, exports Exports, g string, members map[string]bool, lk *lock.Lock, unwritten map[string]bool) (*draft, map[string][]resolve.Cutover, error) {
	dr := &draft{group: g, members: members, lock: lk}
	written := *lk
	written.Modules = slices.DeleteFunc(slices.Clone(lk.Modules), func(m *lock.Module) bool { return unwritten[m.Name] })
	files, entries, finds, err := exportFiles(ctx, exports, r.wt, in.Catalogue, &written)
	if err != nil {
		return nil, nil, err
	}
	dr.files, dr.finds = files, finds
	jin := rin
	jin.Old = lk
	down, err := export.Downgrades(ctx, jin, entries)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrRemote, err)
	}
	for _, d := range down {
		if _, ok := dr.down[d.Module]; !ok {
			if dr.down == nil {
				dr.down = map[string]export.Downgrade{}
			}
			dr.down[d.Module] = d
		}
	}
	// The gate judges the members, and every module whose exported
	// reference the commit writes anew: one no export file held
	// before (as pin export judges every module it writes).
	check := maps.Clone(members)
	for _, e := range entries {
		if !slices.ContainsFunc(files, func(f export.File) bool { return strings.Contains(string(f.Old), e.New) }) {
			check[e.Module] = true
		}
	}
	cuts, bad, err := r.gate(ctx, rin, dr.lock, check)
	if err != nil {
		return nil, nil, err
	}
	dr.cuts = cuts
	return dr, bad, nil
}

func (r *run) gate(ctx context.Context, rin resolve.Input, lk *lock.Lock, check map[string]bool) (map[string][]resolve.Cutover, map[string][]resolve.Cutover, error) {
	cuts, bad, err := gate(ctx, rin, lk, check)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrRemote, err)
	}
	return cuts, bad, nil
}

// refuseWrite lists d's module as refused, in pin export's words, once.
func (r *run) refuseWrite(d export.Downgrade) {
	if slices.ContainsFunc(r.res.Refused, func(x Refused) bool { return x.Module == d.Module && x.Kind == KindWrittenNewer }) {
		return
	}
	r.res.Refused = append(r.res.Refused, Refused{Module: d.Module, Kind: KindWrittenNewer, Message: r.inRepo(d.String())})
}

// inRepo names the work tree's files as the repository's (and the work
// tree itself "."): a message in a proposal must not change with the
// temporary folder it was made in.
func (r *run) inRepo(msg string) string {
	return strings.ReplaceAll(strings.ReplaceAll(msg, r.wt+string(filepath.Separator), ""), r.wt, ".")
}

// cutoverRefusal says why the gate refused module's new entry.
func cutoverRefusal(module string, cuts []resolve.Cutover) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %q: the cutover gate refuses the new entry (as pin plan would):", module)
	for _, c := range cuts {
		fmt.Fprintf(&b, "\n  %s/%s: %s: runs %s, the new lock names %s", c.Observation.Host, c.Observation.Container, strings.ToUpper(string(c.Verdict)),
			describe(c.Observation.Image), c.Locked.Ref())
		if c.Order.Detail != "" {
			fmt.Fprintf(&b, "\n    ordered by rule %q: %s", c.Order.Rule, c.Order.Detail)
		}
	}
	b.WriteString("\n  a downgrade is carried out by a person: pin resolve, then pin plan HOST before the deploy")
	return b.String()
}

// planChanges are the changes of plan that dr proposes, by name.
func planChanges(plan *resolve.Plan, dr *draft) []Module {
	var mods []Module
	for _, d := range plan.Decisions {
		if dr.members[d.Module.Name] && changed(d) {
			mods = append(mods, moduleChange(d, nil, dr.cuts[d.Module.Name]))
		}
	}
	for _, r := range plan.Retired {
		if r.Now && dr.members[r.Entry.Name] {
			mods = append(mods, moduleChange(nil, r.Entry, nil))
		}
	}
	slices.SortFunc(mods, func(a, b Module) int { return strings.Compare(a.Name, b.Name) })
	return mods
}

// commit writes dr's lock and exports into the work tree and commits
// them on the base, as a proposal of mods (and of promotion pm, when not
// nil); nil when they change nothing.
func (r *run) commit(ctx context.Context, in *source.Inputs, dr *draft, mods []Module, pm *Promotion) (*Proposal, error) {
	p := &Proposal{Group: dr.group, Branch: r.o.branch(dr.group), Base: r.res.Base, Lock: lockHash(dr.lock),
		Refused: r.res.Refused, Files: []string{}, Findings: []string{}, Modules: mods, Promotion: pm}
	if pm != nil {
		p.Branch = r.o.BranchPrefix + dr.group
	}
	if p.Refused == nil {
		p.Refused = []Refused{}
	}

	lockPath := filepath.Join(r.wt, r.paths.lock)
	if _, err := lock.WriteFile(lockPath, lock.Format(dr.lock)); err != nil {
		return nil, err
	}
	paths := []string{r.paths.lock}
	for _, f := range dr.files {
		if !f.Changed() {
			continue
		}
		if _, err := atomicfile.Write(f.Path, f.Bytes, f.WriteOptions(false)); err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(r.wt, f.Path)
		paths = append(paths, rel)
	}
	for _, f := range dr.finds {
		p.Findings = append(p.Findings, r.inRepo(f.Where+": "+f.Msg))
	}
	p.Files = append(p.Files, paths...)
	slices.Sort(p.Files)
	p.Title = title(p)
	if pm != nil {
		p.Title = promotionTitle(p)
	}
	id := ""
	if r.o.Convention == forge.ConventionGerrit {
		id = changeID(r.res.Base, dr.group, in.LockSum)
	}
	p.Handover = r.handover(p)
	var err error
	if p.Title, p.Message, p.Body, err = message(p, r.o.Template, id); err != nil {
		return nil, err
	}
	commit, err := r.d.Git.Commit(ctx, r.wt, git.Commit{Paths: paths, Message: p.Message, Date: r.base.Date})
	if err != nil {
		return nil, fmt.Errorf("committing the proposal: %w", err)
	}
	if commit == "" {
		return nil, nil
	}
	p.Commit = commit
	return p, nil
}
