package lock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/atomicfile"
)

func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("symbolic links need Developer Mode here: %v", err)
		}
		t.Fatal(err)
	}
}

// TestSaveThroughALink: a pin.lock.hcl that is a symbolic link (here to a
// 0600 lock in another folder, through a second link) stays a link; the
// file it names gets the new lock and keeps its mode; the temporary file
// was made, and is gone, in that file's folder.
func TestSaveThroughALink(t *testing.T) {
	root := t.TempDir()
	shared := filepath.Join(root, "shared")
	repo := filepath.Join(root, "repo")
	os.Mkdir(shared, 0o755)
	os.Mkdir(repo, 0o755)
	target := filepath.Join(shared, "team.lock.hcl")
	if _, err := Save(target, &Lock{Hosts: []string{"old"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o600); err != nil {
		t.Fatal(err)
	}
	symlinkOrSkip(t, "team.lock.hcl", filepath.Join(shared, "current.lock.hcl"))
	path := filepath.Join(repo, DefaultPath)
	symlinkOrSkip(t, filepath.Join("..", "shared", "current.lock.hcl"), path)

	l := sample()
	wrote, err := Save(path, l)
	if err != nil || !wrote {
		t.Fatalf("Save: %v %v", wrote, err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link: %v", path, err)
	}
	got, err := os.ReadFile(target)
	if err != nil || string(got) != string(Format(l)) {
		t.Fatalf("the link's target does not hold the new lock (%v):\n%s", err, got)
	}
	if fi, _ := os.Stat(target); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the lock's mode became %v", fi.Mode().Perm())
	}
	for _, dir := range []string{shared, repo} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("left %s in %s", e.Name(), dir)
			}
		}
	}
	// Loaded through the link, the lock is the one saved, and unchanged
	// it is not written again.
	if _, src, diags := Load(path); diags.HasErrors() || string(src) != string(Format(l)) {
		t.Fatalf("Load through the link: %v", diags)
	}
	if wrote, err := Save(path, l); wrote || err != nil {
		t.Errorf("an unchanged lock was written again: %v %v", wrote, err)
	}
}

// TestWriteFileRefusesWhatIsNotALock: a pin.lock.hcl that is not a lock
// (someone's notes, a catalogue saved under the wrong name) is not
// replaced; a lock without pin's header comment, and an empty file, are.
func TestWriteFileRefusesWhatIsNotALock(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		replaced      bool
	}{
		{"notes", "remember: forge stays at 1.27\n", false},
		{"a catalogue", "module \"forge\" {\n  image  = \"registry.example.org/forge/forgejo\"\n  policy = \"at-least-running\"\n}\n", false},
		{"a lock without its header", strings.SplitN(string(Format(sample())), "\n\n", 2)[1], true},
		{"pin's lock", string(Format(&Lock{Hosts: []string{"h"}})), true},
		{"empty", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), DefaultPath)
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			wrote, err := WriteFile(p, Format(sample()))
			got, _ := os.ReadFile(p)
			if tc.replaced {
				if err != nil || !wrote || string(got) != string(Format(sample())) {
					t.Fatalf("not replaced: %v %v", wrote, err)
				}
				return
			}
			if wrote || !errors.Is(err, atomicfile.ErrNotOwned) || !strings.Contains(err.Error(), "writing lockfile "+p+": not written by pin: it is not a lock") {
				t.Fatalf("WriteFile: %v, %v", wrote, err)
			}
			if string(got) != tc.content {
				t.Errorf("the file was changed:\n%s", got)
			}
		})
	}
}

// TestDanglingLockLink: a pin.lock.hcl linking to nothing (the shared
// folder not mounted, the target renamed) is not an empty lock: Load says
// so, and WriteFile neither replaces the link nor creates its target.
func TestDanglingLockLink(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "mnt"), 0o755)
	path := filepath.Join(dir, DefaultPath)
	symlinkOrSkip(t, filepath.Join(dir, "mnt", "pin.lock.hcl"), path)
	_, _, diags := Load(path)
	if !diags.HasErrors() || diags[0].Summary != "Lockfile link names no file" || !strings.Contains(diags[0].Detail, filepath.Join(dir, "mnt", "pin.lock.hcl")) {
		t.Fatalf("Load: %v", diags)
	}
	wrote, err := WriteFile(path, Format(sample()))
	if wrote || !errors.Is(err, atomicfile.ErrDanglingLink) {
		t.Fatalf("WriteFile: %v %v", wrote, err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mnt", "pin.lock.hcl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link's target was created: %v", err)
	}
}
