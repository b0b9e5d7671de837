package testenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Environment variables of the git daemon scripts/test starts.
const (
	// EnvGitURL is the daemon's git://127.0.0.1:PORT; a repository ROOT/x.git
	// is git://127.0.0.1:PORT/x.git.
	EnvGitURL = "PIN_TEST_GIT_URL"
	// EnvGitRoot is the folder it serves, receive-pack on.
	EnvGitRoot = "PIN_TEST_GIT_ROOT"
)

// GitRemote is a bare repository the test git daemon serves, whose
// pre-receive hook records every push it is given.
type GitRemote struct {
	// URL is what git fetches and pushes with; Dir the bare repository.
	URL, Dir string
}

// GitPush is one push the remote received.
type GitPush struct {
	// Options are the push options (git push -o), in order.
	Options []string
	// Refs are the updates, "OLD NEW REF" each.
	Refs []string
}

// recordHook records, per push, a "push" line, the push options and the
// ref updates (it accepts every push).
const recordHook = `#!/bin/sh
{
	echo push
	i=0
	while [ "$i" -lt "${GIT_PUSH_OPTION_COUNT:-0}" ]; do
		printf 'option %s\n' "$(printenv "GIT_PUSH_OPTION_$i")"
		i=$((i + 1))
	done
	while read -r old new ref; do
		echo "ref $old $new $ref"
	done
} >>pushes.log
`

// NewGitRemote makes a bare repository named name (made unique) on the
// test git daemon, with push options advertised
// (receive.advertisePushOptions) and the recording pre-receive hook.
func NewGitRemote(t testing.TB, name string) *GitRemote {
	t.Helper()
	url := lookup(t, "git daemon", runHint, EnvGitURL)
	root := lookup(t, "git daemon", runHint, EnvGitRoot)
	if out, err := exec.Command("git", "ls-remote", url+"/probe.git").CombinedOutput(); err != nil {
		unavailable(t, "git daemon", runHint, "%s=%s does not answer: %v: %s", EnvGitURL, url, err, out)
	}
	dir, err := os.MkdirTemp(root, name+"-*.git")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, args := range [][]string{
		{"init", "--quiet", "--bare", "--initial-branch=main", dir},
		{"-C", dir, "config", "receive.advertisePushOptions", "true"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("testenv: git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "hooks", "pre-receive"), []byte(recordHook), 0o755); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return &GitRemote{URL: url + "/" + filepath.Base(dir), Dir: dir}
}

// Pushes are the pushes the remote received so far.
func (r *GitRemote) Pushes(t testing.TB) []GitPush {
	t.Helper()
	f, err := os.Open(filepath.Join(r.Dir, "pushes.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer f.Close()
	var out []GitPush
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "push":
			out = append(out, GitPush{})
		case len(out) == 0:
			t.Fatalf("testenv: pushes.log starts with %q", l)
		case strings.HasPrefix(l, "option "):
			out[len(out)-1].Options = append(out[len(out)-1].Options, strings.TrimPrefix(l, "option "))
		case strings.HasPrefix(l, "ref "):
			out[len(out)-1].Refs = append(out[len(out)-1].Refs, strings.TrimPrefix(l, "ref "))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return out
}

// String names the remote in messages.
func (r *GitRemote) String() string { return fmt.Sprintf("%s (%s)", r.URL, r.Dir) }
