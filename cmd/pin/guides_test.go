package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guideFolder makes the fresh folder the offline and CI guides start
// from: the incident's snapshot as mesh-1.json, its registry as the mirror
// folder (as the guide's block after folderMarker says), and the guide's
// own catalogue, its first block after marker, as catalogue.hcl.
func guideFolder(t *testing.T, guide, folderMarker, marker string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "mirror"), os.DirFS(filepath.Join(repoRoot, "examples", "incident", "registry"))); err != nil {
		t.Fatal(err)
	}
	snap := mustRead(t, filepath.Join(repoRoot, "examples", "incident", "mesh-1.json"))
	if err := os.WriteFile(filepath.Join(dir, "mesh-1.json"), snap, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range docBlock(t, guide, folderMarker) {
		if l != "" && l != "cp /path/to/pin/examples/incident/mesh-1.json mesh-1.json" && l != "cp -r /path/to/pin/examples/incident/registry mirror" {
			t.Fatalf("%s: the folder's commands changed (%q): update guideFolder", guide, l)
		}
	}
	cat := strings.Join(docBlock(t, guide, marker), "\n")
	if !strings.HasPrefix(cat, "host ") {
		t.Fatalf("%s: no catalogue after %q:\n%s", guide, marker, cat)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGuideOffline: the offline guide's catalogue, commands and outputs,
// word for word.
func TestGuideOffline(t *testing.T) {
	const guide = "docs/guides/offline.md"
	dir := guideFolder(t, guide, "Here they are the incident's", "Then `catalogue.hcl`:")
	r := pin(t, dir, "--offline", "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin --offline resolve", docBlock(t, guide, "`pin --offline resolve` takes"), r.stdout)
	r = pin(t, dir, "--offline", "outdated")
	if r.code != exitOK {
		t.Fatalf("outdated: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin --offline outdated", docBlock(t, guide, "and `pin --offline outdated` reports"), trimLines(r.stdout))
}

// TestGuideCI: the CI guide's pull request that would downgrade, word for
// word: the warning before a lock, the lock, then the refusal and the
// error annotation once forge's policy is exact.
func TestGuideCI(t *testing.T) {
	const guide = "docs/guides/ci.md"
	dir := guideFolder(t, guide, "(in CI the catalogue names the real", "and `catalogue.hcl`:")
	r := pin(t, dir, "outdated", "--format", "github")
	if r.code != exitOK {
		t.Fatalf("outdated before a lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin outdated --format github, no lock", docBlock(t, guide, "Before any lock is committed"), r.stdout)
	if r := pin(t, dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lockBefore := mustRead(t, filepath.Join(dir, "pin.lock.hcl"))
	if !strings.Contains(string(lockBefore), "1.27.3") {
		t.Fatalf("the lock does not name 1.27.3, as the guide says:\n%s", lockBefore)
	}
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy = "at-least-running"`, `policy = "exact"`, 1)
	})
	r = pin(t, dir, "resolve", "--check")
	if r.code != exitFindings {
		t.Fatalf("resolve --check, exact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin resolve --check, exact", docBlock(t, guide, "`pin resolve --check` refuses it"), r.stdout)
	r = pin(t, dir, "outdated", "--format", "github")
	if r.code != exitFindings {
		t.Fatalf("outdated, exact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin outdated --format github, exact", docBlock(t, guide, "puts the error on the line"), r.stdout)
	if got := mustRead(t, filepath.Join(dir, "pin.lock.hcl")); string(got) != string(lockBefore) {
		t.Errorf("the refusals changed the lock")
	}
}
