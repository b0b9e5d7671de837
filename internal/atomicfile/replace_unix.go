//go:build !windows

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of the file fi describes, where
// the process may (root may; a user may give a group it is in); otherwise
// the new file is the writer's, as with any program that saves by rename.
func keepOwner(f *os.File, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if f.Chown(int(st.Uid), int(st.Gid)) != nil {
		_ = f.Chown(-1, int(st.Gid))
	}
}

// replace renames tmp over target: atomic on one filesystem.
func replace(tmp, target string, _ fs.FileInfo) error {
	if err := os.Rename(tmp, target); err != nil {
		return unwrapLink(err)
	}
	return nil
}

// syncDir makes the rename in dir durable. Filesystems that cannot sync a
// folder say so with an error, which changes nothing: the rename is done.
func syncDir(dir string) {
	if dir == "" {
		dir = "."
	}
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
