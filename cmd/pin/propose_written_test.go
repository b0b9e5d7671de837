package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// TestProposeNeverWritesOlder: a Compose file the deploy reads names
// packages at 6.10.4, newer than the 6.10.3 pin resolve locks; pin
// propose, which writes that file in place, refuses the module's write as
// pin export refuses it (its words, exit 1): the packages line stays as
// the file names it, packages's entry as the base has it, and the other
// modules are proposed.
func TestProposeNeverWritesOlder(t *testing.T) {
	gitUser(t)
	remote := testenv.NewGitRemote(t, "written")
	clone := seedIncident(t, remote.URL, nil)
	const newer = "registry.example.org/packages/registry:6.10.4"
	editFile(t, filepath.Join(clone, "compose.yaml"), func(s string) string {
		return strings.Replace(s, "registry.example.org/packages/registry:6.10.1", newer, 1)
	})
	gitIn(t, clone, "commit", "--quiet", "-am", "compose: packages 6.10.4, by hand")
	gitIn(t, clone, "push", "--quiet", "origin", "HEAD:main")
	main := gitIn(t, clone, "rev-parse", "HEAD")

	// The oracle: what pin export says of the lock pin resolve writes.
	ref := filepath.Join(t.TempDir(), "by-hand")
	gitIn(t, filepath.Dir(ref), "clone", "--quiet", remote.URL, ref)
	if r := pin(t, ref, "resolve"); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	ex := pin(t, ref, "export", "--compose", "compose.yaml", "--in-place")
	var refusal string
	for _, l := range strings.Split(ex.stderr, "\n") {
		if strings.Contains(l, "refused: module packages's") {
			refusal = l
		}
	}
	if ex.code != exitFindings || refusal == "" || !strings.Contains(refusal, "older than the "+newer+" written here") {
		t.Fatalf("export: exit %d\n%s%s", ex.code, ex.stdout, ex.stderr)
	}

	r := pin(t, clone, "propose", "--export-compose", "compose.yaml", "--export-in-place")
	if r.code != exitFindings || !strings.Contains(r.stdout, refusal) || !strings.Contains(r.stderr, `refused module "packages"`) {
		t.Fatalf("propose: exit %d, want %d and export's words %q\n%s\n%s", r.code, exitFindings, refusal, r.stdout, r.stderr)
	}
	pushes := pushesTo(t, remote, "refs/heads/pin/update")
	if len(pushes) != 1 {
		t.Fatalf("%d pushes of pin/update, want 1 (the other modules)\n%s", len(pushes), r.stdout)
	}
	commit := strings.Fields(pushes[0].Refs[0])[1]
	composed := gitIn(t, remote.Dir, "show", commit+":compose.yaml") + "\n"
	if !strings.Contains(composed, "image: "+newer+"\n") {
		t.Errorf("the proposal rewrote the packages line:\n%s", composed)
	}
	if !strings.Contains(composed, "forge/forgejo:1.27.3@sha256:") {
		t.Errorf("forge was not proposed:\n%s", composed)
	}
	lockAt := func(rev string) string {
		l := gitIn(t, remote.Dir, "show", rev+":pin.lock.hcl")
		return l[strings.Index(l, `module "packages"`):][:strings.Index(l[strings.Index(l, `module "packages"`):], "}")]
	}
	if got, want := lockAt(commit), lockAt(main); got != want {
		t.Errorf("packages's entry changed:\n%s\nwant as the base has it:\n%s", got, want)
	}
}

// TestProposeNeverWritesOlderEnv: the env-file export of pin propose is
// held to the same rule: deploy.env names packages at 6.10.4, newer than
// the 6.10.3 pin resolve locks, and propose refuses that module's write
// with export's words, leaving the line as the file names it.
func TestProposeNeverWritesOlderEnv(t *testing.T) {
	gitUser(t)
	remote := testenv.NewGitRemote(t, "written-env")
	clone := seedIncident(t, remote.URL, nil)
	const newer = "registry.example.org/packages/registry:6.10.4"
	writeFile(t, filepath.Join(clone, "deploy.env"), "PACKAGES_IMAGE="+newer+"\n")
	gitIn(t, clone, "add", "deploy.env")
	gitIn(t, clone, "commit", "--quiet", "-m", "deploy.env: packages 6.10.4, by hand")
	gitIn(t, clone, "push", "--quiet", "origin", "HEAD:main")

	r := pin(t, clone, "propose", "--export-env", "deploy.env")
	want := "deploy.env:1: refused: module packages's lock names registry.example.org/packages/registry:6.10.3@"
	if r.code != exitFindings || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "older than the "+newer+" written here") {
		t.Fatalf("propose: exit %d, want %d and %q\n%s\n%s", r.code, exitFindings, want, r.stdout, r.stderr)
	}
	for _, p := range pushesTo(t, remote, "refs/heads/pin/update") {
		commit := strings.Fields(p.Refs[0])[1]
		if env := gitIn(t, remote.Dir, "show", commit+":deploy.env"); !strings.Contains(env, "PACKAGES_IMAGE="+newer) {
			t.Errorf("the proposal rewrote the packages line:\n%s", env)
		}
	}
}
