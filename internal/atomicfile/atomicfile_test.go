package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// symlink makes a symbolic link, or skips where the platform or the user
// may not (Windows without Developer Mode).
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("symbolic links need Developer Mode or an administrator here: %v", err)
		}
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
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

// names lists a folder's entries, to tell that no temporary file is left.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func isLink(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()&fs.ModeSymlink != 0
}

// mode is the permission bits of path, as the platform keeps them (on
// Windows only the read-only bit: 0444 or 0666).
func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestWriteThroughLinks: a link, a chain of links across folders, and a
// relative link in a folder reached through a linked folder, all stay
// links; the file at the end of each gets the bytes, keeps its mode, and
// no temporary file is left in either folder.
func TestWriteThroughLinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup makes the files under root and returns the path written
		// and the file that must receive the bytes.
		setup func(t *testing.T, root string) (path, target string)
	}{
		{"a link to a file in another folder", func(t *testing.T, root string) (string, string) {
			target := filepath.Join(root, "shared", "pin.lock.hcl")
			write(t, target, "old\n", 0o640)
			os.Mkdir(filepath.Join(root, "repo"), 0o755)
			symlink(t, target, filepath.Join(root, "repo", "pin.lock.hcl"))
			return filepath.Join(root, "repo", "pin.lock.hcl"), target
		}},
		{"a chain of relative links", func(t *testing.T, root string) (string, string) {
			target := filepath.Join(root, "c", "deploy.env")
			write(t, target, "old\n", 0o640)
			os.MkdirAll(filepath.Join(root, "a"), 0o755)
			os.MkdirAll(filepath.Join(root, "b"), 0o755)
			symlink(t, filepath.Join("..", "c", "deploy.env"), filepath.Join(root, "b", "env"))
			symlink(t, filepath.Join("..", "b", "env"), filepath.Join(root, "a", "deploy.env"))
			return filepath.Join(root, "a", "deploy.env"), target
		}},
		{"a relative link inside a linked folder", func(t *testing.T, root string) (string, string) {
			// /root/repo/deploy → /root/srv/deploy, and deploy/compose.yaml
			// → ../shared/compose.yaml: the system reads it from
			// /root/srv/deploy, so the file is /root/srv/shared/compose.yaml,
			// not /root/repo/shared/compose.yaml.
			target := filepath.Join(root, "srv", "shared", "compose.yaml")
			write(t, target, "old\n", 0o640)
			write(t, filepath.Join(root, "repo", "shared", "compose.yaml"), "decoy\n", 0o644)
			os.MkdirAll(filepath.Join(root, "srv", "deploy"), 0o755)
			symlink(t, filepath.Join("..", "shared", "compose.yaml"), filepath.Join(root, "srv", "deploy", "compose.yaml"))
			symlink(t, filepath.Join(root, "srv", "deploy"), filepath.Join(root, "repo", "deploy"))
			return filepath.Join(root, "repo", "deploy", "compose.yaml"), target
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path, target := tc.setup(t, root)
			before := mode(t, target)
			wrote, err := Write(path, []byte("new\n"), Options{Force: true})
			if err != nil || !wrote {
				t.Fatalf("Write: %v %v", wrote, err)
			}
			if !isLink(t, path) {
				t.Errorf("%s is no longer a link", path)
			}
			if got := read(t, target); got != "new\n" {
				t.Errorf("the link's target holds %q", got)
			}
			if got := read(t, path); got != "new\n" {
				t.Errorf("the path reads %q", got)
			}
			if got := mode(t, target); got != before {
				t.Errorf("mode %v, want %v", got, before)
			}
			for _, d := range []string{filepath.Dir(path), filepath.Dir(target)} {
				for _, n := range names(t, d) {
					if strings.HasPrefix(n, ".") {
						t.Errorf("left %s in %s", n, d)
					}
				}
			}
		})
	}
}

// TestWriteKeepsMode: a 0600 file (an env file holding secrets) stays
// 0600, and a new file gets the mode asked for.
func TestWriteKeepsMode(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "deploy.env")
	write(t, secret, "TOKEN=x\n", 0o600)
	if _, err := Write(secret, []byte("TOKEN=x\nWEB_IMAGE=y\n"), Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	want := fs.FileMode(0o600)
	if runtime.GOOS == "windows" {
		want = 0o666
	}
	if got := mode(t, secret); got != want {
		t.Errorf("a 0600 file became %v", got)
	}
	fresh := filepath.Join(dir, "new.env")
	if _, err := Write(fresh, []byte("x\n"), Options{Mode: 0o600}); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, fresh); got != want {
		t.Errorf("a new file asked as 0600 is %v", got)
	}
}

// TestWriteReadOnlyFile: a read-only file stays read-only after it is
// replaced (on Windows too, where the rename needs it writable).
func TestWriteReadOnlyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pin.lock.hcl")
	write(t, p, "old\n", 0o444)
	if _, err := Write(p, []byte("new\n"), Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "new\n" {
		t.Errorf("holds %q", got)
	}
	if got := mode(t, p); got&0o222 != 0 {
		t.Errorf("a read-only file became %v", got)
	}
}

// TestWriteRefusals: what Write leaves alone, each with its error, the
// file as it was and nothing created.
func TestWriteRefusals(t *testing.T) {
	notPins := func(b []byte) bool { return strings.HasPrefix(string(b), "# pin") }
	old := []byte("old\n")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) string
		opts  Options
		want  error
	}{
		{"a dangling link", func(t *testing.T, dir string) string {
			symlink(t, filepath.Join(dir, "elsewhere", "pin.lock.hcl"), filepath.Join(dir, "pin.lock.hcl"))
			os.Mkdir(filepath.Join(dir, "elsewhere"), 0o755)
			return filepath.Join(dir, "pin.lock.hcl")
		}, Options{}, ErrDanglingLink},
		{"a chain ending nowhere", func(t *testing.T, dir string) string {
			symlink(t, "b", filepath.Join(dir, "a"))
			symlink(t, "c", filepath.Join(dir, "b"))
			return filepath.Join(dir, "a")
		}, Options{}, ErrDanglingLink},
		{"a loop of links", func(t *testing.T, dir string) string {
			symlink(t, "b", filepath.Join(dir, "a"))
			symlink(t, "a", filepath.Join(dir, "b"))
			return filepath.Join(dir, "a")
		}, Options{}, ErrTooManyLinks},
		{"a folder", func(t *testing.T, dir string) string {
			os.Mkdir(filepath.Join(dir, "compose.pin.yaml"), 0o755)
			return filepath.Join(dir, "compose.pin.yaml")
		}, Options{}, ErrNotRegular},
		{"a link to a folder", func(t *testing.T, dir string) string {
			os.Mkdir(filepath.Join(dir, "d"), 0o755)
			symlink(t, "d", filepath.Join(dir, "compose.pin.yaml"))
			return filepath.Join(dir, "compose.pin.yaml")
		}, Options{Force: true}, ErrNotRegular},
		{"a file pin did not write", func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "compose.pin.yaml"), "# mine\nservices: {}\n", 0o644)
			return filepath.Join(dir, "compose.pin.yaml")
		}, Options{Owned: notPins}, ErrNotOwned},
		{"a file, and no way to tell pin's own", func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "catalogue.hcl"), "module \"web\" {}\n", 0o644)
			return filepath.Join(dir, "catalogue.hcl")
		}, Options{}, ErrNotOwned},
		{"a linked file pin did not write", func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "real.yaml"), "# mine\nservices: {}\n", 0o644)
			symlink(t, "real.yaml", filepath.Join(dir, "compose.pin.yaml"))
			return filepath.Join(dir, "compose.pin.yaml")
		}, Options{Owned: notPins}, ErrNotOwned},
		{"changed since read", func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "deploy.env"), "edited\n", 0o644)
			return filepath.Join(dir, "deploy.env")
		}, Options{Since: &old, Force: true}, ErrChanged},
		{"created since read", func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "deploy.env"), "someone's\n", 0o644)
			return filepath.Join(dir, "deploy.env")
		}, Options{Since: new([]byte)}, ErrChanged},
		{"removed since read", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "deploy.env")
		}, Options{Since: &old}, ErrChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before := snapshot(t, dir)
			if _, err := Check(path, []byte("new\n"), tc.opts); !errors.Is(err, tc.want) {
				t.Errorf("Check: %v, want %v", err, tc.want)
			}
			wrote, err := Write(path, []byte("new\n"), tc.opts)
			var e *Error
			if wrote || !errors.Is(err, tc.want) || !errors.As(err, &e) || e.Path != path {
				t.Fatalf("Write: %v, %v; want %v for %s", wrote, err, tc.want, path)
			}
			if d := snapshot(t, dir); !maps(d, before) {
				t.Errorf("the folder changed:\n%v\n%v", before, d)
			}
		})
	}
}

// snapshot is the folder's tree: each name, and a file's content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		out[p] = "dir"
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		} else if d.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			out[p] = "-> " + l
		}
		return nil
	})
	return out
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestWriteAccepts: what Write may replace: pin's own file, a file it
// did not write when forced, an empty file, the content it read, a new
// file when it read none.
func TestWriteAccepts(t *testing.T) {
	pins := func(b []byte) bool { return strings.HasPrefix(string(b), "# pin") }
	old := []byte("old\n")
	for _, tc := range []struct {
		name    string
		content string // "" : no file
		opts    Options
	}{
		{"pin's own", "# pin\nold\n", Options{Owned: pins}},
		{"forced", "# mine\n", Options{Owned: pins, Force: true}},
		{"empty", " \n", Options{Owned: pins}},
		{"empty, no way to tell pin's own", "\n", Options{}},
		{"absent, no way to tell pin's own", "", Options{}},
		{"forced, no way to tell pin's own", "mine\n", Options{Force: true}},
		{"as read", "old\n", Options{Since: &old}},
		{"absent as read", "", Options{Since: new([]byte(nil))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			if tc.content != "" {
				write(t, p, tc.content, 0o644)
			}
			if wrote, err := Write(p, []byte("new\n"), tc.opts); err != nil || !wrote {
				t.Fatalf("Write: %v %v", wrote, err)
			}
			if got := read(t, p); got != "new\n" {
				t.Errorf("holds %q", got)
			}
		})
	}
}

// TestWriteUnchangedWritesNothing: the same bytes leave the file itself
// in place (same inode, same modification time), even one pin did not
// write.
func TestWriteUnchangedWritesNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pin.lock.hcl")
	write(t, p, "same\n", 0o644)
	before, _ := os.Stat(p)
	wrote, err := Write(p, []byte("same\n"), Options{Owned: func([]byte) bool { return false }})
	if err != nil || wrote {
		t.Fatalf("Write: %v %v", wrote, err)
	}
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("the file was replaced")
	}
}

// TestRemoveStaleFollowsLinks: the temporary files of killed writes are
// beside the link's target, and go from there; the link's folder keeps
// its own files.
func TestRemoveStaleFollowsLinks(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "shared", "pin.lock.hcl")
	write(t, target, "x", 0o644)
	os.Mkdir(filepath.Join(root, "repo"), 0o755)
	symlink(t, target, filepath.Join(root, "repo", "pin.lock.hcl"))
	stale := filepath.Join(root, "shared", ".pin.lock.hcl4417286590")
	write(t, stale, "half", 0o644)
	kept := []string{filepath.Join(root, "shared", ".pin.lock.hcl.bak"), filepath.Join(root, "repo", ".pin.lock.hcl12")}
	for _, k := range kept {
		write(t, k, "x", 0o644)
	}
	removed, err := RemoveStale(filepath.Join(root, "repo", "pin.lock.hcl"))
	if err != nil || !slices.Equal(removed, []string{stale}) {
		t.Fatalf("removed %v, %v; want %s", removed, err, stale)
	}
	for _, k := range kept {
		if _, err := os.Stat(k); err != nil {
			t.Errorf("%s removed", k)
		}
	}
}

// TestWriteNamesItsTemporaryFile: the temporary file is "." + the target's
// name + digits, in the target's folder: what RemoveStale finds after a
// write was killed.
func TestWriteNamesItsTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	f, tmp, err := createTemp(dir, "pin.lock.hcl", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	removed, err := RemoveStale(filepath.Join(dir, "pin.lock.hcl"))
	if err != nil || !slices.Equal(removed, []string{tmp}) {
		t.Errorf("RemoveStale found %v (%v), want the temporary file %s", removed, err, tmp)
	}
}
