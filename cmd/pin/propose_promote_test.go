package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// promoteCheckout makes w's folder a git checkout of a bare remote's
// main, holding w's catalogue, hosts, mirror and locks; it returns the
// remote.
func promoteCheckout(t *testing.T, w *envWorld) string {
	t.Helper()
	remote := localRemote(t)
	gitIn(t, w.dir, "init", "--quiet", "-b", "main")
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", "two environments, locked")
	gitIn(t, w.dir, "remote", "add", "origin", remote)
	gitIn(t, w.dir, "push", "--quiet", "origin", "main")
	return remote
}

// commitHosts commits and pushes what w's hosts run now.
func commitHosts(t *testing.T, w *envWorld, msg string) {
	t.Helper()
	w.writePromote()
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", msg)
	gitIn(t, w.dir, "push", "--quiet", "origin", "main")
}

// branches are the remote's branches other than main.
func branches(t *testing.T, remote string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(gitIn(t, remote, "for-each-ref", "--format=%(refname)", "refs/heads"), "\n") {
		if l != "" && l != "refs/heads/main" {
			out = append(out, l)
		}
	}
	return out
}

// TestProposePromotion: pin propose --environment production --promote
// staging carries staging's build into production's lock through a
// branch of its own, whose commit changes production's lock alone and
// holds exactly what pin promote writes; the body names the module, from
// → to, staging's hosts, since when, and the release. A refused unit
// (staging skewed) pushes nothing; the checkout is never touched.
func TestProposePromotion(t *testing.T) {
	gitUser(t)
	w := newEnvWorld(t)
	w.runsSince("s1", "1.3.0", 48*time.Hour)
	w.runsSince("s2", "1.2.0", 30*time.Hour)
	w.runsSince("p1", "1.2.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	remote := promoteCheckout(t, w)
	args := []string{"propose", "--environment", "production", "--promote", "staging"}

	// Skew in staging: refused, nothing pushed, nothing touched.
	before := checkoutFiles(t, w.dir)
	r := pin(t, w.dir, append(args, "--format", "json")...)
	if r.code != exitFindings || !strings.Contains(r.stderr, `refused to promote "app" from staging to production`) {
		t.Fatalf("skewed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, proposeSchema(t), "propose --promote, refused", r.stdout)
	var out proposeOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Proposals) != 0 || len(out.Refused) != 1 || out.Refused[0].Kind != "skew" {
		t.Errorf("skewed: %v\n%s", err, r.stdout)
	}
	if b := branches(t, remote); len(b) != 0 {
		t.Errorf("a refused promotion pushed %v", b)
	}
	if diff := cmp.Diff(before, checkoutFiles(t, w.dir)); diff != "" {
		t.Errorf("the checkout changed:\n%s", diff)
	}

	// Staging agrees: a dry run commits in the work tree and pushes nothing.
	w.runsSince("s2", "1.3.0", 30*time.Hour)
	commitHosts(t, w, "staging runs 1.3.0 everywhere")
	main := gitIn(t, w.dir, "rev-parse", "HEAD")
	r = pin(t, w.dir, append(args, "--dry-run", "--format", "json")...)
	if r.code != exitOK {
		t.Fatalf("dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, proposeSchema(t), "propose --promote --dry-run", r.stdout)
	out = proposeOutput{}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Proposals) != 1 {
		t.Fatalf("dry run: %v\n%s", err, r.stdout)
	}
	p := out.Proposals[0]
	digest := w.builds["1.3.0"].digest
	sum := sha256.Sum256([]byte("app " + digest + "\n"))
	release := "sha256:" + hex.EncodeToString(sum[:])
	if p.Branch != "pin/promote-staging-production" || p.Outcome != "dry-run" || !slices.Equal(p.Files, []string{"pin.lock.production.hcl"}) {
		t.Errorf("dry run: branch %s, outcome %s, files %v", p.Branch, p.Outcome, p.Files)
	}
	if p.Promotion == nil || p.Promotion.From != "staging" || p.Promotion.To != "production" || p.Promotion.Release != release {
		t.Errorf("dry run: promotion %+v, want release %s", p.Promotion, release)
	}
	if len(p.Modules) != 1 || p.Modules[0].To.Digest != digest || p.Modules[0].From.Digest != w.builds["1.2.0"].digest || p.Modules[0].Promoted == nil ||
		!slices.Equal(p.Modules[0].Promoted.Hosts, []string{"s1", "s2"}) || p.Modules[0].Promoted.Since != "2026-11-29T00:00:00Z" || p.Modules[0].Verdict != "upgrade" {
		t.Errorf("dry run: modules %+v", p.Modules)
	}
	if b := branches(t, remote); len(b) != 0 {
		t.Errorf("a dry run pushed %v", b)
	}

	// Pushed: one branch on main, production's lock alone, what pin
	// promote writes.
	body := filepath.Join(t.TempDir(), "body.md")
	r = pin(t, w.dir, append(args, "--body-file", body)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "pushed   refs/heads/pin/promote-staging-production ([new branch])") || !strings.Contains(r.stdout, "release  "+release) {
		t.Fatalf("push: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b := branches(t, remote); !slices.Equal(b, []string{"refs/heads/pin/promote-staging-production"}) {
		t.Fatalf("branches %v", b)
	}
	commit := gitIn(t, remote, "rev-parse", "refs/heads/pin/promote-staging-production")
	if parent := gitIn(t, remote, "rev-parse", commit+"^"); parent != main {
		t.Errorf("the branch is not on main: parent %s, main %s", parent, main)
	}
	if files := gitIn(t, remote, "diff", "--name-only", main, commit); files != "pin.lock.production.hcl" {
		t.Errorf("the commit changes %q", files)
	}
	byHand := filepath.Join(t.TempDir(), "by-hand")
	gitIn(t, filepath.Dir(byHand), "clone", "--quiet", remote, byHand)
	if r := pin(t, byHand, "promote", "staging", "production"); r.code != exitOK {
		t.Fatalf("promote by hand: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if diff := cmp.Diff(readFileT(t, filepath.Join(byHand, "pin.lock.production.hcl")), gitIn(t, remote, "show", commit+":pin.lock.production.hcl")+"\n"); diff != "" {
		t.Errorf("the proposal is not what pin promote writes (-by hand +proposed):\n%s", diff)
	}
	md := readFileT(t, body)
	for _, s := range []string{
		"pin promotes 1 module from staging to production",
		"Release `" + release + "`",
		"| app | 1.2.0 `sha256:" + short12(w.builds["1.2.0"].digest) + "` (2026-03-01) → 1.3.0 `sha256:" + short12(digest) + "` (2026-04-01) | s1, s2 | 2026-11-29T00:00:00Z | upgrade | — |",
		"<!-- pin:propose group=promote-staging-production base=main lock=sha256:",
		"- `pin.lock.production.hcl`",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the body lacks %q:\n%s", s, md)
		}
	}
	if diff := cmp.Diff(before, checkoutFiles(t, w.dir)); diff == "" {
		t.Error("the checkout did not take the commit of staging's hosts")
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".git")); err != nil {
		t.Fatal(err)
	}
	if got := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl")); got != gitIn(t, w.dir, "show", "main:pin.lock.production.hcl")+"\n" {
		t.Error("the checkout's production lock changed")
	}

	// The same result again: nothing pushed.
	if r := pin(t, w.dir, args...); r.code != exitOK || !strings.Contains(r.stdout, "Nothing pushed: origin already holds every proposal.") {
		t.Errorf("again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A promotion is one unit: --split is refused.
	if r := pin(t, w.dir, append(args, "--split", "module")...); r.code != exitInput || !strings.Contains(r.stderr, "one unit") {
		t.Errorf("--split: exit %d\n%s", r.code, r.stderr)
	}
	if r := pin(t, w.dir, "propose", "--promote", "staging"); r.code != exitInput || !strings.Contains(r.stderr, "--environment TO") {
		t.Errorf("--promote without --environment: exit %d\n%s", r.code, r.stderr)
	}
}

// TestProposePromotionPick: --pick and --reason carry a manual pick
// through the request, its hold in the entry and the body; without
// --promote they are refused.
func TestProposePromotionPick(t *testing.T) {
	gitUser(t)
	w := newEnvWorld(t)
	w.runsSince("s1", "1.3.0", 48*time.Hour)
	w.runsSince("s2", "1.3.0", 48*time.Hour)
	w.runsSince("p1", "1.1.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	promoteCheckout(t, w)
	d12 := w.builds["1.2.0"].digest
	r := pin(t, w.dir, "propose", "--environment", "production", "--promote", "staging", "--pick", "1.2.0@"+d12, "--reason", "1.3.0 leaks memory", "--dry-run", "--format", "json", "app")
	if r.code != exitOK {
		t.Fatalf("pick: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, proposeSchema(t), "propose --promote --pick", r.stdout)
	var out proposeOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Proposals) != 1 || len(out.Proposals[0].Modules) != 1 {
		t.Fatalf("pick: %v\n%s", err, r.stdout)
	}
	m := out.Proposals[0].Modules[0]
	if m.To.Digest != d12 || m.Hold != "1.3.0 leaks memory" || !strings.Contains(out.Proposals[0].Body, "held: 1.3.0 leaks memory") {
		t.Errorf("pick: to %s, hold %q\n%s", m.To.Digest, m.Hold, out.Proposals[0].Body)
	}
	if r := pin(t, w.dir, "propose", "--environment", "production", "--pick", "1.2.0@"+d12, "--dry-run"); r.code != exitInput || !strings.Contains(r.stderr, "give --promote FROM") {
		t.Errorf("--pick without --promote: exit %d\n%s", r.code, r.stderr)
	}
}

// TestProposePromotionGitea: the promotion's request on a real Gitea,
// opened through its API, read back, and left unchanged by a second run.
func TestProposePromotionGitea(t *testing.T) {
	gitUser(t)
	g := testenv.GiteaServer(t)
	t.Setenv("GITEA_TOKEN", g.Token(t))
	repo, url := g.NewRepo(t, "promotion")
	w := newEnvWorld(t)
	w.runsSince("s1", "1.3.0", 48*time.Hour)
	w.runsSince("s2", "1.3.0", 30*time.Hour)
	w.runsSince("p1", "1.2.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	gitIn(t, w.dir, "init", "--quiet", "-b", "main")
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", "two environments, locked")
	gitIn(t, w.dir, "remote", "add", "origin", url)
	// The new repository holds a first commit of Gitea's: replaced.
	gitIn(t, w.dir, "push", "--quiet", "--force", "origin", "main")
	gitIn(t, w.dir, "fetch", "--quiet", "origin")
	gitIn(t, w.dir, "branch", "--quiet", "--set-upstream-to=origin/main", "main")

	args := []string{"propose", "--environment", "production", "--promote", "staging", "--forge", "gitea"}
	r := pin(t, w.dir, args...)
	if r.code != exitOK || !strings.Contains(r.stdout, " opened: "+g.URL+"/"+g.User+"/"+repo+"/pulls/") {
		t.Fatalf("first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	prs := giteaPulls(t, g, repo)
	if len(prs) != 1 || prs[0].State != "open" || prs[0].Head.Ref != "pin/promote-staging-production" || prs[0].Base.Ref != "main" ||
		prs[0].Title != "pin: promote app 1.3.0 from staging to production" || !strings.Contains(prs[0].Body, "| s1, s2 | 2026-11-29T00:00:00Z | upgrade |") ||
		!strings.Contains(prs[0].Body, "Release `sha256:") || !strings.Contains(prs[0].Body, "<!-- pin:propose group=promote-staging-production base=main lock=sha256:") {
		t.Fatalf("the request: %+v", prs)
	}
	r = pin(t, w.dir, args...)
	if r.code != exitOK || !strings.Contains(r.stdout, "pushed   nothing") || !strings.Contains(r.stdout, " unchanged: ") {
		t.Fatalf("second run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if again := giteaPulls(t, g, repo); len(again) != 1 || again[0].Head.SHA != prs[0].Head.SHA || again[0].Body != prs[0].Body {
		t.Errorf("the second run changed the request: %+v", again)
	}
}

// TestProposePromotionGate: a downgrade the module accepts in words
// (allow_downgrade) is a promotion pin promote writes, but the cutover
// gate refuses to propose it, as it refuses any proposal's: production
// runs 1.3.0 and the promotion would start 1.2.0 there. One unit:
// nothing is committed or pushed (exit 1).
func TestProposePromotionGate(t *testing.T) {
	gitUser(t)
	w := newEnvWorld(t)
	w.runsSince("s1", "1.2.0", 48*time.Hour)
	w.runsSince("s2", "1.2.0", 48*time.Hour)
	w.runsSince("p1", "1.3.0", 100*time.Hour)
	for h, s := range w.hosts {
		if s == nil {
			delete(w.hosts, h)
		}
	}
	w.world.write([]string{"registry.example.org"}, strings.Replace(promoteModules, `policy = "at-least-running"`, `policy = "at-least-running"
  allow_downgrade = "1.3.0 corrupts uploads; back to staging's build"`, 1))
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	remote := promoteCheckout(t, w)
	r := pin(t, w.dir, "propose", "--environment", "production", "--promote", "staging", "--format", "json")
	if r.code != exitFindings || !strings.Contains(r.stderr, `refused to promote "app" from staging to production`) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var out proposeOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Proposals) != 0 || len(out.Refused) != 1 || out.Refused[0].Kind != "cutover" ||
		!strings.Contains(out.Refused[0].Message, "p1/app: DOWNGRADE") {
		t.Errorf("refused: %v\n%s", err, r.stdout)
	}
	if b := branches(t, remote); len(b) != 0 {
		t.Errorf("a refused promotion pushed %v", b)
	}
	// pin promote itself writes it: the words accept the downgrade.
	if r := pin(t, w.dir, "promote", "staging", "production"); r.code != exitOK || w.lockedVersion("pin.lock.production.hcl") != "1.2.0" {
		t.Errorf("promote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
