//go:build !linux

package main

// unmountUnder: a dockerd of a test's own runs on Linux alone.
func unmountUnder(string) {}
