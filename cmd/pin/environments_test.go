package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// envWorld is a world with two environments: staging (host s1) and
// production (host p1), one module app (at-least-running, pin 1.1.0) on
// both, and app 1.0.0 … 1.3.0 in the mirror. The oracle is each build's
// version number, written here, not pin's ordering.
type envWorld struct {
	*world
	builds map[string]built
}

const envApp = "registry.example.org/team/app"

func newEnvWorld(t *testing.T) *envWorld {
	w := &envWorld{world: newWorld(t), builds: map[string]built{}}
	for i, v := range []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0"} {
		b := w.build("app "+v, v, fmt.Sprintf("2026-0%d-01T00:00:00Z", i+1))
		w.tag(envApp, v, b)
		w.builds[v] = b
	}
	return w
}

// runs sets what host h runs for app.
func (w *envWorld) runs(h, version string) {
	delete(w.hosts, h)
	w.run(h, "app", envApp, envApp+":"+version, w.builds[version])
}

const envModules = `module "app" {
  image  = "registry.example.org/team/app"
  policy = %q
  pin    = "1.1.0"
  runs_on "s1" { container = "app" }
  runs_on "p1" { container = "app" }
}

environment "staging" {
  hosts = ["s1"]
}

environment "production" {
  hosts = ["p1"]
  from  = "staging"
  soak  = "24h"
}
`

func (w *envWorld) write(policy string) {
	w.world.write([]string{"registry.example.org"}, fmt.Sprintf(envModules, policy))
}

// entryDigest is the digest line of a module entry (not of an observed
// block, which is indented further).
var entryDigest = regexp.MustCompile(`(?m)^  digest\s+= "(sha256:[0-9a-f]{64})"`)

// lockedVersion is the version app's entry names in the lock file at
// name in w's folder ("" when the file or the entry is not there).
func (w *envWorld) lockedVersion(name string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, name))
	if err != nil {
		return ""
	}
	if m := entryDigest.FindStringSubmatch(string(b)); m != nil {
		for v, built := range w.builds {
			if built.digest == m[1] {
				return v
			}
		}
	}
	w.t.Fatalf("%s names no build of app:\n%s", name, b)
	return ""
}

// TestEnvironmentsResolveEachOnItsOwn: each environment's lock is held
// against its own hosts and its own previous entries. Staging running
// older, or newer, never moves production's entry; production running
// older later never lowers it; staging's lock file and production's are
// separate files and pin.lock.hcl is not written.
func TestEnvironmentsResolveEachOnItsOwn(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("s1", "1.0.0")
	w.runs("p1", "1.2.0")
	w.write("at-least-running")
	r := pin(t, w.dir, "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// staging: the pin (1.1.0) beats what s1 runs (1.0.0); production:
	// what p1 runs (1.2.0) beats the pin.
	if s, p := w.lockedVersion("pin.lock.staging.hcl"), w.lockedVersion("pin.lock.production.hcl"); s != "1.1.0" || p != "1.2.0" {
		t.Errorf("staging %s, production %s; want 1.1.0 and 1.2.0\n%s", s, p, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "pin.lock.hcl")); err == nil {
		t.Error("pin.lock.hcl written for a catalogue with environments")
	}
	for _, want := range []string{"Environment production (pin.lock.production.hcl):", "Environment staging (pin.lock.staging.hcl):", "Wrote pin.lock.production.hcl.", "Wrote pin.lock.staging.hcl."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, r.stdout)
		}
	}

	// Staging moves to 1.3.0: staging's lock follows; production's does
	// not (staging's floors are not production's).
	w.runs("s1", "1.3.0")
	w.write("at-least-running")
	prodBefore := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	if s, p := w.lockedVersion("pin.lock.staging.hcl"), w.lockedVersion("pin.lock.production.hcl"); s != "1.3.0" || p != "1.2.0" {
		t.Errorf("staging %s, production %s; want 1.3.0 and 1.2.0", s, p)
	}
	if got := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl")); got != prodBefore {
		t.Errorf("production's lock changed by staging's run:\n%s", got)
	}

	// Production rolls back to 1.0.0 by hand, staging back to 1.0.0:
	// each lock keeps its own previous entry (monotone per environment).
	w.runs("s1", "1.0.0")
	w.runs("p1", "1.0.0")
	w.write("at-least-running")
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	if s, p := w.lockedVersion("pin.lock.staging.hcl"), w.lockedVersion("pin.lock.production.hcl"); s != "1.3.0" || p != "1.2.0" {
		t.Errorf("after rollbacks: staging %s, production %s; want 1.3.0 and 1.2.0", s, p)
	}

	// --environment restricts the run to the environments named.
	w.runs("p1", "1.3.0")
	w.write("at-least-running")
	stagingBefore := readFileT(t, filepath.Join(w.dir, "pin.lock.staging.hcl"))
	r = pin(t, w.dir, "resolve", "--environment", "production", "--format", "json")
	if r.code != exitOK {
		t.Fatalf("resolve --environment production: exit %d\n%s", r.code, r.stderr)
	}
	if p := w.lockedVersion("pin.lock.production.hcl"); p != "1.3.0" {
		t.Errorf("production %s, want 1.3.0", p)
	}
	if got := readFileT(t, filepath.Join(w.dir, "pin.lock.staging.hcl")); got != stagingBefore {
		t.Error("staging's lock written by a run of production alone")
	}
	var out planOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Environments) != 1 || out.Environments[0].Name != "production" || !out.Environments[0].Written ||
		len(out.Modules) != 1 || out.Modules[0].Environment != "production" {
		t.Errorf("plan: %+v", out)
	}
	validate(t, compileSchemas(t)["plan.schema.json"], "resolve --environment production", r.stdout)
	if r := pin(t, w.dir, "resolve", "--environment", "qa"); r.code != exitInput || !strings.Contains(r.stderr, `environment "qa" is not in the catalogue (environments: production, staging)`) {
		t.Errorf("unknown environment: exit %d\n%s", r.code, r.stderr)
	}
}

// TestEnvironmentsRefusalWritesNothing: a module refused in one
// environment leaves every environment's lock byte-identical, the
// others' included (all or nothing, as a refusal of one module of many).
func TestEnvironmentsRefusalWritesNothing(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("s1", "1.1.0")
	w.runs("p1", "1.1.0")
	w.write("exact")
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	staging, prod := readFileT(t, filepath.Join(w.dir, "pin.lock.staging.hcl")), readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	// Production runs 1.2.0 now: exact 1.1.0 is a downgrade there, and
	// refused. Staging, on its own, would change (its host's container
	// moved to 1.0.0 → an exact pin is fine, but the observation changes).
	w.runs("p1", "1.2.0")
	w.runs("s1", "1.0.0")
	w.write("exact")
	r := pin(t, w.dir, "resolve")
	if r.code != exitFindings || !strings.Contains(r.stderr, `refused to lock environment production: module "app"; pin.lock.production.hcl and pin.lock.staging.hcl left unchanged`) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := readFileT(t, filepath.Join(w.dir, "pin.lock.staging.hcl")); got != staging {
		t.Errorf("staging's lock written by a run refused in production:\n%s", got)
	}
	if got := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl")); got != prod {
		t.Errorf("production's lock written by a refused run:\n%s", got)
	}
	// Staging alone is not refused, and is written.
	if r := pin(t, w.dir, "resolve", "--environment", "staging"); r.code != exitOK {
		t.Fatalf("resolve --environment staging: exit %d\n%s", r.code, r.stderr)
	}
	if got := readFileT(t, filepath.Join(w.dir, "pin.lock.staging.hcl")); got == staging {
		t.Error("staging's lock not written by a run of staging alone")
	}
}

// TestEnvironmentsSeededFromTheLockBefore: declaring environments frees
// no floor: an environment without a lock file of its own takes its
// previous entries from the lock the catalogue had before.
func TestEnvironmentsSeededFromTheLockBefore(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("s1", "1.0.0")
	w.runs("p1", "1.3.0")
	// No environments yet: one lock, at 1.3.0 (what p1 runs).
	cat := strings.Split(fmt.Sprintf(envModules, "at-least-running"), "environment ")[0]
	w.world.write([]string{"registry.example.org"}, cat)
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	// p1 rolls back to 1.0.0, and environments are declared: production's
	// entry stays 1.3.0, its previous entry's; so does staging's (the
	// lock before was staging's too).
	w.runs("p1", "1.0.0")
	w.write("at-least-running")
	r := pin(t, w.dir, "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	if s, p := w.lockedVersion("pin.lock.staging.hcl"), w.lockedVersion("pin.lock.production.hcl"); s != "1.3.0" || p != "1.3.0" {
		t.Errorf("staging %s, production %s; want both 1.3.0 (the lock before)", s, p)
	}
	if !strings.Contains(r.stderr, "pin: environment production has no lock yet (pin.lock.production.hcl): its previous entries are those of pin.lock.hcl") {
		t.Errorf("stderr does not say where the entries came from:\n%s", r.stderr)
	}
}
