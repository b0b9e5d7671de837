//go:build windows

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
)

// folderLock is a LockFileEx lock on a file that stands for the folder:
// Windows does not lock a folder's handle. The file is in the user's
// temporary folder, named by a hash of the folder's path (case folded, as
// Windows compares paths), so that no file appears beside the lock. Runs
// of one user exclude each other; runs of two users on one folder do
// not, as their temporary folders differ.
func folderLock(dir string) (*flock.Flock, error) {
	p := lockFileFor(os.TempDir(), dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, err
	}
	return flock.New(p), nil
}

// lockFileFor is the file under tmp that stands for dir.
func lockFileFor(tmp, dir string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(dir))))
	return filepath.Join(tmp, "pin-locks", hex.EncodeToString(sum[:16])+".lock")
}
