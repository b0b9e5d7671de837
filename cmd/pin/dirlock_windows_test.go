//go:build windows

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLockFileFor: the file that stands for a folder is in the temporary
// folder, and one folder spelled in two cases, or with a trailing
// separator, is one lock; two folders are two.
func TestLockFileFor(t *testing.T) {
	tmp := `C:\Users\dev\AppData\Local\Temp`
	a := lockFileFor(tmp, `C:\Work\Deploy`)
	if !strings.HasPrefix(a, filepath.Join(tmp, "pin-locks")+`\`) || !strings.HasSuffix(a, ".lock") {
		t.Errorf("lock file %s", a)
	}
	if b := lockFileFor(tmp, `c:\work\deploy\`); b != a {
		t.Errorf("one folder, two locks: %s, %s", a, b)
	}
	if c := lockFileFor(tmp, `C:\Work\Other`); c == a {
		t.Error("two folders, one lock")
	}
}
