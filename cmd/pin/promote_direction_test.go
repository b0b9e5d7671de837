package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPromoteFollowsFrom: the catalogue says production { from =
// "staging" }; pin promote production staging, and pin propose
// --environment staging --promote production, are refused for their
// direction (exit 2), naming the declared one, even when production
// runs the newer build (which would otherwise be promoted the wrong
// way); every lock is as it was and nothing is pushed.
func TestPromoteFollowsFrom(t *testing.T) {
	gitUser(t)
	w := newEnvWorld(t)
	w.runsSince("s1", "1.2.0", 48*time.Hour)
	w.runsSince("s2", "1.2.0", 48*time.Hour)
	w.runsSince("p1", "1.3.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	remote := promoteCheckout(t, w)
	var b strings.Builder
	for _, args := range [][]string{
		{"promote", "production", "staging"},
		{"propose", "--environment", "staging", "--promote", "production"},
	} {
		before := files(t, w.dir)
		r := pin(t, w.dir, args...)
		fmt.Fprintf(&b, "$ pin %s\nexit %d\n%s%s\n", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		if r.code != exitInput {
			t.Errorf("pin %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.code, exitInput, r.stdout, r.stderr)
		}
		sameFiles(t, "pin "+strings.Join(args, " "), before, files(t, w.dir))
	}
	golden(t, "promote.direction.txt", b.String())
	if br := branches(t, remote); len(br) != 0 {
		t.Errorf("pushed %v", br)
	}
}
