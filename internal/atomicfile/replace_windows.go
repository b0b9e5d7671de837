//go:build windows

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/windows"
)

// busyFor is how long replace retries a rename over a file another
// program holds open.
const busyFor = 2 * time.Second

// keepOwner does nothing: Windows files have no Unix owner, and their
// access lists are the folder's to give.
func keepOwner(*os.File, fs.FileInfo) {}

// replace moves tmp over target with MoveFileEx (replace existing, write
// through): atomic on one NTFS volume, and on disk when it returns. It
// fails while another program holds target open without sharing its
// deletion: replace retries for busyFor, then returns ErrBusy. A read-only
// target is made writable for the move (tmp already carries the bit), and
// read-only again when the move fails.
func replace(tmp, target string, info fs.FileInfo) error {
	readOnly := info != nil && info.Mode().Perm()&0o200 == 0
	if readOnly {
		if err := os.Chmod(target, 0o666); err != nil {
			return fmt.Errorf("making the read-only file writable for its replacement: %w", unwrapPath(err))
		}
	}
	err := retry(func() error { return moveFile(tmp, target) }, busy, busyFor, time.Sleep)
	if err == nil {
		return nil
	}
	if readOnly {
		_ = os.Chmod(target, info.Mode().Perm())
	}
	if busy(err) {
		return fmt.Errorf("%w, or pin may not write it (%v, tried for %s); close it and run pin again", ErrBusy, err, busyFor)
	}
	return err
}

// moveFile is MoveFileEx(from, to, MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH), with long paths spelled as Windows needs them.
func moveFile(from, to string) error {
	f, err := windows.UTF16PtrFromString(longPath(from))
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(longPath(to))
	if err != nil {
		return err
	}
	return windows.MoveFileEx(f, t, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
}

// longPath prefixes an absolute drive path of 248 characters or more with
// \\?\, past which the plain form fails.
func longPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil || len(abs) < 248 || strings.HasPrefix(abs, `\\`) {
		return p
	}
	return `\\?\` + abs
}

// busy tells the errors of a file held open by another program.
func busy(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

// syncDir does nothing: MOVEFILE_WRITE_THROUGH has made the move durable.
func syncDir(string) {}
