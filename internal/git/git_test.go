package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testGit is a Git whose global configuration is a file of the test's: an
// identity, and nothing of the machine's.
func testGit(t *testing.T) Git {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Pin Test\n\temail = pin@example.org\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return Git{Env: []string{"GIT_CONFIG_GLOBAL=" + cfg, "GIT_CONFIG_NOSYSTEM=1"}}
}

func must(t *testing.T, g Git, dir string, args ...string) string {
	t.Helper()
	out, err := g.run(context.Background(), dir, nil, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// repo makes a bare remote with one commit on main, and a clone of it.
func repo(t *testing.T, g Git) (remote, clone string) {
	t.Helper()
	dir := t.TempDir()
	remote, clone = filepath.Join(dir, "remote.git"), filepath.Join(dir, "clone")
	must(t, g, dir, "init", "--quiet", "--bare", remote)
	must(t, g, dir, "clone", "--quiet", remote, clone)
	if err := os.WriteFile(filepath.Join(clone, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, g, clone, "add", "a.txt")
	must(t, g, clone, "commit", "--quiet", "-m", "first")
	must(t, g, clone, "push", "--quiet", "origin", "main")
	return remote, clone
}

func TestStatusAndTopLevel(t *testing.T) {
	g, ctx := testGit(t), context.Background()
	_, clone := repo(t, g)
	sub := filepath.Join(clone, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if top, err := g.TopLevel(ctx, sub); err != nil || top != clone {
		t.Fatalf("TopLevel(sub) = %q, %v; want %q", top, err, clone)
	}
	if _, err := g.TopLevel(ctx, t.TempDir()); err == nil {
		t.Error("TopLevel outside a repository: no error")
	}
	if st, err := g.Status(ctx, clone); err != nil || len(st) != 0 {
		t.Fatalf("clean: %q, %v", st, err)
	}
	os.WriteFile(filepath.Join(clone, "a.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "new file.txt"), []byte("x\n"), 0o644)
	st, err := g.Status(ctx, clone)
	if err != nil || !slices.Equal(st, []string{" M a.txt", "?? sub/"}) {
		t.Fatalf("dirty: %q, %v", st, err)
	}
}

func TestCommitIsReproducible(t *testing.T) {
	g, ctx := testGit(t), context.Background()
	remote, clone := repo(t, g)
	base := must(t, g, clone, "rev-parse", "HEAD")
	if def, err := g.DefaultBranch(ctx, clone, "origin"); err != nil || def != "main" {
		t.Fatalf("DefaultBranch = %q, %v", def, err)
	}
	if got, err := g.Fetch(ctx, clone, "origin", "refs/heads/main"); err != nil || got != base {
		t.Fatalf("Fetch = %q, %v; want %s", got, err, base)
	}
	if refs := must(t, g, clone, "for-each-ref", "refs/pin-propose/"); refs != "" {
		t.Errorf("Fetch left refs: %s", refs)
	}
	date := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	msg := "pin: update\n\nbody line\n\nPin-Group: update\n"
	commit := func() (string, string) {
		wt := filepath.Join(t.TempDir(), "wt")
		if err := g.AddWorktree(ctx, clone, wt, base); err != nil {
			t.Fatal(err)
		}
		defer g.RemoveWorktree(ctx, clone, wt)
		if c, err := g.Commit(ctx, wt, Commit{Paths: []string{"a.txt"}, Message: msg, Date: date}); c != "" || err != nil {
			t.Fatalf("commit of nothing: %q, %v", c, err)
		}
		os.WriteFile(filepath.Join(wt, "a.txt"), []byte("b\n"), 0o644)
		os.WriteFile(filepath.Join(wt, "new.txt"), []byte("n\n"), 0o644)
		c, err := g.Commit(ctx, wt, Commit{Paths: []string{"a.txt", "new.txt"}, Message: msg, Date: date})
		if err != nil || c == "" {
			t.Fatalf("commit: %q, %v", c, err)
		}
		return c, wt
	}
	c1, _ := commit()
	c2, _ := commit()
	if c1 != c2 {
		t.Errorf("the same change on the same base made two commits: %s, %s", c1, c2)
	}
	info, err := g.Show(ctx, clone, c1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Parents, []string{base}) || !info.Date.Equal(date) || info.Message != strings.TrimSuffix(msg, "\n") {
		t.Errorf("Show = %+v", info)
	}
	if _, err := os.Stat(filepath.Join(clone, "new.txt")); err == nil {
		t.Error("the commit in a work tree changed the checkout")
	}

	// A new branch: the lease says it must not exist.
	none := ""
	res, err := g.Push(ctx, clone, "origin", Push{Commit: c1, Ref: "refs/heads/pin/update", Lease: &none})
	if err != nil || res.Status != "[new branch]" {
		t.Fatalf("push: %+v, %v", res, err)
	}
	refs, err := g.LsRemote(ctx, clone, "origin", "refs/heads/pin/*")
	if err != nil || refs["refs/heads/pin/update"] != c1 {
		t.Fatalf("ls-remote: %v, %v", refs, err)
	}
	// Someone else moves the branch: a lease on what was read refuses.
	other := t.TempDir()
	must(t, g, other, "clone", "--quiet", "--branch", "pin/update", remote, "o")
	od := filepath.Join(other, "o")
	os.WriteFile(filepath.Join(od, "a.txt"), []byte("theirs\n"), 0o644)
	must(t, g, od, "commit", "--quiet", "-am", "theirs")
	must(t, g, od, "push", "--quiet", "origin", "pin/update")
	_, err = g.Push(ctx, clone, "origin", Push{Commit: base, Ref: "refs/heads/pin/update", Lease: &c1})
	var rej *PushRejectedError
	if !errors.As(err, &rej) || !errors.Is(err, ErrStale) {
		t.Fatalf("push over a moved branch: %v", err)
	}
	if refs, _ := g.LsRemote(ctx, clone, "origin", "refs/heads/pin/update"); refs["refs/heads/pin/update"] == base {
		t.Error("the moved branch was overwritten")
	}
	// A lease on what it names now holds.
	theirs := must(t, g, od, "rev-parse", "HEAD")
	if res, err := g.Push(ctx, clone, "origin", Push{Commit: c1, Ref: "refs/heads/pin/update", Lease: &theirs}); err != nil || !strings.Contains(res.Status, "forced update") {
		t.Fatalf("push with a true lease: %+v, %v", res, err)
	}
}

func TestPushToNowhere(t *testing.T) {
	g, ctx := testGit(t), context.Background()
	_, clone := repo(t, g)
	base := must(t, g, clone, "rev-parse", "HEAD")
	_, err := g.Push(ctx, clone, filepath.Join(t.TempDir(), "missing.git"), Push{Commit: base, Ref: "refs/heads/x"})
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode == 0 {
		t.Fatalf("push to a missing remote: %v", err)
	}
}

// What the remote says is read on a push that succeeds too: a forge says
// there where it opened a request.
func TestPushReadsTheRemote(t *testing.T) {
	g, ctx := testGit(t), context.Background()
	remote, clone := repo(t, g)
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'Visit the pull request:'\necho '  http://forge.example/pulls/7'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	base := must(t, g, clone, "rev-parse", "HEAD")
	res, err := g.Push(ctx, clone, "origin", Push{Commit: base, Ref: "refs/for/main/topic", Force: true})
	if err != nil || res.Ref != "refs/for/main/topic" || !slices.Equal(res.Remote, []string{"Visit the pull request:", "http://forge.example/pulls/7"}) {
		t.Fatalf("push: %+v, %v", res, err)
	}
}

// The user's hooks do not run in pin's work tree or on its commit.
func TestNoHooks(t *testing.T) {
	g, ctx := testGit(t), context.Background()
	_, clone := repo(t, g)
	base := must(t, g, clone, "rev-parse", "HEAD")
	hooks, ran := t.TempDir(), filepath.Join(t.TempDir(), "ran")
	for _, h := range []string{"post-checkout", "pre-commit", "commit-msg", "post-commit"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho "+h+" >>"+ran+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, g, clone, "config", "core.hooksPath", hooks)
	wt := filepath.Join(t.TempDir(), "wt")
	if err := g.AddWorktree(ctx, clone, wt, base); err != nil {
		t.Fatal(err)
	}
	defer g.RemoveWorktree(ctx, clone, wt)
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("b\n"), 0o644)
	if _, err := g.Commit(ctx, wt, Commit{Paths: []string{"a.txt"}, Message: "m\n", Date: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Errorf("hooks ran: %s", b)
	}
}
