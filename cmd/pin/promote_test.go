package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
)

// The clock of pin() in tests: 2026-12-01T00:00:00Z.
var testNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

const promoteModules = `module "app" {
  image  = "registry.example.org/team/app"
  policy = "at-least-running"
  runs_on "s1" { container = "app" }
  runs_on "s2" { container = "app" }
  runs_on "p1" { container = "app" }
}

environment "staging" {
  hosts = ["s1", "s2"]
}

environment "production" {
  hosts = ["p1"]
  from  = "staging"
  soak  = "24h"
}
`

// runsSince sets what host h runs for app, started ago before the
// tests' clock (0: no container).
func (w *envWorld) runsSince(h, version string, ago time.Duration) {
	delete(w.hosts, h)
	if version == "" {
		w.hosts[h] = nil
		return
	}
	w.run(h, "app", envApp, envApp+":"+version, w.builds[version])
	w.hosts[h].Containers[0].StartedAt = testNow.Add(-ago)
}

func (w *envWorld) writePromote() {
	for h, s := range w.hosts {
		if s == nil {
			w.hosts[h] = nil
			delete(w.hosts, h)
			w.run(h, "other", envApp+"-other", envApp+"-other:1", w.builds["1.0.0"])
		}
	}
	w.world.write([]string{"registry.example.org"}, promoteModules)
}

// TestPromoteStagingToProduction: staging runs a newer build than
// production; status shows it; promote writes production's entry with
// that build and where it came from; each refusal leaves every lock byte
// for byte as it was.
func TestPromoteStagingToProduction(t *testing.T) {
	w := newEnvWorld(t)
	w.runsSince("s1", "1.3.0", 48*time.Hour)
	w.runsSince("s2", "1.3.0", 30*time.Hour)
	w.runsSince("p1", "1.2.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if p := w.lockedVersion("pin.lock.production.hcl"); p != "1.2.0" {
		t.Fatalf("production locks %s", p)
	}

	// status: production is behind staging.
	r := pin(t, w.dir, "status", "--format", "json")
	if r.code != exitFindings {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, compileSchemas(t)["status.schema.json"], "status --format json", r.stdout)
	var st statusOutput
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Modules) != 1 || len(st.Modules[0].Cells) != 2 {
		t.Fatalf("status: %s", r.stdout)
	}
	prod := st.Modules[0].Cells[1]
	if prod.Environment != "production" || prod.Previous == nil || prod.Previous.Digest != w.builds["1.3.0"].digest || !strings.Contains(strings.Join(prod.Findings, ","), "behind-previous") || prod.Hosts != 1 {
		t.Errorf("production cell: %+v", prod)
	}
	if stg := st.Modules[0].Cells[0]; stg.Hosts != 2 || stg.Since != "2026-11-29T18:00:00Z" || len(stg.Runs) != 1 {
		t.Errorf("staging cell: %+v", stg)
	}
	if r := pin(t, w.dir, "status"); !strings.Contains(r.stdout, "behind-previous") || r.code != exitFindings {
		t.Errorf("status table: exit %d\n%s", r.code, r.stdout)
	}
	if r := pin(t, w.dir, "status", "--format", "github"); !strings.Contains(r.stdout, "::error title=app in production%3A behind-previous::") {
		t.Errorf("status annotations:\n%s", r.stdout)
	}

	// promote: production's entry is staging's build, with provenance.
	r = pin(t, w.dir, "promote", "staging", "production")
	if r.code != exitOK {
		t.Fatalf("promote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if p := w.lockedVersion("pin.lock.production.hcl"); p != "1.3.0" {
		t.Errorf("production locks %s after the promotion\n%s", p, r.stdout)
	}
	lf := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	for _, want := range []string{"  promoted {\n", `from    = "staging"`, `hosts   = ["s1", "s2"]`, `since   = "2026-11-29T00:00:00Z"`, `release = "sha256:`} {
		if !strings.Contains(lf, want) {
			t.Errorf("production lock lacks %q:\n%s", want, lf)
		}
	}
	// Promoted, not yet deployed: not rolled out (a warning), no longer
	// behind; deployed, nothing to report.
	if r := pin(t, w.dir, "status"); r.code != exitOK || !strings.Contains(r.stdout, "not-rolled-out") || strings.Contains(r.stdout, "behind-previous") {
		t.Errorf("status after the promotion: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.runsSince("p1", "1.3.0", time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "status"); r.code != exitOK || strings.Contains(r.stdout, "not-rolled-out") {
		t.Errorf("status after the rollout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, w.dir, "status", "--format", "json")
	validate(t, compileSchemas(t)["status.schema.json"], "status --format json, promoted", r.stdout)
	if !strings.Contains(r.stdout, `"promoted": {`) {
		t.Errorf("status shows no provenance:\n%s", r.stdout)
	}
	// Promoting again changes nothing.
	before := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	if r := pin(t, w.dir, "promote", "staging", "production"); r.code != exitOK || readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl")) != before {
		t.Errorf("promoting again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPromoteRefusalsKeepLocks: each refusal names the module, exits 1
// and leaves both lock files byte-identical.
func TestPromoteRefusalsKeepLocks(t *testing.T) {
	for _, tc := range []struct {
		name         string
		s1, s2, p1   string
		s1Ago, s2Ago time.Duration
		args         []string
		want         string
	}{
		{"skew", "1.3.0", "1.2.0", "1.1.0", 48 * time.Hour, 48 * time.Hour, nil, "(skew)"},
		{"soak", "1.3.0", "1.3.0", "1.1.0", 48 * time.Hour, 12 * time.Hour, nil, "(soak)"},
		{"floor", "1.2.0", "1.2.0", "1.3.0", 48 * time.Hour, 48 * time.Hour, nil, "(floor)"},
		{"nothing", "", "", "1.1.0", 0, 0, []string{"app"}, "(nothing-in-from)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newEnvWorld(t)
			w.runsSince("s1", "1.0.0", 100*time.Hour)
			w.runsSince("s2", "1.0.0", 100*time.Hour)
			w.runsSince("p1", tc.p1, 100*time.Hour)
			w.writePromote()
			if r := pin(t, w.dir, "resolve"); r.code != exitOK {
				t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			w.runsSince("s1", tc.s1, tc.s1Ago)
			w.runsSince("s2", tc.s2, tc.s2Ago)
			w.writePromote()
			files := []string{"pin.lock.staging.hcl", "pin.lock.production.hcl"}
			before := map[string]string{}
			for _, f := range files {
				before[f] = readFileT(t, filepath.Join(w.dir, f))
			}
			r := pin(t, w.dir, append([]string{"promote", "staging", "production"}, tc.args...)...)
			if r.code != exitFindings || !strings.Contains(r.stderr, `module "app": refusing to promote `+tc.want) || !strings.Contains(r.stderr, "left unchanged") {
				t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, f := range files {
				if after, _ := os.ReadFile(filepath.Join(w.dir, f)); string(after) != before[f] {
					t.Errorf("%s changed on a refusal", f)
				}
			}
		})
	}
}

// TestPromoteJSON: pin promote --format json, as the schema says, in
// each state: promoted (the lock written), the same again (not written),
// refused (nothing written, exit 1), a manual pick and its lift.
func TestPromoteJSON(t *testing.T) {
	schema := compileSchemas(t)["promote.schema.json"]
	w := newEnvWorld(t)
	w.runsSince("s1", "1.3.0", 48*time.Hour)
	w.runsSince("s2", "1.3.0", 30*time.Hour)
	w.runsSince("p1", "1.2.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	run := func(want int, args ...string) promoteOutput {
		t.Helper()
		r := pin(t, w.dir, append([]string{"promote", "--format", "json", "staging", "production"}, args...)...)
		if r.code != want {
			t.Fatalf("promote %v: exit %d, want %d\n%s%s", args, r.code, want, r.stdout, r.stderr)
		}
		validate(t, schema, fmt.Sprintf("promote --format json %v", args), r.stdout)
		var out promoteOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	d13 := w.builds["1.3.0"].digest
	sum := sha256.Sum256([]byte("app " + d13 + "\n"))
	release := "sha256:" + hex.EncodeToString(sum[:])

	out := run(exitOK)
	if !out.Written || out.Release != release || out.Lock != "pin.lock.production.hcl" || len(out.Entries) != 1 || len(out.Refused) != 0 {
		t.Fatalf("promoted: %+v", out)
	}
	e := out.Entries[0]
	if e.Action != "promote" || e.From == nil || e.From.Digest != w.builds["1.2.0"].digest || e.To.Digest != d13 || e.Promoted == nil ||
		e.Promoted.Since != "2026-11-29T00:00:00Z" || e.Promoted.Release != release || strings.Join(e.Promoted.Hosts, ",") != "s1,s2" {
		t.Errorf("promoted entry: %+v", e)
	}
	if out := run(exitOK); out.Written || len(out.Entries) != 1 || out.Entries[0].Action != "unchanged" {
		t.Errorf("again: %+v", out)
	}

	// Skew: refused, nothing written.
	w.runsSince("s2", "1.2.0", 30*time.Hour)
	w.writePromote()
	before := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	out = run(exitFindings)
	if out.Written || len(out.Entries) != 0 || len(out.Refused) != 1 || out.Refused[0].Kind != "skew" || out.Refused[0].Module != "app" || out.Refused[0].Fix == "" {
		t.Errorf("refused: %+v", out)
	}
	if readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl")) != before {
		t.Error("a refusal wrote the lock")
	}

	// A manual pick holds; --lift lifts it.
	out = run(exitOK, "--pick", "1.3.0@"+d13, "--reason", "1.4.0 leaks memory", "app")
	if !out.Written || len(out.Entries) != 1 || out.Entries[0].Hold != "1.4.0 leaks memory" || out.Entries[0].To.Digest != d13 {
		t.Errorf("pick: %+v", out)
	}
	out = run(exitOK, "--lift", "app")
	if !out.Written || strings.Join(out.Lifted, ",") != "app" || len(out.Entries) != 0 {
		t.Errorf("lift: %+v", out)
	}
}

// TestTextOnlyCommandsRefuseJSON: pin verify and pin observe print text
// only, pin admit and pin authz log JSON lines whatever the format; --format json is refused (exit 2) with what to do instead, not
// answered with text a JSON reader cannot parse.
func TestTextOnlyCommandsRefuseJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), "host \"h1\" {\n  snapshot = \"h1.json\"\n}\n")
	for _, args := range [][]string{{"verify"}, {"observe", "h1", "--key", "cosign.key"}, {"admit", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, {"authz", "--host", "h1"}, {"completion", "bash"}} {
		r := pin(t, dir, append([]string{"--format", "json"}, args...)...)
		if r.code != exitInput || r.stdout != "" || !strings.Contains(r.stderr, "pin "+args[0]+" prints text only, and has no --format json: leave out --format json") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestStatusBehindUpstream: pin status asks the registry for each
// module's candidate as pin outdated does, by each environment's lock:
// both environments lock 1.1.0 and the mirror offers up to 1.3.0, so
// each cell is behind upstream, naming 1.3.0, in the table, the JSON
// and the annotations; not a failure by default, one with --fail-on.
func TestStatusBehindUpstream(t *testing.T) {
	w := newEnvWorld(t)
	w.runsSince("s1", "1.1.0", 48*time.Hour)
	w.runsSince("s2", "1.1.0", 48*time.Hour)
	w.runsSince("p1", "1.1.0", 48*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	newest := w.builds["1.3.0"].digest
	r := pin(t, w.dir, "status", "--format", "json")
	if r.code != exitOK {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, compileSchemas(t)["status.schema.json"], "status --format json, behind upstream", r.stdout)
	var st statusOutput
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Modules) != 1 || len(st.Modules[0].Cells) != 2 {
		t.Fatalf("status: %s", r.stdout)
	}
	for _, c := range st.Modules[0].Cells {
		if c.Upstream == nil || c.Upstream.Digest != newest || c.Upstream.Tag != "1.3.0" || strings.Join(c.Findings, ",") != "behind-upstream" {
			t.Errorf("%s: behind_upstream %+v, findings %v", c.Environment, c.Upstream, c.Findings)
		}
	}
	if r := pin(t, w.dir, "status"); r.code != exitOK || strings.Count(r.stdout, "behind-upstream (upstream offers 1.3.0 ("+image.Short(newest)+"))") != 2 {
		t.Errorf("status table: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, w.dir, "status", "--format", "github", "--fail-on", "behind-upstream")
	if r.code != exitFindings || !strings.Contains(r.stdout, "::error title=app in production%3A behind-upstream::module app in production: behind-upstream; locked 1.1.0") ||
		!strings.Contains(r.stdout, "upstream offers 1.3.0") {
		t.Errorf("status annotations: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPromoteOverAMovedHost: s1 ran app 1.3.0 in staging (staging's lock
// recorded it) and moved into production with its container removed;
// staging's s2 has run 1.2.0 for two days. Promoting 1.2.0 to production
// would put it where 1.3.0 ran: refused by the floor rule (production's
// lock and hosts alone say 1.1.0 and 1.0.0, below 1.2.0), production's
// lock byte-identical, the refusal naming staging's lock.
func TestPromoteOverAMovedHost(t *testing.T) {
	w := newEnvWorld(t)
	w.runsSince("s1", "1.3.0", 48*time.Hour)
	w.runsSince("s2", "1.1.0", 48*time.Hour)
	w.runsSince("p1", "1.0.0", 48*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	w.hosts["s1"] = nil
	w.runsSince("s2", "1.2.0", 48*time.Hour)
	w.writePromote()
	moved := strings.NewReplacer(`hosts = ["s1", "s2"]`, `hosts = ["s2"]`, `hosts = ["p1"]`, `hosts = ["p1", "s1"]`).Replace(readFileT(t, filepath.Join(w.dir, "catalogue.hcl")))
	writeFile(t, filepath.Join(w.dir, "catalogue.hcl"), moved)
	production := filepath.Join(w.dir, "pin.lock.production.hcl")
	before := readFileT(t, production)
	r := pin(t, w.dir, "promote", "staging", "production")
	if r.code == exitOK || !strings.Contains(r.stdout+r.stderr, "pin.lock.staging.hcl") {
		t.Errorf("promote 1.2.0 over the 1.3.0 s1 ran: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if readFileT(t, production) != before {
		t.Errorf("a refused promotion changed production's lock:\n%s", readFileT(t, production))
	}
}
