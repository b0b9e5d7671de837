package propose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/pin-tool/pin/internal/forge"
	"github.com/pin-tool/pin/internal/git"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/resolve"
)

// Git is what proposing needs of the user's git (package git runs it).
// dir is the checkout or the temporary work tree a command runs in.
type Git interface {
	TopLevel(ctx context.Context, dir string) (string, error)
	Status(ctx context.Context, dir string) ([]string, error)
	DefaultBranch(ctx context.Context, dir, remote string) (string, error)
	LsRemote(ctx context.Context, dir, remote string, patterns ...string) (map[string]string, error)
	Fetch(ctx context.Context, dir, remote, ref string) (string, error)
	AddWorktree(ctx context.Context, dir, path, commit string) error
	RemoveWorktree(ctx context.Context, dir, path string) error
	Reset(ctx context.Context, dir, commit string) error
	Commit(ctx context.Context, dir string, c git.Commit) (string, error)
	Show(ctx context.Context, dir, commit string) (git.CommitInfo, error)
	Push(ctx context.Context, dir, remote string, p git.Push) (git.PushResult, error)
}

var _ Git = git.Git{}

// Requests is a forge's API for pull requests (packages forge/github and
// forge/gitea).
type Requests interface {
	// List returns the requests, open or closed, from branch into base.
	List(ctx context.Context, base, branch string) ([]forge.Request, error)
	// Open opens a request for p.
	Open(ctx context.Context, p forge.Proposal) (forge.Request, error)
	// Update sets the title and body of request number to p's.
	Update(ctx context.Context, number int, p forge.Proposal) (forge.Request, error)
	// Hand adds to request q the labels and assignees of add, and asks
	// add's reviewers for a review.
	Hand(ctx context.Context, q forge.Request, add forge.Handover) error
	// Automerge reports whether request number is set to be merged by
	// the forge once its required checks pass.
	Automerge(ctx context.Context, number int) (bool, error)
	// SetAutomerge sets that (on), or takes it back.
	SetAutomerge(ctx context.Context, number int, on bool) error
}

// Loader loads the catalogue and lock at the given paths and observes the
// hosts: source.Load, as the command sets it up.
type Loader func(ctx context.Context, catalogue, lock string) (*source.Inputs, error)

// Deps are the adapters a run reaches the world through.
type Deps struct {
	Git  Git
	Load Loader
	// Requests, when not nil, opens and updates requests by API after a
	// push of the branch.
	Requests Requests
	// Promote decides the promotion of Options.Promote in the work tree
	// (needed, and only used, with it).
	Promote Promoter
	// Releases, when not nil, reads release notes on the forge pin
	// proposes to, for the sources there that the images' labels name.
	Releases Releases
}

// Options say what to propose, and where.
type Options struct {
	// Dir is where the command runs: in the checkout. Catalogue, Lock and
	// the paths of Exports are relative to it (or absolute), and must be
	// inside the checkout.
	Dir, Catalogue, Lock string
	// Exports are what the command line names. When they name a file,
	// they are written instead of the catalogue's export block; else the
	// block is, as the base has it, with their Compose settings (project
	// name, profiles, in place) where set (catalogue.Export.Override).
	Exports Exports
	// Remote is the git remote pushed to ("origin"); Base the branch
	// proposed for ("": the remote's default branch).
	Remote, Base string
	// BranchPrefix starts every branch pin pushes ("pin/").
	BranchPrefix string
	// Modules, when not nil, are the only modules decided ("pin propose
	// MODULE…").
	Modules []string
	// Split and Groups say how the changes are grouped into proposals.
	Split  Split
	Groups []Group
	// Convention is how the push opens a request; "" is a plain branch.
	Convention forge.Convention
	// Template, when not nil, writes the commit message (its first line
	// the title) over a Proposal, instead of pin's.
	Template *template.Template
	// DryRun commits in the work tree but pushes nothing and asks no
	// forge.
	DryRun bool
	// Promote, when not nil, makes the run a promotion: Lock is TO's
	// lock file, and its new entries are what Deps.Promote decides,
	// not what resolving decides.
	Promote *Promote
	// Labels, Reviewers and Assignees, when not nil, replace the
	// catalogue's propose settings; Automerge too.
	Labels, Reviewers, Assignees []string
	Automerge                    *bool
	// Now bounds plausible build dates, and is the time the schedule is
	// read at.
	Now time.Time
}

// Errors a run returns; the command maps them to exit codes.
var (
	// ErrBadInput: the options or paths cannot be used (exit 2).
	ErrBadInput = errors.New("bad input")
	// ErrRemote: the remote or the forge could not be reached, or refused
	// (exit 3).
	ErrRemote = errors.New("remote failed")
	// ErrFailed: resolving failed for a module; Result.Plan says which.
	ErrFailed = errors.New("resolving failed")
)

// DirtyError is a checkout with changes git has not committed: pin
// proposes what the base holds and would ignore them, so it refuses and
// touches nothing.
type DirtyError struct {
	Dir     string
	Entries []string
}

func (e *DirtyError) Error() string {
	const most = 10
	entries := e.Entries
	more := ""
	if len(entries) > most {
		more = fmt.Sprintf(" and %d more", len(entries)-most)
		entries = entries[:most]
	}
	return fmt.Sprintf("%s has changes that are not committed (%s%s): commit or stash them first; pin proposes what the base branch holds, and touches nothing here", e.Dir, strings.Join(entries, ", "), more)
}

// ForeignBranchError is pin's branch on the remote holding a commit pin
// did not make: someone pushed to it. pin does not overwrite it.
type ForeignBranchError struct {
	Branch, Commit string
}

func (e *ForeignBranchError) Error() string {
	return fmt.Sprintf("branch %s holds commit %s, which pin did not make: someone pushed to it, and pin does not overwrite their work; merge or close its request and delete the branch, then run pin propose again", e.Branch, short(e.Commit))
}

// ExportGateError is an export that would start on a host an image
// older than what runs there (or one that cannot be ordered against it),
// for a module the proposal does not change: the base's lock names it,
// and pin export refuses that lock too. Nothing is proposed.
type ExportGateError struct {
	Module  string
	Cutover resolve.Cutover
	// Refused: the module itself was refused, so its entry stays.
	Refused bool
}

func (e *ExportGateError) Error() string {
	c := e.Cutover
	fix := fmt.Sprintf("propose module %s with it (leave out --split or --group)", e.Module)
	if e.Refused {
		fix = fmt.Sprintf("module %s is refused (see above); decide it in the catalogue first", e.Module)
	}
	return fmt.Sprintf("the exports would start on %s/%s (module %s, not in this proposal) %s, which is %s against what runs there (%s): nothing proposed; %s, or see pin plan %s",
		c.Observation.Host, c.Observation.Container, e.Module, c.Locked.Ref(), strings.ToUpper(string(c.Verdict)), describe(c.Observation.Image), fix, c.Observation.Host)
}

// Result is what a run did.
type Result struct {
	// Remote, Base and BaseCommit are what was proposed against.
	Remote, Base, BaseCommit string
	// Plan is the run's resolve plan (every module), for the command to
	// report a failure by.
	Plan *resolve.Plan
	// Refused are the modules left out, and why; in every proposal's body.
	Refused []Refused
	// Proposals are the groups that change something, in name order.
	Proposals []*Proposal
	// DryRun is Options.DryRun.
	DryRun bool
	// Outside, when not nil, is the schedule the run was outside of:
	// nothing was pushed.
	Outside *Schedule
}

// Run proposes. An error leaves the checkout, its lock and the remote as
// they were, except for proposals Result lists as pushed before it.
func Run(ctx context.Context, o Options, d Deps) (*Result, error) {
	if o.Remote == "" {
		o.Remote = "origin"
	}
	if o.BranchPrefix == "" {
		o.BranchPrefix = "pin/"
	}
	if o.Convention == "" {
		o.Convention = forge.ConventionBranch
	}
	if err := validGroups(o.Split, o.Groups); err != nil {
		return nil, err
	}
	if err := o.Promote.valid(o, d); err != nil {
		return nil, err
	}
	top, err := d.Git.TopLevel(ctx, o.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: pin propose runs in a git checkout: %w", ErrBadInput, err)
	}
	paths, err := o.repoPaths(top)
	if err != nil {
		return nil, err
	}
	st, err := d.Git.Status(ctx, top)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the checkout's status: %w", ErrBadInput, err)
	}
	if len(st) > 0 {
		return nil, &DirtyError{Dir: top, Entries: st}
	}
	res := &Result{Remote: o.Remote, Base: o.Base, DryRun: o.DryRun}
	if res.Base == "" {
		if res.Base, err = d.Git.DefaultBranch(ctx, top, o.Remote); err != nil {
			return nil, fmt.Errorf("%w: finding the default branch of %s (or name one with --base): %w", ErrRemote, o.Remote, err)
		}
	}
	if res.BaseCommit, err = d.Git.Fetch(ctx, top, o.Remote, "refs/heads/"+res.Base); err != nil {
		return nil, fmt.Errorf("%w: fetching %s from %s: %w", ErrRemote, res.Base, o.Remote, err)
	}
	baseInfo, err := d.Git.Show(ctx, top, res.BaseCommit)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrRemote, res.BaseCommit, err)
	}

	// A work tree of its own: the checkout is never touched.
	tmp, err := os.MkdirTemp("", "pin-propose-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// Named as the checkout's folder: Compose names a project after the
	// folder of its first file, so a Compose file at the top of the
	// repository is the same project in the work tree as in the checkout.
	wt := filepath.Join(tmp, filepath.Base(top))
	if err := d.Git.AddWorktree(ctx, top, wt, res.BaseCommit); err != nil {
		return nil, fmt.Errorf("checking %s out into a work tree: %w", res.Base, err)
	}
	defer d.Git.RemoveWorktree(context.WithoutCancel(ctx), top, wt)

	r := &run{o: o, d: d, res: res, top: top, wt: wt, paths: paths, base: baseInfo}
	return res, r.propose(ctx)
}

// repoPaths are the catalogue, lock and export paths relative to the top
// of the checkout.
type repoPaths struct {
	catalogue, lock string
	exports         Exports
}

func (o Options) repoPaths(top string) (repoPaths, error) {
	var p repoPaths
	rel := func(path string) (string, error) {
		if path == "" {
			return "", nil
		}
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(o.Dir, path)
		}
		// The checkout's own path may go through a symbolic link that
		// git resolved.
		if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(r, filepath.Base(abs))
		}
		r, err := filepath.Rel(top, abs)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%w: %s is outside the checkout %s: pin propose commits only files of the repository", ErrBadInput, path, top)
		}
		return r, nil
	}
	var err error
	if p.catalogue, err = rel(o.Catalogue); err != nil {
		return p, err
	}
	if p.lock, err = rel(o.Lock); err != nil {
		return p, err
	}
	p.exports, err = mapPaths(o.Exports, rel)
	return p, err
}
