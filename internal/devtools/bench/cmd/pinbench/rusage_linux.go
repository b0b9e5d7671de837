package main

import (
	"os"
	"syscall"
)

// maxRSSKiB is the peak RSS of a process that ended, in KiB (ru_maxrss,
// kilobytes on Linux).
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
