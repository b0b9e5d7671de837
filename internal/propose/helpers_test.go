package propose

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/git"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// repoRoot holds the incident: catalogue.hcl and examples/incident.
var repoRoot, _ = filepath.Abs("../..")

var now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// fixture is a user's checkout of a repository holding the incident, and
// the bare repository it was cloned from (its origin).
type fixture struct {
	t      *testing.T
	git    git.Git
	remote string
	clone  string
	cache  string
}

// testGit is the user's git: an identity in a global configuration of
// the test's own, nothing of the machine's.
func testGit(t *testing.T) git.Git {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	write(t, cfg, "[user]\n\tname = Pin Test\n\temail = pin@example.org\n[init]\n\tdefaultBranch = main\n")
	return git.Git{Env: []string{"GIT_CONFIG_GLOBAL=" + cfg, "GIT_CONFIG_NOSYSTEM=1"}}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) git_(dir string, args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), f.git.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// copyTree copies the folder src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot is mesh-1's snapshot with only the containers keep names (all
// when keep is nil).
func snapshot(t *testing.T, keep ...string) string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal([]byte(read(t, filepath.Join(repoRoot, "examples/incident/mesh-1.json"))), &s); err != nil {
		t.Fatal(err)
	}
	if keep != nil {
		cs := []any{}
		for _, c := range s["containers"].([]any) {
			for _, k := range keep {
				if c.(map[string]any)["name"] == k {
					cs = append(cs, c)
				}
			}
		}
		s["containers"] = cs
	}
	b, _ := json.MarshalIndent(s, "", " ")
	return string(b) + "\n"
}

// newFixture makes the incident's repository: the catalogue at its root
// (edited by edit, when not nil), the layout mirror and mesh-1's
// snapshot, and the old lock, written when the modules were: mesh-1 ran
// none of them, so it names every pin. main holds it; the clone is fresh.
func newFixture(t *testing.T, edit func(string) string) *fixture {
	t.Helper()
	f := &fixture{t: t, git: testGit(t), cache: t.TempDir()}
	dir := t.TempDir()
	f.remote, f.clone = filepath.Join(dir, "remote.git"), filepath.Join(dir, "clone")
	f.git_(dir, "init", "--quiet", "--bare", f.remote)
	seed := filepath.Join(dir, "seed")
	f.git_(dir, "clone", "--quiet", f.remote, seed)
	cat := read(t, filepath.Join(repoRoot, "catalogue.hcl"))
	if edit != nil {
		cat = edit(cat)
	}
	write(t, filepath.Join(seed, "catalogue.hcl"), cat)
	copyTree(t, filepath.Join(repoRoot, "examples/incident/registry"), filepath.Join(seed, "examples/incident/registry"))
	write(t, filepath.Join(seed, "examples/incident/mesh-1.json"), snapshot(t, []string{}...) /* mesh-1 runs nothing yet */)
	f.resolveIn(seed)
	write(t, filepath.Join(seed, "examples/incident/mesh-1.json"), snapshot(t))
	f.git_(seed, "add", "-A")
	f.git_(seed, "commit", "--quiet", "-m", "the incident, with the lock of when its modules were written")
	f.git_(seed, "push", "--quiet", "origin", "main")
	f.git_(dir, "clone", "--quiet", f.remote, f.clone)
	return f
}

// resolveIn writes the lock of dir's catalogue, as pin resolve does.
func (f *fixture) resolveIn(dir string) *resolve.Plan {
	f.t.Helper()
	in, err := f.load(context.Background(), filepath.Join(dir, "catalogue.hcl"), filepath.Join(dir, "pin.lock.hcl"))
	if err != nil {
		f.t.Fatal(err)
	}
	p := resolve.Resolve(context.Background(), resolve.Input{Catalogue: in.Catalogue, Old: in.Lock, Observed: in.Observed, Registry: in.Registries.For, Now: now})
	if p.Failed() || p.Refused() {
		f.t.Fatalf("resolving %s: failed or refused", dir)
	}
	if _, err := lock.WriteFile(filepath.Join(dir, "pin.lock.hcl"), lock.Format(p.Lock())); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) load(ctx context.Context, cat, lk string) (*source.Inputs, error) {
	in, _, err := source.Load(ctx, source.Request{Catalogue: cat, Lock: lk, Options: source.Options{Offline: true, CacheDir: f.cache}})
	return in, err
}

// options are the run's options in the clone.
func (f *fixture) options() Options {
	return Options{Dir: f.clone, Catalogue: "catalogue.hcl", Lock: "pin.lock.hcl", Now: now}
}

func (f *fixture) deps() Deps { return Deps{Git: f.git, Load: f.load} }

func (f *fixture) run(o Options) (*Result, error) {
	f.t.Helper()
	return Run(context.Background(), o, f.deps())
}

// branch is what the remote's branch names, "" when it does not exist.
func (f *fixture) branch(name string) string {
	f.t.Helper()
	out := f.git_(f.remote, "for-each-ref", "--format=%(objectname)", "refs/heads/"+name)
	return out
}

// show is path at commit on the remote.
func (f *fixture) show(commit, path string) string {
	f.t.Helper()
	return f.git_(f.remote, "show", commit+":"+path) + "\n"
}

// commitToMain commits a change of the files on the remote's main, as a
// person merging something would.
func (f *fixture) commitToMain(files map[string]string) {
	f.t.Helper()
	dir := filepath.Join(f.t.TempDir(), "other")
	f.git_(filepath.Dir(dir), "clone", "--quiet", f.remote, dir)
	for p, s := range files {
		write(f.t, filepath.Join(dir, p), s)
	}
	f.git_(dir, "add", "-A")
	f.git_(dir, "commit", "--quiet", "-m", "a change on main")
	f.git_(dir, "push", "--quiet", "origin", "main")
}

// tree lists every file of dir with its content, .git left out.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func errorsAs[T error](err error) (T, bool) {
	var target T
	ok := errors.As(err, &target)
	return target, ok
}
