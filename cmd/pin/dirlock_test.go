package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockDirExcludes: while one run holds the lock on a lockfile's
// folder, a second waits and says so, and gives up when its context ends;
// once released, the lock is free. A lockfile that is a symbolic link is
// locked in its target's folder, so a run through the link and a run on
// the target exclude each other. Built for every platform: on Windows the
// lock is a file standing for the folder.
func TestLockDirExcludes(t *testing.T) {
	root := t.TempDir()
	shared := filepath.Join(root, "shared")
	os.Mkdir(shared, 0o755)
	target := filepath.Join(shared, "pin.lock.hcl")
	os.WriteFile(target, nil, 0o644)
	link := filepath.Join(root, "pin.lock.hcl")
	linked := os.Symlink(target, link) == nil

	var out bytes.Buffer
	s := streams{In: strings.NewReader(""), Out: &out, Err: &out}
	unlock, err := lockDir(context.Background(), target, s)
	if err != nil {
		t.Fatal(err)
	}
	second := []string{target}
	if linked {
		second = append(second, link)
	}
	for _, p := range second {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		un, err := lockDir(ctx, p, s)
		cancel()
		if err == nil {
			un()
			t.Errorf("a second lock through %s was taken", p)
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a second lock through %s: %v", p, err)
		}
		if !strings.Contains(out.String(), "pin: waiting for another pin run") || !strings.Contains(out.String(), shared) {
			t.Errorf("the second run did not say it waits for %s:\n%s", shared, out.String())
		}
		out.Reset()
	}
	unlock()
	again, err := lockDir(context.Background(), second[len(second)-1], s)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}
