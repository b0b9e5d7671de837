package propose

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/forge"
	"github.com/pin-tool/pin/internal/git"
)

// The incident's old lock named every pin; mesh-1 runs newer builds of
// all three. pin propose pushes one branch whose commit, on main, changes
// the lock to what pin resolve writes there, and a second run pushes
// nothing. The checkout is untouched throughout.
func TestProposeIncident(t *testing.T) {
	f := newFixture(t, nil)
	before := tree(t, f.clone)
	main := f.branch("main")

	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	if res.Base != "main" || res.BaseCommit != main || len(res.Refused) != 0 || len(res.Proposals) != 1 {
		t.Fatalf("result: base %s at %s, refused %v, %d proposals", res.Base, res.BaseCommit, res.Refused, len(res.Proposals))
	}
	p := res.Proposals[0]
	if p.Branch != "pin/update" || p.Outcome != OutcomePushed || f.branch("pin/update") != p.Commit {
		t.Fatalf("proposal: branch %s, outcome %s, commit %s; the remote's branch names %q", p.Branch, p.Outcome, p.Commit, f.branch("pin/update"))
	}
	if parent := f.git_(f.remote, "rev-parse", p.Commit+"^"); parent != main {
		t.Errorf("the commit's parent is %s, want main %s", parent, main)
	}
	if files := f.git_(f.remote, "diff", "--name-only", main, p.Commit); files != "pin.lock.hcl" {
		t.Errorf("the commit changes %q, want pin.lock.hcl alone", files)
	}
	// What pin resolve writes in a clone of main.
	other := filepath.Join(t.TempDir(), "resolved")
	f.git_(filepath.Dir(other), "clone", "--quiet", f.remote, other)
	f.resolveIn(other)
	if diff := cmp.Diff(read(t, filepath.Join(other, "pin.lock.hcl")), f.show(p.Commit, "pin.lock.hcl")); diff != "" {
		t.Errorf("the proposed lock is not what pin resolve writes (-resolve +proposed):\n%s", diff)
	}
	want := map[string][2]string{"forge": {"1.22.6", "1.27.3"}, "packages": {"6.10.1", "6.10.3"}}
	for _, m := range p.Modules {
		if w, ok := want[m.Name]; ok && (m.From.Version != w[0] || m.To.Version != w[1]) {
			t.Errorf("%s: %s → %s, want %s → %s", m.Name, m.From.Version, m.To.Version, w[0], w[1])
		}
		if m.Verdict != "held" || m.Why == "" || len(m.Cutover) != 1 || m.Cutover[0].Verdict != "same" {
			t.Errorf("%s: verdict %s, why %q, cutover %+v", m.Name, m.Verdict, m.Why, m.Cutover)
		}
	}
	for _, s := range []string{"| forge | at-least-running | mesh-1/forgejo 1.27.3 `sha256:fe63af8ae93d` | 1.22.6 `sha256:e8cb3b3125e6` (2024-12-12) → 1.27.3 `sha256:fe63af8ae93d` (2026-09-01) | held |",
		"mesh-1/forgejo runs 1.27.3, newer than the pin 1.22.6", "<!-- pin:propose group=default base=main lock=" + p.Lock + " -->"} {
		if !strings.Contains(p.Body, s) {
			t.Errorf("the body lacks %q:\n%s", s, p.Body)
		}
	}
	msg := f.git_(f.remote, "log", "-1", "--format=%B", p.Commit)
	if !strings.HasPrefix(msg, "pin: update analytics, forge and packages\n\n") || !strings.Contains(msg, "\n| module | policy | runs |") || !strings.Contains(msg, "Pin-Lock: "+p.Lock) {
		t.Errorf("commit message:\n%s", msg)
	}

	// The same result again: nothing is pushed.
	res, err = f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proposals) != 1 || res.Proposals[0].Outcome != OutcomeUpToDate || res.Proposals[0].Push != nil || f.branch("pin/update") != p.Commit {
		t.Errorf("second run: %+v; branch %s", res.Proposals[0], f.branch("pin/update"))
	}
	if diff := cmp.Diff(before, tree(t, f.clone)); diff != "" {
		t.Errorf("the checkout changed:\n%s", diff)
	}
	if wts := f.git_(f.clone, "worktree", "list"); strings.Count(wts, "\n") != 0 {
		t.Errorf("work trees left: %s", wts)
	}
}

// Once the proposal is merged, there is no change: nothing is pushed and
// the branch stays as it was.
func TestProposeNoChange(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	pushed := res.Proposals[0].Commit
	f.commitToMain(map[string]string{"pin.lock.hcl": f.show(pushed, "pin.lock.hcl")})
	res, err = f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proposals) != 0 || len(res.Refused) != 0 {
		t.Errorf("no change: %d proposals, refused %v", len(res.Proposals), res.Refused)
	}
	if f.branch("pin/update") != pushed {
		t.Error("the branch moved")
	}
}

// A module resolve refuses is listed, with the refusal and what to write,
// and keeps the base's entry; the others are proposed.
func TestProposeRefusedModule(t *testing.T) {
	f := newFixture(t, func(s string) string {
		return strings.Replace(s, "policy  = \"at-least-running\"\n  pin     = \"1.22.6@", "policy  = \"exact\"\n  pin     = \"1.22.6@", 1)
	})
	old := f.show("main", "pin.lock.hcl")
	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Refused) != 1 || res.Refused[0].Module != "forge" || res.Refused[0].Kind != "downgrade" || !strings.Contains(res.Refused[0].Message, "allow_downgrade") {
		t.Fatalf("refused: %+v", res.Refused)
	}
	p := res.Proposals[0]
	var names []string
	for _, m := range p.Modules {
		names = append(names, m.Name)
	}
	if !slices.Equal(names, []string{"analytics", "packages"}) {
		t.Errorf("proposed %v, want analytics and packages", names)
	}
	if got := f.show(p.Commit, "pin.lock.hcl"); block(got, "forge") != block(old, "forge") || block(got, "packages") == block(old, "packages") {
		t.Errorf("forge's entry changed, or packages' did not:\n%s", got)
	}
	if !strings.Contains(p.Body, "### Refused, not changed\n\n- **forge** (downgrade):") || !strings.Contains(p.Body, "to lock 1.22.6 anyway, write allow_downgrade") ||
		!strings.Contains(p.Body, `in module "forge" (catalogue.hcl:21,`) {
		t.Errorf("body:\n%s", p.Body)
	}
	// The same result: nothing pushed (the body names no folder of the run).
	res, err = f.run(f.options())
	if err != nil || res.Proposals[0].Outcome != OutcomeUpToDate {
		t.Errorf("second run: %v, %+v", err, res.Proposals[0])
	}
}

// block is the text of module name's block in a lock.
func block(lk, name string) string {
	i := strings.Index(lk, "module \""+name+"\" {")
	if i < 0 {
		return ""
	}
	j := strings.Index(lk[i:], "\n}\n")
	return lk[i : i+j]
}

// A checkout with uncommitted changes or files git does not track: pin
// refuses, and touches nothing.
func TestProposeDirtyCheckout(t *testing.T) {
	for name, dirty := range map[string]func(f *fixture){
		"changed": func(f *fixture) {
			write(t, filepath.Join(f.clone, "catalogue.hcl"), read(t, filepath.Join(f.clone, "catalogue.hcl"))+"\n# edited\n")
		},
		"untracked": func(f *fixture) { write(t, filepath.Join(f.clone, "extra.hcl"), "# new\n") },
		"staged": func(f *fixture) {
			write(t, filepath.Join(f.clone, "pin.lock.hcl"), "# hand edit\n")
			f.git_(f.clone, "add", "pin.lock.hcl")
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			dirty(f)
			before := tree(t, f.clone)
			_, err := f.run(f.options())
			if d, ok := errorsAs[*DirtyError](err); !ok || len(d.Entries) != 1 {
				t.Fatalf("want a *DirtyError naming one entry, got %v", err)
			}
			if diff := cmp.Diff(before, tree(t, f.clone)); diff != "" {
				t.Errorf("the checkout changed:\n%s", diff)
			}
			if f.branch("pin/update") != "" {
				t.Error("a branch was pushed")
			}
		})
	}
}

// The remote refuses the push (its hook fails): the error says so, and
// the checkout, its lock and the remote are as they were.
func TestProposeFailedPush(t *testing.T) {
	f := newFixture(t, nil)
	hook := filepath.Join(f.remote, "hooks", "pre-receive")
	write(t, hook, "#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, f.clone)
	_, err := f.run(f.options())
	rej, ok := errorsAs[*git.PushRejectedError](err)
	if !ok || !errors.Is(err, ErrRemote) || !slices.Contains(rej.Remote, "pushes are closed today") {
		t.Fatalf("want a rejected push (ErrRemote) quoting the remote, got %v", err)
	}
	if diff := cmp.Diff(before, tree(t, f.clone)); diff != "" {
		t.Errorf("the checkout changed:\n%s", diff)
	}
	if f.branch("pin/update") != "" {
		t.Error("the branch exists")
	}
	if wts := f.git_(f.clone, "worktree", "list"); strings.Count(wts, "\n") != 0 {
		t.Errorf("work trees left: %s", wts)
	}
}

// racingGit pushes someone else's commit to the branch just before pin's
// push: the branch moves between pin's read and its push.
type racingGit struct {
	git.Git
	before func()
}

func (r racingGit) Push(ctx context.Context, dir, remote string, p git.Push) (git.PushResult, error) {
	r.before()
	return r.Git.Push(ctx, dir, remote, p)
}

// The branch is rebuilt on the fresh base each run, pushed with a lease:
// when main moved, the proposal moves onto it; when someone pushes to the
// branch while pin works, the push is refused and their commit stays; and
// a branch holding someone else's commit is not overwritten.
func TestProposeLease(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	first := res.Proposals[0].Commit

	// main moves: the same change, rebuilt on it.
	f.commitToMain(map[string]string{"README": "a change on main\n"})
	res, err = f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	second := res.Proposals[0].Commit
	if res.Proposals[0].Outcome != OutcomePushed || second == first || f.branch("pin/update") != second ||
		f.git_(f.remote, "rev-parse", second+"^") != f.branch("main") || !strings.Contains(res.Proposals[0].Push.Status, "forced update") {
		t.Fatalf("after main moved: %+v", res.Proposals[0])
	}

	// main moves again, and someone pushes to the branch while pin works.
	f.commitToMain(map[string]string{"README": "another change\n"})
	theirs := ""
	d := f.deps()
	d.Git = racingGit{Git: f.git, before: func() {
		if theirs != "" {
			return
		}
		dir := filepath.Join(t.TempDir(), "someone")
		f.git_(filepath.Dir(dir), "clone", "--quiet", "--branch", "pin/update", f.remote, dir)
		write(t, filepath.Join(dir, "NOTES"), "their fix\n")
		f.git_(dir, "add", "NOTES")
		f.git_(dir, "commit", "--quiet", "-m", "their fix")
		f.git_(dir, "push", "--quiet", "origin", "pin/update")
		theirs = f.git_(dir, "rev-parse", "HEAD")
	}}
	_, err = Run(context.Background(), f.options(), d)
	if !errors.Is(err, git.ErrStale) || !errors.Is(err, ErrRemote) {
		t.Fatalf("a push over a moved branch: want a broken lease, got %v", err)
	}
	if f.branch("pin/update") != theirs {
		t.Fatal("their commit was overwritten")
	}

	// The next run finds their commit on pin's branch and leaves it.
	_, err = f.run(f.options())
	if fb, ok := errorsAs[*ForeignBranchError](err); !ok || fb.Commit != theirs {
		t.Fatalf("want a *ForeignBranchError, got %v", err)
	}
	if f.branch("pin/update") != theirs {
		t.Fatal("their commit was overwritten")
	}
}

// A commit is reproducible: on the same base, the same change is the
// same commit, whatever the time.
func TestProposeCommitIsReproducible(t *testing.T) {
	f := newFixture(t, nil)
	o := f.options()
	o.DryRun = true
	a, err := f.run(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.run(o)
	if err != nil {
		t.Fatal(err)
	}
	if a.Proposals[0].Commit != b.Proposals[0].Commit || a.Proposals[0].Outcome != OutcomeDryRun || f.branch("pin/update") != "" {
		t.Errorf("dry runs: %s, %s (%s); branch %q", a.Proposals[0].Commit, b.Proposals[0].Commit, a.Proposals[0].Outcome, f.branch("pin/update"))
	}
}

// Split per module, or by named groups: each proposal changes its own
// modules' entries alone, on a branch of its own.
func TestProposeGroups(t *testing.T) {
	f := newFixture(t, nil)
	old := f.show("main", "pin.lock.hcl")
	o := f.options()
	o.Split = SplitModule
	o.Groups = []Group{{Name: "code", Modules: []string{"forge", "packages"}}}
	res, err := f.run(o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range res.Proposals {
		var names []string
		for _, m := range p.Modules {
			names = append(names, m.Name)
		}
		got[p.Branch] = names
		lk := f.show(f.branch(p.Branch), "pin.lock.hcl")
		for _, mod := range []string{"analytics", "forge", "packages"} {
			if changed := block(lk, mod) != block(old, mod); changed != slices.Contains(names, mod) {
				t.Errorf("%s: %s changed %v", p.Branch, mod, changed)
			}
		}
		if f.git_(f.remote, "rev-parse", p.Commit+"^") != f.branch("main") {
			t.Errorf("%s is not on main", p.Branch)
		}
	}
	want := map[string][]string{"pin/update-analytics": {"analytics"}, "pin/update-code": {"forge", "packages"}}
	if !maps.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("proposals %v, want %v", got, want)
	}

	for _, bad := range [][]Group{
		{{Name: "a", Modules: []string{"forge"}}, {Name: "b", Modules: []string{"forge"}}},
		{{Name: "Bad Name", Modules: []string{"forge"}}},
		{{Name: "x", Modules: []string{"nosuch"}}},
	} {
		o := f.options()
		o.Groups = bad
		if _, err := f.run(o); !errors.Is(err, ErrBadInput) {
			t.Errorf("groups %v: want ErrBadInput, got %v", bad, err)
		}
	}
}

// A team's template writes the message over the same data; the title is
// its first line, pin's trailers follow, and the request's body is the
// rest with the marker.
func TestProposeTemplate(t *testing.T) {
	f := newFixture(t, nil)
	o := f.options()
	o.Template = template.Must(template.New("m").Parse("deps: {{len .Modules}} images\n\n{{range .Modules}}* {{.Name}} {{with .From}}{{.Version}}{{end}} -> {{.To.Version}}\n{{end}}"))
	o.Convention = forge.ConventionGerrit
	o.DryRun = true
	res, err := f.run(o)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Proposals[0]
	if p.Title != "deps: 3 images" || !strings.HasPrefix(p.Message, "deps: 3 images\n\n* analytics  -> \n* forge 1.22.6 -> 1.27.3\n* packages 6.10.1 -> 6.10.3\n\nPin-Group: default\nPin-Lock: sha256:") {
		t.Errorf("title %q, message:\n%s", p.Title, p.Message)
	}
	if !strings.HasPrefix(p.Body, "* analytics  -> \n") || !strings.HasSuffix(p.Body, "lock="+p.Lock+" -->\n") {
		t.Errorf("body:\n%s", p.Body)
	}
	id := p.Message[strings.Index(p.Message, "Change-Id: I"):]
	if len(strings.TrimSpace(id)) != len("Change-Id: I")+40 {
		t.Errorf("Change-Id %q", id)
	}
	// The same base lock: the same change; once main's lock moves, another.
	res, _ = f.run(o)
	if !strings.Contains(res.Proposals[0].Message, id) {
		t.Error("a second run has another Change-Id")
	}
	f.commitToMain(map[string]string{"pin.lock.hcl": strings.Replace(f.show("main", "pin.lock.hcl"), "# This file", "# A comment.\n# This file", 1)})
	if res, err = f.run(o); err != nil || strings.Contains(res.Proposals[0].Message, id) {
		t.Errorf("after main's lock changed, the same Change-Id (%v)", err)
	}
}

// The exports a repository declares are committed with the lock, as pin
// export writes them.
func TestProposeExports(t *testing.T) {
	f := newFixture(t, nil)
	f.commitToMain(map[string]string{
		"deploy/compose.yaml": "services:\n  forgejo:\n    image: registry.example.org/forge/forgejo:1.22.6\n  packages:\n    image: registry.example.org/packages/registry:6.10.1\n",
		"deploy/images.env":   "# written by pin export\n",
	})
	f.git_(f.clone, "pull", "--quiet")
	o := f.options()
	o.Exports = Exports{Compose: []ComposeExport{{Files: []string{"deploy/compose.yaml"}, ProjectName: "deploy"}}, Env: []string{"deploy/images.env"}}
	res, err := f.run(o)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Proposals[0]
	if !slices.Equal(p.Files, []string{"deploy/compose.pin.yaml", "deploy/images.env", "pin.lock.hcl"}) {
		t.Fatalf("files %v", p.Files)
	}
	override := f.show(p.Commit, "deploy/compose.pin.yaml")
	env := f.show(p.Commit, "deploy/images.env")
	if !strings.Contains(override, "registry.example.org/forge/forgejo:1.27.3@sha256:fe63af8ae93decbf99e452febf938935c4a9782c1cf78c9f43311b3afdc7b6e3") ||
		!strings.Contains(env, "FORGE_IMAGE=registry.example.org/forge/forgejo:1.27.3@sha256:fe63af8ae93d") {
		t.Errorf("override:\n%s\nenv:\n%s", override, env)
	}
	// An export path outside the checkout is bad input.
	o.Exports.Env = []string{"../elsewhere.env"}
	if _, err := f.run(o); !errors.Is(err, ErrBadInput) {
		t.Errorf("an export outside the checkout: %v", err)
	}
}

// A downgrade the catalogue accepts in words is what pin resolve writes,
// but the cutover gate refuses it: a person carries a downgrade out, not
// a proposal. The module is listed as refused, and not changed.
func TestProposeGateRefusesAcceptedDowngrade(t *testing.T) {
	f := newFixture(t, func(s string) string {
		return strings.Replace(s, "policy  = \"at-least-running\"\n  pin     = \"1.22.6@", "policy  = \"exact\"\n  allow_downgrade = \"1.27 corrupts attachments\"\n  restore = \"backup of 2026-08-31\"\n  pin     = \"1.22.6@", 1)
	})
	old := f.show("main", "pin.lock.hcl")
	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Refused) != 1 || res.Refused[0].Module != "forge" || res.Refused[0].Kind != "cutover" || !strings.Contains(res.Refused[0].Message, "mesh-1/forgejo: DOWNGRADE") {
		t.Fatalf("refused: %+v", res.Refused)
	}
	if got := f.show(res.Proposals[0].Commit, "pin.lock.hcl"); block(got, "forge") != block(old, "forge") {
		t.Errorf("forge's entry changed:\n%s", got)
	}
}

// fakeRequests is a forge's API in memory: a seam pin owns (Requests).
// The real Gitea is in the forge/gitea and cmd/pin tests.
type fakeRequests struct {
	open    []forge.Request
	opened  int
	updated int
	// auto is the requests' automerge, by number; hands and autos the
	// calls of Hand and SetAutomerge, in order.
	auto  map[int]bool
	hands []forge.Handover
	autos []string
	// before, when not nil, is called first by SetAutomerge.
	before func(number int, on bool)
}

func (r *fakeRequests) Hand(_ context.Context, q forge.Request, add forge.Handover) error {
	r.hands = append(r.hands, add)
	x := &r.open[q.Number-1]
	x.Labels = append(x.Labels, add.Labels...)
	x.Assignees = append(x.Assignees, add.Assignees...)
	x.Reviewers = append(x.Reviewers, add.Reviewers...)
	return nil
}

func (r *fakeRequests) Automerge(_ context.Context, n int) (bool, error) { return r.auto[n], nil }

func (r *fakeRequests) SetAutomerge(_ context.Context, n int, on bool) error {
	if r.before != nil {
		r.before(n, on)
	}
	if r.auto == nil {
		r.auto = map[int]bool{}
	}
	r.auto[n] = on
	r.autos = append(r.autos, fmt.Sprintf("%d %v", n, on))
	return nil
}

// List returns every request from branch into base, open or closed.
func (r *fakeRequests) List(_ context.Context, base, branch string) ([]forge.Request, error) {
	var out []forge.Request
	for _, q := range r.open {
		if q.Base == base && q.Branch == branch {
			out = append(out, q)
		}
	}
	return out, nil
}

func (r *fakeRequests) Open(_ context.Context, p forge.Proposal) (forge.Request, error) {
	r.opened++
	q := forge.Request{Number: len(r.open) + 1, Base: p.Base, Branch: p.Branch, Title: p.Title, Body: p.Body, State: "open"}
	r.open = append(r.open, q)
	return q, nil
}

func (r *fakeRequests) Update(_ context.Context, n int, p forge.Proposal) (forge.Request, error) {
	r.updated++
	r.open[n-1].Title, r.open[n-1].Body = p.Title, p.Body
	return r.open[n-1], nil
}

// Through an API: the first run opens the request; the same result leaves
// it; a new result updates that same request.
func TestProposeRequests(t *testing.T) {
	f := newFixture(t, nil)
	reqs := &fakeRequests{open: []forge.Request{{Number: 1, Base: "main", Branch: "someone/else", Title: "another", State: "open"}}}
	d := f.deps()
	d.Requests = reqs
	run := func() *Proposal {
		t.Helper()
		res, err := Run(context.Background(), f.options(), d)
		if err != nil {
			t.Fatal(err)
		}
		return res.Proposals[0]
	}
	if p := run(); p.Request == nil || p.Request.Action != "opened" || p.Request.Number != 2 || reqs.open[1].Body != p.Body {
		t.Fatalf("first run: %+v", p.Request)
	}
	if p := run(); p.Request.Action != "unchanged" || p.Request.Number != 2 || reqs.opened != 1 || reqs.updated != 0 {
		t.Fatalf("same result: %+v", p.Request)
	}
	// A new result: packages' container is gone from mesh-1, so packages
	// keeps its entry, and the proposal holds the two others.
	f.commitToMain(map[string]string{"examples/incident/mesh-1.json": snapshot(t, "forgejo", "analytics")})
	p := run()
	if p.Request.Action != "updated" || p.Request.Number != 2 || reqs.opened != 1 || !strings.Contains(reqs.open[1].Body, p.Lock) || len(p.Modules) != 2 {
		t.Fatalf("new result: %+v, %d modules", p.Request, len(p.Modules))
	}

	// A person closes it: the same result is not proposed again.
	reqs.open[1].State = "closed"
	branch := f.branch("pin/update")
	if p := run(); p.Outcome != OutcomeDeclined || p.Request.Action != "closed" || p.Request.Number != 2 || reqs.opened != 1 || f.branch("pin/update") != branch {
		t.Fatalf("after it was closed: %s, %+v, %d opened", p.Outcome, p.Request, reqs.opened)
	}
	// A new result is: in a request of its own.
	f.commitToMain(map[string]string{"examples/incident/mesh-1.json": snapshot(t)})
	if p := run(); p.Outcome != OutcomePushed || p.Request.Action != "opened" || p.Request.Number != 3 {
		t.Fatalf("a new result after the close: %s, %+v", p.Outcome, p.Request)
	}
}

// Split, with an export the base never wrote: each proposal's export
// would carry the other modules' old entries, a downgrade of what runs.
// The export gate refuses, and nothing is pushed.
func TestProposeExportGate(t *testing.T) {
	f := newFixture(t, nil)
	f.commitToMain(map[string]string{"compose.yaml": "services:\n  forgejo:\n    image: registry.example.org/forge/forgejo:1.22.6\n  packages:\n    image: registry.example.org/packages/registry:6.10.1\n"})
	f.git_(f.clone, "pull", "--quiet")
	o := f.options()
	o.Split = SplitModule
	o.Exports.Compose = []ComposeExport{{Files: []string{"compose.yaml"}}}
	_, err := f.run(o)
	eg, ok := errorsAs[*ExportGateError](err)
	if !ok || eg.Refused || !strings.Contains(err.Error(), "DOWNGRADE") {
		t.Fatalf("want an *ExportGateError, got %v", err)
	}
	for _, b := range []string{"pin/update-analytics", "pin/update-forge", "pin/update-packages"} {
		if f.branch(b) != "" {
			t.Errorf("%s was pushed", b)
		}
	}
	// Proposed together, the same export is safe.
	o.Split = SplitNone
	if res, err := f.run(o); err != nil || !slices.Contains(res.Proposals[0].Files, "compose.pin.yaml") {
		t.Fatalf("together: %v", err)
	}
}

// pin commits with the user's git: their signing configuration signs the
// proposal (here an ssh key). An ssh signature of the same commit is the
// same, so a second run still pushes nothing.
func TestProposeSignsAsTheUserDoes(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen")
	}
	f := newFixture(t, nil)
	key := filepath.Join(t.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	write(t, cfg, "[user]\n\tname = Pin Test\n\temail = pin@example.org\n\tsigningkey = "+key+".pub\n[gpg]\n\tformat = ssh\n[commit]\n\tgpgsign = true\n")
	f.git.Env = []string{"GIT_CONFIG_GLOBAL=" + cfg, "GIT_CONFIG_NOSYSTEM=1"}
	res, err := f.run(f.options())
	if err != nil {
		t.Fatal(err)
	}
	c := res.Proposals[0].Commit
	if raw := f.git_(f.remote, "cat-file", "commit", c); !strings.Contains(raw, "-----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("the commit is not signed:\n%s", raw)
	}
	if res, err = f.run(f.options()); err != nil || res.Proposals[0].Outcome != OutcomeUpToDate || res.Proposals[0].Commit != c {
		t.Errorf("second run: %v, %+v", err, res.Proposals[0])
	}
}
