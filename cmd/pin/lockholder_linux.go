package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockHolder is the process that holds the flock on dir, as Linux lists
// it in /proc/locks (the holder's PID, and the locked file's device and
// inode); 0 when none is listed or it cannot be told.
func lockHolder(dir string) int {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0
	}
	return holderIn(procLocks(), fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino))
}

func procLocks() string {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	return string(b)
}

// holderIn finds, in the text of /proc/locks, the holder of a flock on the
// file id ("MAJ:MIN:INODE"). A holder's line reads
// "1: FLOCK  ADVISORY  WRITE 3356 fe:00:1837219 0 EOF"; a waiter's has
// "->" after the number and is not the holder.
func holderIn(locks, id string) int {
	for line := range strings.Lines(locks) {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != id {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
