package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The side doors of the lock and the ordering, each on the repository's
// own incident (offline: the layout mirror and a snapshot of mesh-1). Each
// case exited 0 on the main branch with a lock, or a verdict, that goes
// below a floor.

// TestRenamedModuleKeepsItsFloor: module "forge", locked at 1.27.3 (what
// mesh-1/forgejo ran), is renamed "git" with the same image while its
// container is gone. The lock keeps 1.27.3 for git, the plan says which
// entry git took over, and a removed module's entry stays in the lock,
// retired, until a module takes it over.
func TestRenamedModuleKeepsItsFloor(t *testing.T) {
	dir := incidentLocked(t)
	editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
		return strings.Replace(s, `"name": "forgejo"`, `"name": "forgejo-old"`, 1)
	})
	rename := func(s string) string { return strings.Replace(s, `module "forge" {`, `module "git" {`, 1) }
	editFile(t, filepath.Join(dir, "catalogue.hcl"), rename)

	r := pin(t, dir, "resolve")
	if r.code != 0 || lockedDigest(t, readLock(t, dir), "git") != forge1273 {
		t.Fatalf("resolve after the rename: exit %d, git %s\n%s%s", r.code, lockedDigest(t, readLock(t, dir), "git"), r.stdout, r.stderr)
	}
	for _, want := range []string{
		"git (at-least-running): add 1.27.3",
		`inherits module "forge" 1.27.3@sha256:fe63af8ae93d (version 1.27.3, built 2026-09-01): its floor is this module's`,
		`forge (at-least-running): taken-over 1.27.3`,
		`module "git" takes over its floor: the entry leaves the lock`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the plan does not say %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(readLock(t, dir), `"forge"`) {
		t.Errorf("forge's entry stayed after git took it over:\n%s", readLock(t, dir))
	}
	if r := pin(t, dir, "resolve", "--check"); r.code != 0 {
		t.Errorf("resolve --check right after: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// exact with the old pin: refused, naming the rule and what to write.
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `module "git" {`, `module "git2" {`, 1)
	})
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy  = "at-least-running"`, `policy  = "exact"`, 1)
	})
	before := readLock(t, dir)
	r = pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr, `module "git2": refusing a downgrade: the exact pin is older than what the previous lock's entry for module "git" names`) ||
		!strings.Contains(r.stderr, "a rename or removal frees no floor") {
		t.Errorf("exact 1.22.6 renamed again: exit %d\n%s", r.code, r.stderr)
	}
	if readLock(t, dir) != before {
		t.Error("a refused run rewrote the lock")
	}
}

// TestRemovedModuleIsRetired: a module removed from the catalogue leaves a
// retired block in the lock, shown in every plan, and its floor holds when
// it comes back.
func TestRemovedModuleIsRetired(t *testing.T) {
	dir := incidentLocked(t)
	cat := filepath.Join(dir, "catalogue.hcl")
	full, err := os.ReadFile(cat)
	if err != nil {
		t.Fatal(err)
	}
	editFile(t, filepath.Join(dir, "mesh-1.json"), func(s string) string {
		return strings.Replace(s, `"name": "forgejo"`, `"name": "forgejo-old"`, 1)
	})
	editFile(t, cat, func(s string) string {
		i := strings.Index(s, "# Pinned at 1.22.6")
		j := strings.Index(s, "# Pinned at 6.10.1")
		return s[:i] + s[j:]
	})
	r := pin(t, dir, "resolve", "--format", "json")
	if r.code != 0 {
		t.Fatalf("resolve without forge: exit %d\n%s", r.code, r.stderr)
	}
	var out planOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	last := out.Modules[len(out.Modules)-1]
	if last.Name != "forge" || last.Change != "retire" || last.Old == nil || last.Old.Digest != forge1273 || !strings.Contains(last.Why, `retired "forge"`) {
		t.Errorf("forge in the plan: %+v", last)
	}
	lock := readLock(t, dir)
	if !strings.Contains(lock, "\nretired \"forge\" {\n") || lockedRetired(t, lock, "forge") != forge1273 {
		t.Fatalf("no retired block for forge:\n%s", lock)
	}
	r = pin(t, dir, "resolve")
	if r.code != 0 || !strings.Contains(r.stdout, "forge (at-least-running): retired 1.27.3") || !strings.Contains(r.stdout, "1 retired") || readLock(t, dir) != lock {
		t.Errorf("the next resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// forge comes back, as it was written: its floor holds.
	writeFile(t, cat, string(full))
	r = pin(t, dir, "resolve")
	if r.code != 0 || lockedDigest(t, readLock(t, dir), "forge") != forge1273 || strings.Contains(readLock(t, dir), "retired") {
		t.Errorf("forge added back: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, readLock(t, dir))
	}
}

// lockedRetired is the digest line of retired entry name in a lock.
func lockedRetired(t *testing.T, lock, name string) string {
	t.Helper()
	return lockedDigest(t, strings.Replace(lock, "retired \""+name+"\" {", "module \""+name+"\" {", 1), name)
}
