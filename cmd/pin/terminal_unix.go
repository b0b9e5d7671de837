//go:build !windows

package main

import "os"

// escapes: a Unix terminal interprets escape sequences.
func escapes(*os.File) bool { return true }
