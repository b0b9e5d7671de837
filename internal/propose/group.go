package propose

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/export"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Split says how changes are grouped into proposals, besides named Groups.
type Split string

const (
	// SplitNone: one proposal for every change (the default).
	SplitNone Split = "none"
	// SplitModule: one proposal per module.
	SplitModule Split = "module"
)

// DefaultGroup is the group of every change no named group takes, when
// changes are not split.
const DefaultGroup = "default"

// Group is a named set of modules proposed together.
type Group struct {
	Name    string
	Modules []string
}

var groupName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

func validGroups(split Split, groups []Group) error {
	switch split {
	case "", SplitNone, SplitModule:
	default:
		return fmt.Errorf("%w: --split %q: write none or module", ErrBadInput, string(split))
	}
	in := map[string]string{}
	names := map[string]bool{}
	for _, g := range groups {
		if !groupName.MatchString(g.Name) || g.Name == DefaultGroup {
			return fmt.Errorf("%w: group name %q: write lower-case letters, digits, '.', '_' or '-', and not %q", ErrBadInput, g.Name, DefaultGroup)
		}
		if names[g.Name] {
			return fmt.Errorf("%w: group %q is named twice", ErrBadInput, g.Name)
		}
		names[g.Name] = true
		if len(g.Modules) == 0 {
			return fmt.Errorf("%w: group %q names no module", ErrBadInput, g.Name)
		}
		for _, m := range g.Modules {
			if other, ok := in[m]; ok {
				return fmt.Errorf("%w: module %q is in groups %q and %q: a module belongs to one group", ErrBadInput, m, other, g.Name)
			}
			in[m] = g.Name
		}
	}
	return nil
}

// groupOf is the group module belongs to.
func (o Options) groupOf(module string) string {
	for _, g := range o.Groups {
		if slices.Contains(g.Modules, module) {
			return g.Name
		}
	}
	if o.Split == SplitModule {
		return branchSafe(module)
	}
	return DefaultGroup
}

// branch is the branch of group g.
func (o Options) branch(g string) string {
	if g == DefaultGroup {
		return o.BranchPrefix + "update"
	}
	return o.BranchPrefix + "update-" + g
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// branchSafe makes a module name one segment of a branch name.
func branchSafe(s string) string {
	s = strings.Trim(unsafe.ReplaceAllString(s, "-"), "-.")
	if s == "" {
		return "module"
	}
	return s
}

// groupLock is the lock a proposal of members writes: the previous lock
// with the members' entries as plan decided them, and every other entry as
// it was; a member gone from the catalogue is retired (its entry stays, a
// floor). It is what "pin
// resolve MEMBERS…" writes (and, when the members are every module, what
// "pin resolve" writes), from the same run.
func groupLock(plan *resolve.Plan, members map[string]bool) *lock.Lock {
	l := &lock.Lock{Hosts: plan.Hosts}
	for _, d := range plan.Decisions {
		switch {
		case members[d.Module.Name] && d.New() != nil:
			l.Modules = append(l.Modules, d.New())
		case d.Old != nil:
			l.Modules = append(l.Modules, d.Old)
		}
	}
	// An entry taken over leaves the lock only with every module that took
	// it over: a module outside the group still needs it as its floor.
	for _, t := range plan.TakenOver {
		if !slices.ContainsFunc(t.By, func(n string) bool { return !members[n] }) {
			continue
		}
		if t.Retired {
			l.Retired = append(l.Retired, t.Entry)
		} else {
			l.Modules = append(l.Modules, t.Entry)
		}
	}
	// A member gone from the catalogue is retired; another stays as the
	// base has it.
	for _, r := range plan.Retired {
		if r.Now && !members[r.Entry.Name] {
			l.Modules = append(l.Modules, r.Entry)
			continue
		}
		l.Retired = append(l.Retired, r.Entry)
	}
	l.Modules = append(l.Modules, plan.Kept...)
	return l
}

// changed reports whether d changes its module's entry.
func changed(d *resolve.Decision) bool {
	return d.New() != nil && !d.Unselected() && (d.Old == nil || !d.Old.Equal(d.New()))
}

// gate previews, on every host of the catalogue, the cutover to lk (as
// pin plan does) and returns the cutovers of the modules in check, and
// the modules among them that would not be safe: a downgrade of what a
// host runs, an order that cannot be decided.
func gate(ctx context.Context, in resolve.Input, lk *lock.Lock, check map[string]bool) (map[string][]resolve.Cutover, map[string][]resolve.Cutover, error) {
	cuts := map[string][]resolve.Cutover{}
	unsafeCuts := map[string][]resolve.Cutover{}
	in.Old = lk
	hosts := make([]string, 0, len(in.Catalogue.Hosts))
	for _, h := range in.Catalogue.Hosts {
		hosts = append(hosts, h.Name)
	}
	slices.Sort(hosts)
	cs, err := export.Gate(ctx, in, slices.Compact(hosts), check)
	var ge *export.GateError
	if errors.As(err, &ge) {
		return nil, nil, fmt.Errorf("the cutover gate on host %s: %w", ge.Host, ge.Err)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs {
		cuts[c.Module] = append(cuts[c.Module], c)
		if !c.Safe() {
			unsafeCuts[c.Module] = append(unsafeCuts[c.Module], c)
		}
	}
	return cuts, unsafeCuts, nil
}

// hostErrors are the hosts that could not be read, sorted.
func hostErrors(o observe.Observed) []string {
	var hs []string
	for h := range o.Errors {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return hs
}
