//go:build !windows

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteKeepsOwner: a file owned by another user and group (a deploy
// user's env file, written by pin run as root) keeps its owner and group,
// and its set-group-ID bit, when pin replaces it.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("giving a file to another user needs root, which CI runs as")
		}
		t.Skip("giving a file to another user needs root; scripts/test runs as root")
	}
	root := t.TempDir()
	target := filepath.Join(root, "deploy", "deploy.env")
	write(t, target, "A=1\n", 0o640)
	if err := os.Chown(target, 4321, 8765); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, os.ModeSetgid|0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "deploy.env")
	symlink(t, target, link)
	if _, err := Write(link, []byte("A=2\n"), Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 4321 || st.Gid != 8765 {
		t.Errorf("owner %d:%d, want 4321:8765", st.Uid, st.Gid)
	}
	if fi.Mode()&os.ModeSetgid == 0 || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the set-group-ID bit and 0640", fi.Mode())
	}
}
