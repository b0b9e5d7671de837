package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// block is module name's block in a lock, or "".
func block(lock, name string) string {
	return regexp.MustCompile(`(?s)\nmodule "` + regexp.QuoteMeta(name) + `" \{\n.*?\n\}\n`).FindString(lock)
}

// TestResolveNamedModules: "pin resolve forge" decides forge alone. The
// lock starts with forge missing, packages missing, analytics hand-edited
// (a reason a full run rewrites) and an entry for a module gone from the
// catalogue (which a full run removes): only forge changes.
func TestResolveNamedModules(t *testing.T) {
	dir := incidentLocked(t)
	full := readLock(t, dir)
	edited := strings.Replace(full, block(full, "forge"), "", 1)
	edited = strings.Replace(edited, block(full, "packages"), "", 1)
	edited = strings.Replace(edited, `reason  = "mesh-1/analytics runs`, `reason  = "edited by hand: mesh-1/analytics runs`, 1)
	ghost := strings.Replace(block(full, "analytics"), `module "analytics"`, `module "ghost"`, 1)
	edited += ghost
	if block(edited, "forge") != "" || !strings.Contains(edited, "edited by hand") || block(edited, "ghost") == "" {
		t.Fatal("lock edit did not apply")
	}
	lockPath := filepath.Join(dir, "pin.lock.hcl")
	writeFile(t, lockPath, edited)

	// The oracle: a full run would change all three others.
	if r := pin(t, dir, "resolve", "--check"); r.code != 1 {
		t.Fatalf("resolve --check: exit %d, want 1 (the edits are changes)\n%s", r.code, r.stderr)
	}

	r := pin(t, dir, "resolve", "forge")
	if r.code != 0 {
		t.Fatalf("resolve forge: exit %d\n%s", r.code, r.stderr)
	}
	got := readLock(t, dir)
	if b := block(got, "forge"); b != block(full, "forge") {
		t.Errorf("forge: got\n%s\nwant the entry a full run writes\n%s", b, block(full, "forge"))
	}
	if block(got, "packages") != "" {
		t.Error("packages was not named, yet it was added")
	}
	for _, name := range []string{"analytics", "ghost"} {
		if block(got, name) != block(edited, name) {
			t.Errorf("%s changed:\n%s\nwas\n%s", name, block(got, name), block(edited, name))
		}
	}
	if want := strings.Replace(edited, "\nmodule \"ghost\"", block(full, "forge")+"\nmodule \"ghost\"", 1); got != want {
		t.Errorf("the lock is not the old one with forge added:\n%s", got)
	}
	// The plan speaks of forge alone.
	if !strings.Contains(r.stdout, "forge (at-least-running): add") || strings.Contains(r.stdout, "analytics") || !strings.Contains(r.stdout, "Plan: 1 add.") {
		t.Errorf("plan:\n%s", r.stdout)
	}
	// A second run changes nothing.
	if r := pin(t, dir, "resolve", "forge", "--check"); r.code != 0 {
		t.Errorf("resolve forge --check after resolve forge: exit %d\n%s", r.code, r.stderr)
	}
}

// TestResolveNamedModuleKeepsFloors: naming a module does not skip its
// floors: an exact pin below what runs is still refused.
func TestResolveNamedModuleKeepsFloors(t *testing.T) {
	dir := incidentLocked(t)
	before := readLock(t, dir)
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy  = "at-least-running"
  pin     = "1.22.6@`, `policy  = "exact"
  pin     = "1.22.6@`, 1)
	})
	r := pin(t, dir, "resolve", "forge")
	if r.code != 1 || !strings.Contains(r.stderr, `module "forge": refusing a downgrade`) {
		t.Fatalf("exit %d, want 1 and a refusal\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "  refused  a downgrade (the reason follows the plan)\n") {
		t.Errorf("the plan does not say the refusal in words:\n%s", r.stdout)
	}
	if readLock(t, dir) != before {
		t.Error("the lock changed after a refused run")
	}
	// Naming another module leaves forge's (refusable) entry alone.
	if r := pin(t, dir, "resolve", "packages"); r.code != 0 {
		t.Errorf("resolve packages: exit %d\n%s", r.code, r.stderr)
	}
}

func TestResolveUnknownModule(t *testing.T) {
	dir := incidentLocked(t)
	before := readLock(t, dir)
	r := pin(t, dir, "resolve", "forge", "forj", "pakages")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	want := `pin: no modules "forj" and "pakages" in the catalogue; its modules are analytics, forge, packages` + "\n"
	if r.stderr != want {
		t.Errorf("stderr %q\nwant   %q", r.stderr, want)
	}
	if readLock(t, dir) != before {
		t.Error("the lock changed")
	}
}
