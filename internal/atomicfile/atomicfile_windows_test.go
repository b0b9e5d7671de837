//go:build windows

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestBusyErrors: the errors of a file another program holds open are
// retried; others are not.
func TestBusyErrors(t *testing.T) {
	for err, want := range map[error]bool{
		windows.ERROR_ACCESS_DENIED:                               true,
		windows.ERROR_SHARING_VIOLATION:                           true,
		windows.ERROR_LOCK_VIOLATION:                              true,
		fmt.Errorf("moving: %w", windows.ERROR_SHARING_VIOLATION): true,
		windows.ERROR_FILE_NOT_FOUND:                              false,
		windows.ERROR_DISK_FULL:                                   false,
		errors.New("other"):                                       false,
	} {
		if got := busy(err); got != want {
			t.Errorf("busy(%v) = %v, want %v", err, got, want)
		}
	}
}

// TestWriteOverAnOpenFile: a file another handle holds open without
// sharing its deletion (as os.Open opens it) cannot be replaced: Write
// tries for busyFor, then says so with ErrBusy; the file keeps its bytes
// and no temporary file is left. Closed, it is replaced.
func TestWriteOverAnOpenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pin.lock.hcl")
	write(t, p, "old\n", 0o644)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wrote, err := Write(p, []byte("new\n"), Options{Force: true})
	if wrote || !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "close it and run pin again") {
		t.Fatalf("Write over an open file: %v, %v", wrote, err)
	}
	if d := time.Since(start); d < busyFor {
		t.Errorf("gave up after %v, before %v", d, busyFor)
	}
	f.Close()
	if got := read(t, p); got != "old\n" {
		t.Errorf("the open file now holds %q", got)
	}
	if n := names(t, dir); len(n) != 1 {
		t.Errorf("left %v", n)
	}
	if _, err := Write(p, []byte("new\n"), Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "new\n" {
		t.Errorf("holds %q", got)
	}
}

// TestLongPath: a path past Windows' 260 characters is written.
func TestLongPath(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 300 {
		dir = filepath.Join(dir, strings.Repeat("d", 50))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "pin.lock.hcl")
	for _, text := range []string{"a\n", "b\n"} {
		if _, err := Write(p, []byte(text), Options{Force: true}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, p); got != text {
			t.Errorf("holds %q, want %q", got, text)
		}
	}
}
