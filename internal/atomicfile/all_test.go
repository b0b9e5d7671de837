package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAllRefusalWritesNothing: a pair whose second file is refused
// (a link to a file moved away) leaves the first as it was: the files
// are judged before either is written.
func TestWriteAllRefusalWritesNothing(t *testing.T) {
	dir := t.TempDir()
	sig, body := filepath.Join(dir, "h1.json.sig"), filepath.Join(dir, "h1.json")
	write(t, sig, "old signature\n", 0o644)
	symlink(t, filepath.Join(dir, "moved", "h1.json"), body)
	before := snapshot(t, dir)
	err := WriteAll(File{Path: sig, Bytes: []byte("new signature\n"), Options: Options{Force: true}},
		File{Path: body, Bytes: []byte("{}\n"), Options: Options{Force: true}})
	if !errors.Is(err, ErrDanglingLink) {
		t.Fatalf("WriteAll: %v, want %v", err, ErrDanglingLink)
	}
	if after := snapshot(t, dir); !maps(after, before) {
		t.Errorf("the folder changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestWriteAllRestores: when the second write fails after the first was
// written, the first gets its old content back, or is removed when it did
// not exist.
func TestWriteAllRestores(t *testing.T) {
	for _, existed := range []bool{true, false} {
		dir := t.TempDir()
		first, second := filepath.Join(dir, "a.sig"), filepath.Join(dir, "a")
		if existed {
			write(t, first, "old signature\n", 0o600)
		}
		write(t, second, "old body\n", 0o644)
		before := snapshot(t, dir)
		broken := errors.New("disk full")
		beforeWrite = func(p string) error {
			if p == second {
				return broken
			}
			return nil
		}
		err := WriteAll(File{Path: first, Bytes: []byte("new signature\n"), Options: Options{Force: true}},
			File{Path: second, Bytes: []byte("new body\n"), Options: Options{Force: true}})
		beforeWrite = func(string) error { return nil }
		if !errors.Is(err, broken) {
			t.Fatalf("existed %v: WriteAll: %v, want %v", existed, err, broken)
		}
		if after := snapshot(t, dir); !maps(after, before) {
			t.Errorf("existed %v: the folder changed:\nbefore %s\nafter  %s", existed, before, after)
		}
		if !existed {
			if _, err := os.Lstat(first); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created and left: %v", first, err)
			}
		}
	}
}
