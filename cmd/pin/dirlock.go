package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// lockDir takes an exclusive lock on the lockfile's folder (the folder of
// the file a symbolic link at lockPath names: two checkouts linking to one
// lock share it), so that two runs that write the same lock do not
// interleave; a second run waits, and says for whom where the platform
// tells (lockHolder). How a folder is locked is the platform's
// (folderLock).
func lockDir(ctx context.Context, lockPath string, s streams) (func(), error) {
	target := lockPath
	if real, err := filepath.EvalSymlinks(lockPath); err == nil {
		target = real
	}
	dir, err := filepath.Abs(filepath.Dir(target))
	if err != nil {
		return nil, withCode(exitInput, fmt.Errorf("locking the folder of %s: %w", lockPath, err))
	}
	fl, err := folderLock(dir)
	if err != nil {
		return nil, withCode(exitInput, fmt.Errorf("locking %s: %w", dir, err))
	}
	ok, err := fl.TryLock()
	if err != nil {
		return nil, withCode(exitInput, fmt.Errorf("locking %s: %w", dir, err))
	}
	if !ok {
		who := "another pin run"
		if pid := lockHolder(dir); pid > 0 {
			who = fmt.Sprintf("another pin run (process %d)", pid)
		}
		fmt.Fprintf(s.Err, "pin: waiting for %s to release %s\n", who, dir)
		if _, err := fl.TryLockContext(ctx, 100*time.Millisecond); err != nil {
			return nil, withCode(exitInput, fmt.Errorf("waiting for the lock on %s: %w", dir, err))
		}
	}
	return func() { _ = fl.Unlock() }, nil
}
