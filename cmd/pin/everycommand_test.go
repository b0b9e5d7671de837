package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandAsksTheOrphanLock: with the lock of an environment
// the catalogue no longer declares beside the lock (staging renamed
// stage), every command that writes a lock refuses (exit 2, naming the
// orphan, every lock byte-identical) and every command that writes none
// warns of it and goes on: each asks source for the same value, whatever
// the lock it is given (beside --lock, or pin propose's work tree copy
// of one environment's).
func TestEveryCommandAsksTheOrphanLock(t *testing.T) {
	gitUser(t)
	w := newLockedEnvWorld(t)
	renamed := strings.NewReplacer(`environment "staging"`, `environment "stage"`, `from  = "staging"`, `from  = "stage"`).Replace(fmt.Sprintf(envModules, "at-least-running"))
	w.world.write([]string{"registry.example.org"}, renamed)
	bare := filepath.Join(t.TempDir(), "origin.git")
	gitIn(t, w.dir, "init", "--quiet", "--bare", bare)
	gitIn(t, w.dir, "init", "--quiet", "-b", "main")
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", "staging renamed stage, its lock left")
	gitIn(t, w.dir, "remote", "add", "origin", bare)
	gitIn(t, w.dir, "push", "--quiet", "origin", "main")
	staging, production := filepath.Join(w.dir, "pin.lock.staging.hcl"), filepath.Join(w.dir, "pin.lock.production.hcl")
	before := readFileT(t, staging) + readFileT(t, production)
	const refusal = "pin.lock.staging.hcl: the lock of an environment the catalogue no longer declares"
	const warning = "pin: warning: pin.lock.staging.hcl is the lock of an environment the catalogue no longer declares"
	for _, args := range [][]string{
		{"resolve"},
		{"lock", "--from-host", "p1"},
		{"promote", "stage", "production"},
		{"propose", "--dry-run", "--environment", "production"},
		{"propose", "--dry-run", "--environment", "production", "--promote", "stage"},
	} {
		r := pin(t, w.dir, args...)
		if r.code != exitInput || !strings.Contains(r.stderr, refusal) {
			t.Errorf("pin %s with staging's lock orphaned: exit %d, want %d and the refusal\n%s%s", strings.Join(args, " "), r.code, exitInput, r.stdout, r.stderr)
		}
		if after := readFileT(t, staging) + readFileT(t, production); after != before {
			t.Fatalf("pin %s, refused, changed a lock", strings.Join(args, " "))
		}
	}
	for _, args := range [][]string{
		{"plan", "s1"},
		{"status"},
		{"outdated"},
		{"verify"},
	} {
		r := pin(t, w.dir, args...)
		if r.code == exitInput || strings.Count(r.stderr, warning) != 1 || strings.Contains(r.stderr, refusal) {
			t.Errorf("pin %s with staging's lock orphaned: exit %d, want it warned of once and not refused\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if after := readFileT(t, staging) + readFileT(t, production); after != before {
		t.Error("a command that writes no lock changed one")
	}
}

// TestEveryCommandAsksTheMovedHost: p1 moved from production to staging
// since production's lock recorded what ran on it. Every command that
// rewrites production's lock without deciding staging refuses (exit 2,
// naming the move, every lock byte-identical), whether it resolves,
// promotes or proposes; every command that writes no lock goes on
// without that refusal.
func TestEveryCommandAsksTheMovedHost(t *testing.T) {
	gitUser(t)
	w := newLockedEnvWorld(t)
	moved := strings.NewReplacer(`hosts = ["p1"]`, `hosts = []`, `hosts = ["s1"]`, `hosts = ["s1", "p1"]`).Replace(fmt.Sprintf(envModules, "at-least-running"))
	w.world.write([]string{"registry.example.org"}, moved)
	bare := filepath.Join(t.TempDir(), "origin.git")
	gitIn(t, w.dir, "init", "--quiet", "--bare", bare)
	gitIn(t, w.dir, "init", "--quiet", "-b", "main")
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", "p1 moved to staging")
	gitIn(t, w.dir, "remote", "add", "origin", bare)
	gitIn(t, w.dir, "push", "--quiet", "origin", "main")
	staging, production := filepath.Join(w.dir, "pin.lock.staging.hcl"), filepath.Join(w.dir, "pin.lock.production.hcl")
	before := readFileT(t, staging) + readFileT(t, production)
	if !strings.Contains(before, `"p1"`) {
		t.Fatalf("no lock recorded p1 before the move:\n%s", before)
	}
	const refusal = "pin.lock.production.hcl recorded what ran on p1, which is environment staging's host now"
	for _, args := range [][]string{
		{"resolve", "--environment", "production"},
		{"promote", "staging", "production"},
		{"propose", "--dry-run", "--environment", "production"},
		{"propose", "--dry-run", "--environment", "production", "--promote", "staging"},
	} {
		r := pin(t, w.dir, args...)
		if r.code != exitInput || !strings.Contains(r.stderr, refusal) {
			t.Errorf("pin %s after p1 moved: exit %d, want %d and the refusal\n%s%s", strings.Join(args, " "), r.code, exitInput, r.stdout, r.stderr)
		}
		if after := readFileT(t, staging) + readFileT(t, production); after != before {
			t.Fatalf("pin %s, refused, changed a lock", strings.Join(args, " "))
		}
	}
	for _, args := range [][]string{
		{"resolve", "--environment", "production", "--check"},
		{"plan", "p1"},
		{"status"},
		{"outdated"},
		{"verify"},
	} {
		if r := pin(t, w.dir, args...); r.code == exitInput || strings.Contains(r.stderr, refusal) {
			t.Errorf("pin %s after p1 moved: exit %d, refused\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if after := readFileT(t, staging) + readFileT(t, production); after != before {
		t.Error("a command that writes no lock changed one")
	}
}
