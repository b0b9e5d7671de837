package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// gitUser gives git, in this test and in pin run in-process, an identity
// and a global configuration of the test's own.
func gitUser(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, cfg, "[user]\n\tname = Pin Test\n\temail = pin@example.org\n[init]\n\tdefaultBranch = main\n")
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_TERMINAL_PROMPT", "0")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// snapshotOnly is the incident's mesh-1 snapshot with only the containers
// named (none: a host that runs nothing yet).
func snapshotOnly(t *testing.T, names ...string) string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(repoRoot, "examples/incident/mesh-1.json")), &s); err != nil {
		t.Fatal(err)
	}
	cs := []any{}
	for _, c := range s["containers"].([]any) {
		if slices.Contains(names, c.(map[string]any)["name"].(string)) {
			cs = append(cs, c)
		}
	}
	s["containers"] = cs
	b, _ := json.MarshalIndent(s, "", " ")
	return string(b) + "\n"
}

// incidentCompose deploys the incident's services with Compose, on the
// pins the modules were written with.
const incidentCompose = `services:
  forgejo:
    image: registry.example.org/forge/forgejo:1.22.6
  packages:
    image: registry.example.org/packages/registry:6.10.1
`

// seedIncident pushes to remote's main the incident's repository:
// catalogue.hcl at the root, the layout mirror and mesh-1's snapshot
// under examples/incident, a Compose file and an env file the deploy
// reads, and the old lock: the one pin resolve wrote when the modules
// were written and mesh-1 ran none of them. mesh-1 runs the containers
// running names (all three when nil). It returns a fresh clone.
func seedIncident(t *testing.T, remote string, running []string) string {
	t.Helper()
	seed := filepath.Join(t.TempDir(), "seed")
	gitIn(t, filepath.Dir(seed), "clone", "--quiet", remote, seed)
	writeFile(t, filepath.Join(seed, "catalogue.hcl"), string(mustRead(t, filepath.Join(repoRoot, "catalogue.hcl"))))
	if err := os.CopyFS(filepath.Join(seed, "examples/incident/registry"), os.DirFS(filepath.Join(repoRoot, "examples/incident/registry"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(seed, "examples/incident/mesh-1.json"), snapshotOnly(t))
	if r := pin(t, seed, "resolve"); r.code != 0 {
		t.Fatalf("the old lock: exit %d\n%s", r.code, r.stderr)
	}
	if running == nil {
		running = []string{"forgejo", "packages", "analytics"}
	}
	writeFile(t, filepath.Join(seed, "examples/incident/mesh-1.json"), snapshotOnly(t, running...))
	writeFile(t, filepath.Join(seed, "compose.yaml"), incidentCompose)
	writeFile(t, filepath.Join(seed, "deploy.env"), "# The deploy script sources this file.\n")
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "--quiet", "-m", "the incident, locked when its modules were written")
	gitIn(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	clone := filepath.Join(t.TempDir(), "checkout")
	gitIn(t, filepath.Dir(clone), "clone", "--quiet", remote, clone)
	return clone
}

// pushesTo are the pushes remote received that updated ref.
func pushesTo(t *testing.T, r *testenv.GitRemote, ref string) []testenv.GitPush {
	t.Helper()
	var out []testenv.GitPush
	for _, p := range r.Pushes(t) {
		for _, u := range p.Refs {
			if strings.HasSuffix(u, " "+ref) {
				out = append(out, p)
			}
		}
	}
	return out
}

// The "done when", against a real git server: on a fresh clone of
// the incident with its old lock, pin propose pushes one branch whose
// commit changes the lock and the exports to what pin resolve and pin
// export write, prints and writes a body naming each module's from → to
// and why, and a second run pushes nothing.
func TestProposeEndToEnd(t *testing.T) {
	gitUser(t)
	remote := testenv.NewGitRemote(t, "incident")
	clone := seedIncident(t, remote.URL, nil)
	before := checkoutFiles(t, clone)
	main := gitIn(t, clone, "rev-parse", "HEAD")

	body := filepath.Join(t.TempDir(), "body.md")
	args := []string{"propose", "--export-compose", "compose.yaml", "--export-env", "deploy.env", "--body-file", body}
	r := pin(t, clone, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "pushed   refs/heads/pin/update ([new branch])") || !strings.Contains(r.stdout, "1 of 1 proposal(s) pushed.") {
		t.Fatalf("propose: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{"forge      1.22.6 → 1.27.3  held", "packages   6.10.1 → 6.10.3  held", "why: mesh-1/forgejo runs 1.27.3, newer than the pin 1.22.6"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("the output lacks %q:\n%s", s, r.stdout)
		}
	}
	pushes := pushesTo(t, remote, "refs/heads/pin/update")
	if len(pushes) != 1 {
		t.Fatalf("%d pushes of pin/update, want 1", len(pushes))
	}
	commit := strings.Fields(pushes[0].Refs[0])[1]
	if parent := gitIn(t, remote.Dir, "rev-parse", commit+"^"); parent != main {
		t.Errorf("the branch is not on main: parent %s, main %s", parent, main)
	}
	files := gitIn(t, remote.Dir, "diff", "--name-only", main, commit)
	if files != "compose.pin.yaml\ndeploy.env\npin.lock.hcl" {
		t.Errorf("the commit changes %q", files)
	}

	// What pin resolve and pin export write on a fresh clone of main.
	ref := filepath.Join(t.TempDir(), "by-hand")
	gitIn(t, filepath.Dir(ref), "clone", "--quiet", remote.URL, ref)
	for _, a := range [][]string{{"resolve"}, {"export", "--compose", "compose.yaml"}, {"export", "--env", "deploy.env"}} {
		if r := pin(t, ref, a...); r.code != 0 {
			t.Fatalf("pin %s: exit %d\n%s", strings.Join(a, " "), r.code, r.stderr)
		}
	}
	for _, f := range strings.Fields(files) {
		if diff := cmp.Diff(string(mustRead(t, filepath.Join(ref, f))), gitIn(t, remote.Dir, "show", commit+":"+f)+"\n"); diff != "" {
			t.Errorf("%s: the proposal is not what pin writes (-by hand +proposed):\n%s", f, diff)
		}
	}

	md := string(mustRead(t, body))
	for _, s := range []string{
		"| forge | at-least-running | mesh-1/forgejo 1.27.3 `sha256:fe63af8ae93d` | 1.22.6 `sha256:e8cb3b3125e6` (2024-12-12) → 1.27.3 `sha256:fe63af8ae93d` (2026-09-01) | held | — |",
		"| packages | at-least-running | mesh-1/packages 6.10.3 `sha256:de6ae79ec976` | 6.10.1 `sha256:e77b6b777a48` (2026-06-15) → 6.10.3 `sha256:de6ae79ec976` (2026-08-15) | held | — |",
		"| analytics | at-least-running | mesh-1/analytics latest `sha256:894d9cb601d6` | the build of 2026-08-20 `sha256:29742d2d37ae` → latest of 2026-09-17 `sha256:894d9cb601d6` | held | — |",
		"- **forge** (running won, ordered by version): mesh-1/forgejo runs 1.27.3, newer than the pin 1.22.6 (version 1.27.3 > 1.22.6): locking the pin would be a downgrade",
		"- `compose.pin.yaml`\n- `deploy.env`\n- `pin.lock.hcl`\n",
		"<!-- pin:propose group=default base=main lock=sha256:",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the body lacks %q:\n%s", s, md)
		}
	}

	// The same result: nothing pushed, and it says so; JSON too.
	r = pin(t, clone, append(args, "--format", "json")...)
	if r.code != 0 {
		t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
	}
	var out proposeOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Proposals) != 1 || out.Proposals[0].Outcome != "up-to-date" || out.Proposals[0].Commit != commit {
		t.Fatalf("second run: %v\n%s", err, r.stdout)
	}
	if n := len(pushesTo(t, remote, "refs/heads/pin/update")); n != 1 {
		t.Errorf("the second run pushed: %d pushes of pin/update", n)
	}
	if r := pin(t, clone, args...); !strings.Contains(r.stdout, "Nothing pushed: origin already holds every proposal.") {
		t.Errorf("third run says:\n%s", r.stdout)
	}
	if diff := cmp.Diff(before, checkoutFiles(t, clone)); diff != "" {
		t.Errorf("the checkout changed:\n%s", diff)
	}
}

// The push conventions reach a real server: GitLab's merge request
// options, AGit's refs/for/<base>/<topic> with its base64 title and
// description, and Gerrit's refs/for/<base> with a topic and a Change-Id.
func TestProposeConventions(t *testing.T) {
	gitUser(t)
	for _, tc := range []struct {
		forge, ref string
		options    func(body string) []string
	}{
		{"gitlab", "refs/heads/pin/update", func(body string) []string {
			return []string{"merge_request.create", "merge_request.target=main", "merge_request.title=pin: update analytics, forge and packages",
				"merge_request.description=" + strings.ReplaceAll(body, "\n", `\n`), "merge_request.remove_source_branch"}
		}},
		{"agit", "refs/for/main/pin-update", func(body string) []string {
			return []string{"topic=pin-update", "title={base64}" + base64.StdEncoding.EncodeToString([]byte("pin: update analytics, forge and packages")),
				"description={base64}" + base64.StdEncoding.EncodeToString([]byte(body)), "force-push=true"}
		}},
		{"gerrit", "refs/for/main", func(string) []string { return []string{"topic=pin-update"} }},
	} {
		t.Run(tc.forge, func(t *testing.T) {
			remote := testenv.NewGitRemote(t, tc.forge)
			clone := seedIncident(t, remote.URL, nil)
			r := pin(t, clone, "propose", "--forge", tc.forge, "--format", "json")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			var out proposeOutput
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatal(err)
			}
			p := out.Proposals[0]
			pushes := pushesTo(t, remote, tc.ref)
			if len(pushes) != 1 {
				t.Fatalf("%d pushes to %s; all: %+v", len(pushes), tc.ref, remote.Pushes(t))
			}
			// The request's body, marker included.
			if diff := cmp.Diff(tc.options(p.Body), pushes[0].Options); diff != "" {
				t.Errorf("push options (-want +got):\n%s", diff)
			}
			msg := gitIn(t, remote.Dir, "log", "-1", "--format=%B", strings.Fields(pushes[0].Refs[0])[1])
			if hasID := strings.Contains(msg, "\nChange-Id: I"); hasID != (tc.forge == "gerrit") {
				t.Errorf("Change-Id in the message: %v\n%s", hasID, msg)
			}
		})
	}
}

// A bad checkout is refused before anything is asked or pushed: changes
// not committed (exit 2), not a checkout (exit 2), a forge pin does not
// know (exit 2), an API without its token (exit 2), a reviewer with no
// forge to ask them (exit 2).
func TestProposeRefusesBadInput(t *testing.T) {
	gitUser(t)
	remote := testenv.NewGitRemote(t, "bad")
	clone := seedIncident(t, remote.URL, nil)
	editFile(t, filepath.Join(clone, "catalogue.hcl"), func(s string) string { return s + "\n# an edit not committed\n" })
	before := checkoutFiles(t, clone)
	if r := pin(t, clone, "propose"); r.code != 2 || !strings.Contains(r.stderr, "has changes that are not committed ( M catalogue.hcl)") {
		t.Errorf("dirty: exit %d\n%s", r.code, r.stderr)
	}
	if diff := cmp.Diff(before, checkoutFiles(t, clone)); diff != "" {
		t.Errorf("the checkout changed:\n%s", diff)
	}
	gitIn(t, clone, "checkout", "--quiet", "--", "catalogue.hcl")
	if r := pin(t, t.TempDir(), "propose"); r.code != 2 || !strings.Contains(r.stderr, "pin propose runs in a git checkout") {
		t.Errorf("no checkout: exit %d\n%s", r.code, r.stderr)
	}
	if r := pin(t, clone, "propose", "--forge", "bitbucket"); r.code != 2 || !strings.Contains(r.stderr, `--forge "bitbucket"`) {
		t.Errorf("unknown forge: exit %d\n%s", r.code, r.stderr)
	}
	t.Setenv("GITEA_TOKEN", "")
	if r := pin(t, clone, "propose", "--forge", "gitea"); r.code != 2 || !strings.Contains(r.stderr, "needs an API token in $GITEA_TOKEN") {
		t.Errorf("no token: exit %d\n%s", r.code, r.stderr)
	}
	if r := pin(t, clone, "propose", "--reviewer", "alice"); r.code != 2 || !strings.Contains(r.stderr, "the branch convention opens no request pin can hand over") {
		t.Errorf("a hand-over without a forge to carry it: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(pushesTo(t, remote, "refs/heads/pin/update")); n != 0 {
		t.Errorf("%d pushes", n)
	}
}

// A module pin refuses is listed under its own heading, not changed, and
// the run exits 1 after proposing the others.
func TestProposeRefusedModuleExits1(t *testing.T) {
	gitUser(t)
	remote := testenv.NewGitRemote(t, "refused")
	seed := seedIncident(t, remote.URL, nil)
	editFile(t, filepath.Join(seed, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, "policy  = \"at-least-running\"\n  pin     = \"1.22.6@", "policy  = \"exact\"\n  pin     = \"1.22.6@", 1)
	})
	gitIn(t, seed, "commit", "--quiet", "-am", "forge: exact")
	gitIn(t, seed, "push", "--quiet", "origin", "HEAD:main")
	r := pin(t, seed, "propose")
	if r.code != 1 || !strings.Contains(r.stdout, "Refused, not changed:\nmodule \"forge\": refusing a downgrade") || !strings.Contains(r.stderr, `refused module "forge"`) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "pin/update: pin: update analytics and packages") {
		t.Errorf("the others were not proposed:\n%s", r.stdout)
	}
}

// checkoutFiles reads every file of a checkout but its .git.
func checkoutFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case !d.IsDir():
			b, err := os.ReadFile(p)
			out[p] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// giteaPull is a pull request as Gitea's API reads it back.
type giteaPull struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	Head   struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
}

func giteaPulls(t *testing.T, g testenv.Gitea, repo string) []giteaPull {
	t.Helper()
	var prs []giteaPull
	g.API(t, "GET", "/repos/"+g.User+"/"+repo+"/pulls?state=all", nil, &prs)
	return prs
}

// On a real Gitea, the API tier opens one pull request, a second run with
// the same result leaves it, and a run with a new result (a container
// started on mesh-1 since) updates that same request; the AGit tier
// opens one by a push alone, and a second run pushes nothing. Both are
// read back through Gitea's API.
func TestProposeGitea(t *testing.T) {
	gitUser(t)
	g := testenv.GiteaServer(t)
	t.Setenv("GITEA_TOKEN", g.Token(t))

	t.Run("api", func(t *testing.T) {
		repo, url := g.NewRepo(t, "incident-api")
		clone := seedIncident(t, url, []string{"forgejo", "analytics"})
		r := pin(t, clone, "propose", "--forge", "gitea")
		if r.code != 0 || !strings.Contains(r.stdout, "request  #") || !strings.Contains(r.stdout, " opened: "+g.URL+"/"+g.User+"/"+repo+"/pulls/") {
			t.Fatalf("first run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		prs := giteaPulls(t, g, repo)
		if len(prs) != 1 || prs[0].State != "open" || prs[0].Head.Ref != "pin/update" || prs[0].Base.Ref != "main" || prs[0].Title != "pin: update analytics and forge" ||
			!strings.Contains(prs[0].Body, "| forge | at-least-running |") || !strings.Contains(prs[0].Body, "<!-- pin:propose group=default base=main lock=sha256:") {
			t.Fatalf("after the first run: %+v", prs)
		}
		first := prs[0]

		r = pin(t, clone, "propose", "--forge", "gitea")
		if r.code != 0 || !strings.Contains(r.stdout, "pushed   nothing") || !strings.Contains(r.stdout, " unchanged: ") {
			t.Fatalf("second run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if prs := giteaPulls(t, g, repo); len(prs) != 1 || prs[0].Head.SHA != first.Head.SHA || prs[0].Body != first.Body {
			t.Fatalf("the second run changed the request: %+v", prs)
		}

		// mesh-1 now runs packages 6.10.3 too: a new result.
		gitIn(t, clone, "pull", "--quiet")
		writeFile(t, filepath.Join(clone, "examples/incident/mesh-1.json"), snapshotOnly(t, "forgejo", "analytics", "packages"))
		gitIn(t, clone, "commit", "--quiet", "-am", "mesh-1 runs packages")
		gitIn(t, clone, "push", "--quiet", "origin", "HEAD:main")
		r = pin(t, clone, "propose", "--forge", "gitea")
		if r.code != 0 || !strings.Contains(r.stdout, " updated: ") {
			t.Fatalf("third run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		prs = giteaPulls(t, g, repo)
		if len(prs) != 1 || prs[0].Number != first.Number || prs[0].State != "open" || prs[0].Head.SHA == first.Head.SHA ||
			prs[0].Title != "pin: update analytics, forge and packages" || !strings.Contains(prs[0].Body, "| packages | at-least-running |") || prs[0].Body == first.Body {
			t.Fatalf("after a new result, want the same request updated: %+v", prs)
		}
		if head := gitIn(t, clone, "ls-remote", "origin", "refs/heads/pin/update"); !strings.HasPrefix(head, prs[0].Head.SHA) {
			t.Errorf("the request's head %s is not the branch's %s", prs[0].Head.SHA, head)
		}
		r = pin(t, clone, "propose", "--forge", "gitea", "--format", "json")
		validate(t, proposeSchema(t), "propose --forge gitea", r.stdout)
		if !strings.Contains(r.stdout, `"action": "unchanged"`) {
			t.Errorf("fourth run:\n%s", r.stdout)
		}
	})

	t.Run("agit", func(t *testing.T) {
		repo, url := g.NewRepo(t, "incident-agit")
		clone := seedIncident(t, url, nil)
		r := pin(t, clone, "propose", "--forge", "agit", "--format", "json")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		var out proposeOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		validate(t, proposeSchema(t), "propose --forge agit", r.stdout)
		p := out.Proposals[0]
		prs := giteaPulls(t, g, repo)
		if len(prs) != 1 || prs[0].State != "open" || prs[0].Base.Ref != "main" || prs[0].Title != p.Title || strings.TrimSpace(prs[0].Body) != strings.TrimSpace(p.Body) ||
			prs[0].Head.SHA != p.Commit || !slices.ContainsFunc(p.Push.Remote, func(l string) bool { return strings.Contains(l, "/pulls/1") }) {
			t.Fatalf("the AGit push opened %+v; pushed %+v", prs, p.Push)
		}
		r = pin(t, clone, "propose", "--forge", "agit")
		if r.code != 0 || !strings.Contains(r.stdout, "pushed   nothing") {
			t.Fatalf("second run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if prs := giteaPulls(t, g, repo); len(prs) != 1 {
			t.Errorf("after the second run: %+v", prs)
		}
	})
}

// The user's git reaches the remote however they reach it: here over ssh
// (the suite's sshd, with the ssh client's own configuration: key, known
// hosts), to the same recording repository.
func TestProposeOverSSH(t *testing.T) {
	gitUser(t)
	remote := testenv.NewGitRemote(t, "ssh")
	addr, _ := testenv.SSHHost(t) // puts its ssh wrapper first in PATH
	clone := seedIncident(t, addr+remote.Dir, nil)
	r := pin(t, clone, "propose")
	if r.code != 0 || !strings.Contains(r.stdout, "pushed   refs/heads/pin/update ([new branch])") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := len(pushesTo(t, remote, "refs/heads/pin/update")); n != 1 {
		t.Errorf("%d pushes of pin/update over ssh", n)
	}
	if r := pin(t, clone, "propose"); r.code != 0 || !strings.Contains(r.stdout, "Nothing pushed") {
		t.Errorf("second run: exit %d\n%s", r.code, r.stdout)
	}
}

// incidentExportBlock is the export block of the CI guide's propose
// example (docs/guides/ci.md): where the deploy of the incident reads the
// lock.
const incidentExportBlock = `
# Where the deploy reads the lock: pin export and pin propose write these.
export {
  compose {
    files = ["compose.yaml"]
  }
  env = ["deploy.env"]
}
`

// The CI guide's propose example: the catalogue declares its exports, and
// pin propose with no --export-* flag commits them with the lock: what pin
// resolve and pin export, both without flags, write on a fresh clone; a
// second run pushes nothing.
func TestProposeExportBlockEndToEnd(t *testing.T) {
	gitUser(t)
	remote := testenv.NewGitRemote(t, "block")
	clone := seedIncident(t, remote.URL, nil)
	editFile(t, filepath.Join(clone, "catalogue.hcl"), func(s string) string { return s + incidentExportBlock })
	gitIn(t, clone, "commit", "--quiet", "-am", "catalogue: the exports the deploy reads")
	gitIn(t, clone, "push", "--quiet", "origin", "HEAD:main")
	main := gitIn(t, clone, "rev-parse", "HEAD")

	r := pin(t, clone, "propose")
	if r.code != 0 || !strings.Contains(r.stdout, "  files    compose.pin.yaml, deploy.env, pin.lock.hcl\n") || !strings.Contains(r.stdout, "1 of 1 proposal(s) pushed.") {
		t.Fatalf("propose: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("pin propose:\n%s", r.stdout)
	pushes := pushesTo(t, remote, "refs/heads/pin/update")
	if len(pushes) != 1 {
		t.Fatalf("%d pushes of pin/update, want 1", len(pushes))
	}
	commit := strings.Fields(pushes[0].Refs[0])[1]
	files := gitIn(t, remote.Dir, "diff", "--name-only", main, commit)
	if files != "compose.pin.yaml\ndeploy.env\npin.lock.hcl" {
		t.Fatalf("the commit changes %q", files)
	}
	ref := filepath.Join(t.TempDir(), "by-hand")
	gitIn(t, filepath.Dir(ref), "clone", "--quiet", remote.URL, ref)
	for _, a := range [][]string{{"resolve"}, {"export"}} {
		if r := pin(t, ref, a...); r.code != 0 {
			t.Fatalf("pin %s: exit %d\n%s", strings.Join(a, " "), r.code, r.stderr)
		}
	}
	for _, f := range strings.Fields(files) {
		if diff := cmp.Diff(string(mustRead(t, filepath.Join(ref, f))), gitIn(t, remote.Dir, "show", commit+":"+f)+"\n"); diff != "" {
			t.Errorf("%s: the proposal is not what pin writes (-by hand +proposed):\n%s", f, diff)
		}
	}
	if r := pin(t, clone, "propose"); r.code != 0 || !strings.Contains(r.stdout, "Nothing pushed: origin already holds every proposal.") {
		t.Errorf("second run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := len(pushesTo(t, remote, "refs/heads/pin/update")); n != 1 {
		t.Errorf("the second run pushed: %d pushes of pin/update", n)
	}
}
