//go:build windows

package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// escapes reports whether the console f writes to interprets escape
// sequences, turning that on (ENABLE_VIRTUAL_TERMINAL_PROCESSING, Windows
// 10 and later) where it is off. A console that cannot (older Windows)
// gets neither colour nor the progress line. A character device that is
// not a console (NUL) discards what it gets.
func escapes(f *os.File) bool {
	h := windows.Handle(f.Fd())
	var mode uint32
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return true
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}
