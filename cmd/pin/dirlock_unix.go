//go:build !windows

package main

import (
	"os"

	"github.com/gofrs/flock"
)

// folderLock is a flock(2) on the folder itself: nothing is created in
// it, and the lock goes with the process.
func folderLock(dir string) (*flock.Flock, error) {
	return flock.New(dir, flock.SetFlag(os.O_RDONLY)), nil
}
