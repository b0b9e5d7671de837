//go:build !linux

package main

import "os"

// maxRSSKiB is 0 outside Linux: the benchmark measures on Linux.
func maxRSSKiB(*os.ProcessState) int64 { return 0 }
