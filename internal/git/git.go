package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Git runs the git on PATH. The zero value is ready to use.
type Git struct {
	// Env is added to the process's environment for every command
	// (tests set HOME, GIT_CONFIG_GLOBAL and the like).
	Env []string
}

// Error is a git command that failed.
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return RedactURL(fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg))
}

func (e *Error) Unwrap() error { return e.Err }

// run runs git with args in dir and returns its stdout.
func (g Git) run(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, error) {
	out, _, err := g.run2(ctx, dir, env, stdin, args...)
	return out, err
}

// run2 runs git with args in dir and returns its stdout and stderr.
func (g Git) run2(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	// A prompt for credentials would hang a CI job: git fails instead.
	cmd.Env = append(append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), g.Env...), env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return out.String(), errb.String(), &Error{Args: args, ExitCode: code, Stderr: errb.String(), Err: err}
	}
	return out.String(), errb.String(), nil
}

// noHooks runs no hook of the user's: a work tree pin checks out and a
// commit it makes hold what pin wrote, and nothing a hook does (git
// commit --no-verify still runs post-commit; worktree add, post-checkout).
const noHooks = "core.hooksPath=/dev/null"

// TopLevel returns the root of the work tree that holds dir; an error
// when dir is not in one.
func (g Git) TopLevel(ctx context.Context, dir string) (string, error) {
	out, err := g.run(ctx, dir, nil, "", "rev-parse", "--show-toplevel")
	return strings.TrimSpace(out), err
}

// Status returns the work tree's changes, one "XY path" entry each, as
// git status --porcelain writes them: changes to tracked files, staged or
// not, and untracked files that are not ignored.
func (g Git) Status(ctx context.Context, dir string) ([]string, error) {
	out, err := g.run(ctx, dir, nil, "", "status", "--porcelain=v1", "-z", "--untracked-files=normal")
	if err != nil {
		return nil, err
	}
	var entries []string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		entries = append(entries, f)
		if f[0] == 'R' || f[0] == 'C' { // a rename's source follows
			i++
		}
	}
	return entries, nil
}

// DefaultBranch returns the branch the remote's HEAD names ("main").
func (g Git) DefaultBranch(ctx context.Context, dir, remote string) (string, error) {
	out, err := g.run(ctx, dir, nil, "", "ls-remote", "--symref", remote, "HEAD")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if ref, ok := strings.CutPrefix(sc.Text(), "ref: "); ok {
			ref, _, _ = strings.Cut(ref, "\t")
			if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
				return b, nil
			}
		}
	}
	return "", fmt.Errorf("remote %s names no default branch (HEAD)", remote)
}

// LsRemote returns the remote's refs matching patterns (as git ls-remote
// takes them), by name, each with the commit it names.
func (g Git) LsRemote(ctx context.Context, dir, remote string, patterns ...string) (map[string]string, error) {
	out, err := g.run(ctx, dir, nil, "", append([]string{"ls-remote", "--", remote}, patterns...)...)
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		sha, ref, ok := strings.Cut(sc.Text(), "\t")
		if ok && !strings.HasSuffix(ref, "^{}") {
			refs[ref] = sha
		}
	}
	return refs, sc.Err()
}

// Fetch fetches ref (a full ref name) from remote and returns the commit it
// names. In a shallow clone (as CI checks out) only that commit is fetched;
// a full clone stays full. The commit is read from a ref of the fetch's
// own, removed after, not from FETCH_HEAD, which another run may write
// at the same time.
func (g Git) Fetch(ctx context.Context, dir, remote, ref string) (string, error) {
	tmp := fmt.Sprintf("refs/pin-propose/fetch-%d-%d", os.Getpid(), fetchSeq.Add(1))
	args := []string{"fetch", "--no-tags", "--quiet", "--no-write-fetch-head"}
	if out, err := g.run(ctx, dir, nil, "", "rev-parse", "--is-shallow-repository"); err == nil && strings.TrimSpace(out) == "true" {
		args = append(args, "--depth=1")
	}
	if _, err := g.run(ctx, dir, nil, "", append(args, remote, "+"+ref+":"+tmp)...); err != nil {
		return "", err
	}
	defer g.run(context.WithoutCancel(ctx), dir, nil, "", "update-ref", "-d", tmp)
	out, err := g.run(ctx, dir, nil, "", "rev-parse", "--verify", tmp+"^{commit}")
	return strings.TrimSpace(out), err
}

var fetchSeq atomic.Int64

// AddWorktree checks commit out, detached, into a new work tree at path.
func (g Git) AddWorktree(ctx context.Context, dir, path, commit string) error {
	_, err := g.run(ctx, dir, nil, "", "-c", noHooks, "worktree", "add", "--detach", "--quiet", path, commit)
	return err
}

// RemoveWorktree removes the work tree at path, and its files.
func (g Git) RemoveWorktree(ctx context.Context, dir, path string) error {
	_, err := g.run(ctx, dir, nil, "", "worktree", "remove", "--force", path)
	return err
}

// Reset makes the work tree dir exactly commit again: every change and
// every file git does not track is gone.
func (g Git) Reset(ctx context.Context, dir, commit string) error {
	if _, err := g.run(ctx, dir, nil, "", "reset", "--hard", "--quiet", commit); err != nil {
		return err
	}
	_, err := g.run(ctx, dir, nil, "", "clean", "-fdq")
	return err
}

// Commit is what Commit records.
type Commit struct {
	// Paths are the files to commit, relative to the work tree: changed,
	// new or removed.
	Paths []string
	// Message is the whole commit message.
	Message string
	// Date is the author and committer date.
	Date time.Time
}

// Commit stages c.Paths in the work tree dir and commits them on its
// HEAD, with the user's identity and signing settings, and no hooks: the
// commit holds what pin wrote and nothing a hook adds. It returns the new
// commit, or "" when the paths hold no change.
func (g Git) Commit(ctx context.Context, dir string, c Commit) (string, error) {
	if _, err := g.run(ctx, dir, nil, "", append([]string{"add", "--all", "--"}, c.Paths...)...); err != nil {
		return "", err
	}
	if _, err := g.run(ctx, dir, nil, "", "diff", "--cached", "--quiet"); err == nil {
		return "", nil
	} else if e := (*Error)(nil); !errors.As(err, &e) || e.ExitCode != 1 {
		return "", err
	}
	date := "@" + strconv.FormatInt(c.Date.Unix(), 10) + " +0000"
	env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	if _, err := g.run(ctx, dir, env, c.Message, "-c", noHooks, "commit", "--quiet", "--no-verify", "--cleanup=verbatim", "--file=-"); err != nil {
		return "", err
	}
	out, err := g.run(ctx, dir, nil, "", "rev-parse", "--verify", "HEAD^{commit}")
	return strings.TrimSpace(out), err
}

// CommitInfo is what a commit holds, besides its files.
type CommitInfo struct {
	Tree    string
	Parents []string
	// Date is the committer date.
	Date time.Time
	// Message is the whole message, without its final newline.
	Message string
}

// Show reads commit.
func (g Git) Show(ctx context.Context, dir, commit string) (CommitInfo, error) {
	out, err := g.run(ctx, dir, nil, "", "show", "--no-patch", "--format=%T%x00%P%x00%ct%x00%B", commit+"^{commit}", "--")
	if err != nil {
		return CommitInfo{}, err
	}
	f := strings.SplitN(out, "\x00", 4)
	if len(f) != 4 {
		return CommitInfo{}, fmt.Errorf("git show %s: unexpected output", commit)
	}
	ct, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return CommitInfo{}, fmt.Errorf("git show %s: committer date %q: %w", commit, f[2], err)
	}
	// The message without its final newlines, however many git keeps.
	msg := strings.TrimRight(f[3], "\n")
	return CommitInfo{Tree: f[0], Parents: strings.Fields(f[1]), Date: time.Unix(ct, 0).UTC(), Message: msg}, nil
}

// RemoteURL is the URL remote fetches from.
func (g Git) RemoteURL(ctx context.Context, dir, remote string) (string, error) {
	out, err := g.run(ctx, dir, nil, "", "remote", "get-url", remote)
	return strings.TrimSpace(out), err
}
