package lock

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAllOrNone: a run's locks are written all or none: when one
// target would be refused (a file that is not a lock), no lock is
// written, the one that would have been first included; otherwise each
// that changed is written, and one that did not is left alone.
func TestWriteAllOrNone(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "pin.lock.a.hcl"), filepath.Join(dir, "pin.lock.b.hcl")
	notALock := "this is not a lock {\n"
	if err := os.WriteFile(b, []byte(notALock), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Lock{Hosts: []string{"h1"}}
	written, _, err := WriteAll([]Write{{Path: a, Lock: l}, {Path: b, Lock: l}})
	if err == nil || len(written) != 0 {
		t.Fatalf("WriteAll over a file that is not a lock: written %v, err %v", written, err)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("the first lock was written although the second was refused: %v", err)
	}
	if got, _ := os.ReadFile(b); string(got) != notALock {
		t.Errorf("the file that is not a lock changed: %q", got)
	}

	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	written, _, err = WriteAll([]Write{{Path: a, Lock: l}, {Path: b, Lock: l}})
	if err != nil || len(written) != 2 {
		t.Fatalf("WriteAll: written %v, err %v", written, err)
	}
	for _, p := range []string{a, b} {
		if got, _ := os.ReadFile(p); string(got) != string(Format(l)) {
			t.Errorf("%s: %q", p, got)
		}
	}
	if written, _, err = WriteAll([]Write{{Path: a, Lock: l}}); err != nil || len(written) != 0 {
		t.Errorf("WriteAll of an unchanged lock: written %v, err %v", written, err)
	}
}
