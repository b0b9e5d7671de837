//go:build linux

package main

import (
	"os"
	"testing"

	"github.com/gofrs/flock"
)

// TestHolderIn reads /proc/locks as Linux writes it: the holder of a
// flock on the file, not a waiter, nor a lock of another file or kind.
func TestHolderIn(t *testing.T) {
	locks := "1: POSIX  ADVISORY  WRITE 900 fe:00:42 0 EOF\n" +
		"2: FLOCK  ADVISORY  WRITE 3356 fe:00:1837219 0 EOF\n" +
		"2: -> FLOCK  ADVISORY  WRITE 4100 fe:00:1837219 0 EOF\n" +
		"3: FLOCK  ADVISORY  WRITE 77 fe:01:1837219 0 EOF\n"
	for id, want := range map[string]int{"fe:00:1837219": 3356, "fe:01:1837219": 77, "fe:00:42": 0, "fe:00:7": 0} {
		if got := holderIn(locks, id); got != want {
			t.Errorf("holderIn(%s) = %d, want %d", id, got, want)
		}
	}
}

// TestLockHolderIsThisProcess: a folder this process holds the lock of,
// as pin takes it, is named as held by this process's PID.
func TestLockHolderIsThisProcess(t *testing.T) {
	dir := t.TempDir()
	if got := lockHolder(dir); got != 0 {
		t.Errorf("no lock yet, and held by %d", got)
	}
	fl := flock.New(dir, flock.SetFlag(os.O_RDONLY))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatalf("locking %s: %v %v", dir, ok, err)
	}
	defer fl.Unlock()
	if got, want := lockHolder(dir), os.Getpid(); got != want {
		t.Errorf("lockHolder = %d, want this process, %d", got, want)
	}
}
