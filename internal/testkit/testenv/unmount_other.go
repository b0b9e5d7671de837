//go:build !linux

package testenv

// UnmountUnder: a dockerd of a test's own runs on Linux alone.
func UnmountUnder(string) {}
