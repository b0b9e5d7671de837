package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMalformedLockAdvice: a lock a bad merge broke (a "}" gone) is
// reported with its line and column, and with what to do: restore it
// from version control, because deleting it forgets every floor it held.
// Nothing is written.
func TestMalformedLockAdvice(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	p := filepath.Join(dir, "pin.lock.hcl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "\n}\n")
	broken := string(b[:i+1]) + string(b[i+3:])
	os.WriteFile(p, []byte(broken), 0o644)
	r := pin(t, dir, "resolve")
	golden(t, "messages.malformed-lock.txt", fmt.Sprintf("exit %d\n%s%s", r.code, r.stdout, r.stderr))
	if r.code != exitInput {
		t.Errorf("exit %d, want %d", r.code, exitInput)
	}
	for _, want := range []string{"pin.lock.hcl:", "git checkout -- pin.lock.hcl", "forgets every floor"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("no %q in\n%s", want, r.stderr)
		}
	}
	if after, _ := os.ReadFile(p); string(after) != broken {
		t.Errorf("the lock changed")
	}
}
