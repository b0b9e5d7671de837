package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanHostSameAfterResolve(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := pin(t, dir, "plan", "mesh-1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	golden(t, "incident.cutover.txt", r.stdout)
}

// TestPlanHostGatesDowngrade: a lock that still names the old pins (the
// downgrade accepted in the catalogue) makes the cutover preview say
// downgrade for each service and exit 1.
func TestPlanHostGatesDowngrade(t *testing.T) {
	dir := incidentDir(t, func(s string) string {
		s = strings.ReplaceAll(s, `policy  = "at-least-running"`, `policy  = "exact"
  allow_downgrade = "testing the gate"
  restore = "backup forge-db"`)
		s = strings.ReplaceAll(s, `policy = "at-least-running"`, `policy = "exact"
  allow_downgrade = "testing the gate"`)
		return s
	})
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatalf("resolve: %s", r.stderr)
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Contains(lockSrc, []byte(`allow_downgrade = "testing the gate"`)) {
		t.Fatalf("lock does not carry the downgrade reason:\n%s", lockSrc)
	}
	r := pin(t, dir, "plan", "mesh-1", "--format", "json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var out cutoverOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range out.Items {
		got[it.Module] = it.Verdict + "/" + it.Rule
	}
	want := map[string]string{"analytics": "downgrade/created", "forge": "downgrade/version", "packages": "downgrade/version"}
	if len(got) != 3 || got["analytics"] != want["analytics"] || got["forge"] != want["forge"] || got["packages"] != want["packages"] || out.Safe {
		t.Errorf("verdicts = %v (safe %v), want %v", got, out.Safe, want)
	}
}

func TestPlanHostUnknownHost(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "plan", "mesh-9"); r.code != 2 || !strings.Contains(r.stderr, `host "mesh-9" is not in the catalogue`) {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
}

// TestLockFromHostWritesSnapshot: "pin lock --from-host" gives the same lock
// as resolve here, and the snapshot it writes, used offline, gives it again.
func TestLockFromHostWritesSnapshot(t *testing.T) {
	ref := incidentDir(t, nil)
	if r := pin(t, ref, "resolve"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	want, _ := os.ReadFile(filepath.Join(ref, "pin.lock.hcl"))

	dir := incidentDir(t, nil)
	r := pin(t, dir, "lock", "--from-host", "mesh-1", "--snapshot", "taken.json")
	if r.code != 0 {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Equal(got, want) {
		t.Errorf("lock --from-host differs from resolve:\n%s\n---\n%s", got, want)
	}
	orig, _ := os.ReadFile(filepath.Join(repoRoot, "examples/incident/mesh-1.json"))
	taken, err := os.ReadFile(filepath.Join(dir, "taken.json"))
	if err != nil || !bytes.Equal(orig, taken) {
		t.Errorf("snapshot written differs from what was read (err %v)", err)
	}
	if r := pin(t, dir, "lock"); r.code != 2 {
		t.Errorf("lock without --from-host: exit %d", r.code)
	}
}
