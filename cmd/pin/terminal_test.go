package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRegularFileIsNoTerminal: output sent to a file gets neither colour
// nor a progress line, on every platform.
func TestRegularFileIsNoTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || useColor(f) {
		t.Error("a regular file taken for a terminal")
	}
}
