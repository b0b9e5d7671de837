package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/host"
)

// TestPromoteRequiresHealthyRun: staging runs 1.3.0 on both hosts for two
// days, but on s2 the container of the build exited (code 137): pin
// promote and pin propose --promote refuse it, naming the host, the
// container, what the engine reported and since when, and every lock is
// byte-identical; pin status shows it as a finding on staging's cell.
// Healthy on both hosts, it is promoted, with the health seen recorded.
func TestPromoteRequiresHealthyRun(t *testing.T) {
	gitUser(t)
	w := newEnvWorld(t)
	w.runsSince("s1", "1.3.0", 48*time.Hour)
	w.runsSince("s2", "1.3.0", 48*time.Hour)
	w.runsSince("p1", "1.2.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	crashed := testNow.Add(-3 * time.Hour)
	c := &w.hosts["s2"].Containers[0]
	c.State, c.Health = host.StateExited, host.Health{ExitCode: 137, FinishedAt: crashed}
	w.writePromote()
	remote := promoteCheckout(t, w)
	files := []string{"pin.lock.staging.hcl", "pin.lock.production.hcl"}
	before := map[string]string{}
	for _, f := range files {
		before[f] = readFileT(t, filepath.Join(w.dir, f))
	}
	unchanged := func(what string) {
		t.Helper()
		for _, f := range files {
			if after, _ := os.ReadFile(filepath.Join(w.dir, f)); string(after) != before[f] {
				t.Errorf("%s: %s changed", what, f)
			}
		}
	}
	const words = "s2/app exited (exit code 137) since 2026-11-30T21:00:00Z"

	r := pin(t, w.dir, "promote", "staging", "production")
	if r.code != exitFindings || !strings.Contains(r.stderr, `module "app": refusing to promote (unhealthy)`) || !strings.Contains(r.stderr, words) {
		t.Errorf("promote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	unchanged("promote")

	r = pin(t, w.dir, "propose", "--environment", "production", "--promote", "staging", "--format", "json")
	if r.code != exitFindings {
		t.Errorf("propose --promote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, proposeSchema(t), "propose --promote, unhealthy", r.stdout)
	var out proposeOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Proposals) != 0 || len(out.Refused) != 1 || out.Refused[0].Kind != "unhealthy" {
		t.Errorf("propose --promote: %v\n%s", err, r.stdout)
	}
	if b := branches(t, remote); len(b) != 0 {
		t.Errorf("an unhealthy promotion pushed %v", b)
	}
	unchanged("propose --promote")

	r = pin(t, w.dir, "status", "--format", "json")
	validate(t, compileSchemas(t)["status.schema.json"], "status --format json, unhealthy", r.stdout)
	var st statusOutput
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st.Modules) != 1 {
		t.Fatalf("status: %v\n%s", err, r.stdout)
	}
	stg := st.Modules[0].Cells[0]
	if stg.Environment != "staging" || !strings.Contains(strings.Join(stg.Findings, ","), "unhealthy") || len(stg.Unhealthy) != 1 || stg.Unhealthy[0] != words {
		t.Errorf("staging cell: %+v", stg)
	}
	if r := pin(t, w.dir, "status"); !strings.Contains(r.stdout, "unhealthy ("+words+")") {
		t.Errorf("status table:\n%s", r.stdout)
	}

	// Healthy on both hosts (s2's health check passing): promoted, the
	// health recorded.
	c = &w.hosts["s2"].Containers[0]
	c.State, c.Health = host.StateRunning, host.Health{Check: host.HealthHealthy, Since: testNow.Add(-47 * time.Hour)}
	commitHosts(t, w, "s2 healthy")
	wantHealth := []string{"s1/app: running, health not reported", "s2/app: running, healthy"}
	r = pin(t, w.dir, "propose", "--dry-run", "--environment", "production", "--promote", "staging", "--format", "json")
	validate(t, proposeSchema(t), "propose --promote --dry-run, healthy", r.stdout)
	var pr struct {
		Proposals []struct {
			Modules []struct {
				Promoted *struct{ Health []string } `json:"promoted"`
			} `json:"modules"`
		} `json:"proposals"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &pr); err != nil || len(pr.Proposals) != 1 || len(pr.Proposals[0].Modules) != 1 || pr.Proposals[0].Modules[0].Promoted == nil || !slices.Equal(pr.Proposals[0].Modules[0].Promoted.Health, wantHealth) {
		t.Errorf("propose --promote --format json: exit %d, health not %q (%v)\n%s%s", r.code, wantHealth, err, r.stdout, r.stderr)
	}
	r = pin(t, w.dir, "promote", "staging", "production")
	if r.code != exitOK {
		t.Fatalf("promote, healthy: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lf := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	if !strings.Contains(lf, `health  = ["s1/app: running, health not reported", "s2/app: running, healthy"]`) {
		t.Errorf("production's lock records no health:\n%s", lf)
	}
	// The JSON of promote (again: unchanged) and of status carries it too.
	r = pin(t, w.dir, "promote", "staging", "production", "--format", "json")
	validate(t, compileSchemas(t)["promote.schema.json"], "promote --format json", r.stdout)
	var po struct {
		Entries []struct {
			Promoted *struct{ Health []string } `json:"promoted"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &po); err != nil || len(po.Entries) != 1 || po.Entries[0].Promoted == nil || !slices.Equal(po.Entries[0].Promoted.Health, wantHealth) {
		t.Errorf("promote --format json: exit %d, health not %q (%v)\n%s%s", r.code, wantHealth, err, r.stdout, r.stderr)
	}
	r = pin(t, w.dir, "status", "--format", "json")
	validate(t, compileSchemas(t)["status.schema.json"], "status --format json, promoted", r.stdout)
	if !regexp.MustCompile(`"promoted": \{[^}]*"health": \[\s*"s1/app: running, health not reported",\s*"s2/app: running, healthy"\s*\]`).MatchString(r.stdout) {
		t.Errorf("status --format json: no promoted health\n%s", r.stdout)
	}
}
