package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What was not read is not known: a host skipped under skip_unreachable
// is never recorded as read, never counted among the hosts a promotion
// copies from, and never reported complete. The oracle of these tests is
// which host was skipped and which build each host ran, written here.

// skipHost makes host h of w's catalogue skip_unreachable and unreadable
// (its snapshot file gone), as a host that is down.
func skipHost(t *testing.T, w *world, h string) {
	t.Helper()
	cat := filepath.Join(w.dir, "catalogue.hcl")
	block := fmt.Sprintf("host %q {\n  snapshot = %q\n}", h, h+".json")
	src := readFileT(t, cat)
	if !strings.Contains(src, block) {
		t.Fatalf("no host block for %s:\n%s", h, src)
	}
	writeFile(t, cat, strings.Replace(src, block, fmt.Sprintf("host %q {\n  snapshot = %q\n  skip_unreachable = true\n}", h, h+".json"), 1))
	if err := os.Remove(filepath.Join(w.dir, h+".json")); err != nil {
		t.Fatal(err)
	}
}

// locksOf are the bytes of every lock file in dir, by name.
func locksOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "pin.lock*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		out[filepath.Base(n)] = readFileT(t, n)
	}
	return out
}

// sameLocks fails t when a lock of dir is not byte for byte what before
// holds.
func sameLocks(t *testing.T, dir string, before map[string]string, what string) {
	t.Helper()
	after := locksOf(t, dir)
	if len(after) != len(before) {
		t.Errorf("%s: lock files %d, were %d", what, len(after), len(before))
	}
	for n, b := range before {
		if after[n] != b {
			t.Errorf("%s: %s changed:\n%s", what, n, after[n])
		}
	}
}

// newSkippedFromWorld: staging has s1 (runs app 1.1.0) and s2, both in
// app's runs_on, production p1 (1.0.0); resolved with every host read,
// then s2 is down and skip_unreachable.
func newSkippedFromWorld(t *testing.T) *envWorld {
	t.Helper()
	w := newEnvWorld(t)
	w.runsSince("s1", "1.1.0", 48*time.Hour)
	w.runsSince("s2", "1.1.0", 48*time.Hour)
	w.runsSince("p1", "1.0.0", 100*time.Hour)
	w.writePromote()
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	skipHost(t, w.world, "s2")
	return w
}

// TestPromoteSkippedFromHostRefused: a FROM host skipped under
// skip_unreachable is not read, so what it runs (another build, a crashed
// one) is unknown: the promotion is refused host-not-read, exit 1, as it
// is without skip_unreachable, and every lock stays byte-identical.
// pin propose --promote decides through the same code: refused, nothing
// pushed.
func TestPromoteSkippedFromHostRefused(t *testing.T) {
	gitUser(t)
	w := newSkippedFromWorld(t)
	remote := promoteCheckout(t, w)
	before := locksOf(t, w.dir)
	r := pin(t, w.dir, "propose", "--environment", "production", "--promote", "staging")
	if r.code != exitFindings || !strings.Contains(r.stderr, `refused to promote "app" from staging to production`) {
		t.Errorf("propose --promote with s2 skipped: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b := branches(t, remote); len(b) != 0 {
		t.Errorf("propose --promote pushed %v", b)
	}
	sameLocks(t, w.dir, before, "propose --promote refused")

	r = pin(t, w.dir, "promote", "staging", "production")
	if r.code != exitFindings || !strings.Contains(r.stderr, "host s2 of staging") || !strings.Contains(r.stdout+r.stderr, "host-not-read") {
		t.Errorf("promote with s2 skipped: exit %d, want %d refused host-not-read\n%s%s", r.code, exitFindings, r.stdout, r.stderr)
	}
	sameLocks(t, w.dir, before, "promote refused")
}

// TestStatusSkippedHostNotRead: a cell one of whose hosts was skipped is
// not complete: it carries host-not-read, and --fail-on any fails.
func TestStatusSkippedHostNotRead(t *testing.T) {
	w := newSkippedFromWorld(t)
	r := pin(t, w.dir, "status", "--format", "json")
	var st statusOutput
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status: exit %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var staging *statusCell
	for i, c := range st.Modules[0].Cells {
		if c.Environment == "staging" {
			staging = &st.Modules[0].Cells[i]
		}
	}
	if staging == nil || !strings.Contains(strings.Join(staging.Findings, ","), "host-not-read") || strings.Join(staging.Unread, ",") != "s2" {
		t.Errorf("staging cell with s2 skipped: %+v", staging)
	}
	if r := pin(t, w.dir, "status", "--fail-on", "any"); r.code != exitFindings {
		t.Errorf("status --fail-on any with s2 skipped: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

const skipModules = `module "app" {
  image  = "registry.example.org/team/app"
  policy = "at-least-running"
  pin    = "1.0.0"
  runs_on "h1" { container = "app" }
  runs_on "h2" { container = "app" }
}
`

// TestSkippedHostNotRecordedAsRead: h2 is skipped when the lock is first
// written, so the lock must not say it was read (no "h2" in a hosts
// line): later, with h2 back on 1.2.0 and h1 on 1.1.0, lock --from-host
// h1 knows nothing of h2 and is refused hosts-not-read (exit 1), every
// lock byte-identical, instead of locking 1.1.0 below what h2 runs.
func TestSkippedHostNotRecordedAsRead(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("h1", "1.0.0")
	w.runs("h2", "1.2.0")
	w.world.write([]string{"registry.example.org"}, skipModules)
	h2 := readFileT(t, filepath.Join(w.dir, "h2.json"))
	skipHost(t, w.world, "h2")
	r := pin(t, w.dir, "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve with h2 skipped: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := readFileT(t, filepath.Join(w.dir, "pin.lock.hcl")); strings.Contains(l, `"h2"`) {
		t.Errorf("the lock records h2, which was skipped:\n%s", l)
	}

	// h2 is back, running 1.2.0; h1 moves to 1.1.0.
	writeFile(t, filepath.Join(w.dir, "h2.json"), h2)
	w.runs("h1", "1.1.0")
	b, err := w.hosts["h1"].Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.dir, "h1.json"), string(b))
	before := locksOf(t, w.dir)
	r = pin(t, w.dir, "lock", "--from-host", "h1")
	if r.code != exitFindings || !strings.Contains(r.stderr, "h2") || !strings.Contains(r.stdout+r.stderr, "hosts-not-read") {
		t.Errorf("lock --from-host h1 after h2 was skipped: exit %d, want %d refused hosts-not-read\n%s%s", r.code, exitFindings, r.stdout, r.stderr)
	}
	sameLocks(t, w.dir, before, "lock --from-host refused")
}

const holdModules = `module %q {
  image  = "registry.example.org/team/app"
  policy = %q
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

// heldInProduction is the world of the hold tests: staging's s1 and s2
// run app 1.2.0, production's p1 runs 1.0.0 (holdModules, and more, the
// catalogue's other blocks), resolved, then production's entry picked at
// 1.1.0 and held ("freeze for audit").
func heldInProduction(t *testing.T, more string) *envWorld {
	t.Helper()
	w := newEnvWorld(t)
	w.runsSince("s1", "1.2.0", 48*time.Hour)
	w.runsSince("s2", "1.2.0", 48*time.Hour)
	w.runsSince("p1", "1.0.0", 100*time.Hour)
	w.writePromote()
	w.world.write([]string{"registry.example.org"}, fmt.Sprintf(holdModules, "app", "at-least-running")+more)
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, w.dir, "promote", "staging", "production", "app", "--pick", "1.1.0@"+w.builds["1.1.0"].digest, "--reason", "freeze for audit"); r.code != exitOK {
		t.Fatalf("promote --pick: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return w
}

// TestHoldFollowsRename: production's entry is held at 1.1.0 by a
// manual pick; after the module is renamed, the renamed module takes the
// floor over and the hold with it: the lock still holds 1.1.0, with the
// hold's words, and the plan says so, although the renamed module tracks
// upstream, which offers 1.3.0.
func TestHoldFollowsRename(t *testing.T) {
	w := heldInProduction(t, "")
	w.world.write([]string{"registry.example.org"}, fmt.Sprintf(holdModules, "www", "track-upstream"))
	r := pin(t, w.dir, "resolve", "--environment", "production")
	if r.code != exitOK {
		t.Fatalf("resolve after the rename: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	l := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	if v := w.lockedVersion("pin.lock.production.hcl"); v != "1.1.0" || !strings.Contains(l, `hold    = "freeze for audit"`) || !strings.Contains(l, `module "www"`) {
		t.Errorf("the renamed module lost the hold (locks %s):\n%s", v, l)
	}
	if !strings.Contains(r.stdout, "freeze for audit") {
		t.Errorf("the plan does not show the hold:\n%s", r.stdout)
	}
}

// TestPlanComposeRenamedContainer: Compose renames a service's old
// container "<its ID's first 12 hex digits>_<name>" while it recreates
// it; until the new one runs, that container is still the module's
// (the one runs_on names), so pin plan lists it and judges the lock
// against it, as before the rename.
func TestPlanComposeRenamedContainer(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("h1", "1.2.0")
	const modules = `module "app" {
  image  = "registry.example.org/team/app"
  policy = "at-least-running"
  pin    = "1.1.0"
  runs_on "h1" { container = "app" }
}
`
	w.world.write([]string{"registry.example.org"}, modules)
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c := &w.hosts["h1"].Containers[0]
	c.ID = "b401a7120fda" + strings.Repeat("0", 52)
	c.Name = "b401a7120fda_app"
	b, err := w.hosts["h1"].Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.dir, "h1.json"), string(b))
	r := pin(t, w.dir, "plan", "h1", "--format", "json")
	var out cutoverOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("plan: exit %d: %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	listed := false
	for _, it := range out.Items {
		listed = listed || it.Container == "b401a7120fda_app" && it.Verdict == "same"
	}
	if !listed || r.code != exitOK {
		t.Errorf("plan h1 does not judge the renamed container b401a7120fda_app (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestHoldFollowsMovedHost: production's entry is held at 1.1.0 by a
// manual pick on p1; then p1 moves to environment dr, and in the same
// catalogue change the module is (or is not) renamed. dr's lock takes
// the floor over from production's lock, and the hold with it: dr locks
// 1.1.0 with the hold's words, although the module tracks upstream,
// which offers 1.3.0, and p1 runs 1.0.0. The oracle is the build picked
// and the words written here.
func TestHoldFollowsMovedHost(t *testing.T) {
	const dr = "\nenvironment \"dr\" {\n  hosts = %s\n}\n"
	for _, name := range []string{"app", "www"} {
		t.Run(name, func(t *testing.T) {
			w := heldInProduction(t, fmt.Sprintf(dr, "[]"))
			moved := strings.Replace(fmt.Sprintf(holdModules, name, "track-upstream"), `hosts = ["p1"]`, `hosts = []`, 1) + fmt.Sprintf(dr, `["p1"]`)
			w.world.write([]string{"registry.example.org"}, moved)
			r := pin(t, w.dir, "resolve")
			if r.code != exitOK {
				t.Fatalf("resolve after p1 moved to dr (module %s): exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
			}
			l := readFileT(t, filepath.Join(w.dir, "pin.lock.dr.hcl"))
			if v := w.lockedVersion("pin.lock.dr.hcl"); v != "1.1.0" || !strings.Contains(l, `hold    = "freeze for audit"`) || !strings.Contains(l, fmt.Sprintf("module %q", name)) {
				t.Errorf("dr's %s lost the hold when p1 moved (locks %s):\n%s\n%s", name, v, l, r.stdout)
			}
			if !strings.Contains(r.stdout, "freeze for audit") {
				t.Errorf("the plan does not show the hold dr's %s keeps:\n%s", name, r.stdout)
			}
		})
	}
}

// TestLiftedHoldStaysLifted: production holds app at 1.1.0 on p1; p1
// moves to dr while app, renamed www, leaves it: production keeps the
// held entry as a retired one (its floor), and when www runs on p1 again
// dr's www takes it over, hold included. Lifting that hold in dr lifts
// the one it would take over again in production's lock too: the next
// resolve keeps it lifted (it came back, re-inherited, before).
func TestLiftedHoldStaysLifted(t *testing.T) {
	const dr = "\nenvironment \"dr\" {\n  hosts = %s\n  from  = \"staging\"\n}\n"
	w := heldInProduction(t, fmt.Sprintf(dr, "[]"))
	back := strings.Replace(fmt.Sprintf(holdModules, "www", "track-upstream"), `hosts = ["p1"]`, `hosts = []`, 1) + fmt.Sprintf(dr, `["p1"]`)
	w.world.write([]string{"registry.example.org"}, strings.Replace(back, "  runs_on \"p1\" { container = \"app\" }\n", "", 1))
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve, p1 moved and left: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl")); !strings.Contains(l, `retired "app"`) || !strings.Contains(l, `hold    = "freeze for audit"`) {
		t.Fatalf("production dropped the held entry when p1 left:\n%s", l)
	}
	w.world.write([]string{"registry.example.org"}, back)
	if r := pin(t, w.dir, "resolve"); r.code != exitOK || !strings.Contains(readFileT(t, filepath.Join(w.dir, "pin.lock.dr.hcl")), `hold    = "freeze for audit"`) {
		t.Fatalf("resolve, www on p1 again: exit %d, dr's www did not take the hold over\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := pin(t, w.dir, "promote", "staging", "dr", "www", "--lift")
	if r.code != exitOK || !strings.Contains(r.stdout, "Wrote pin.lock.production.hcl.") {
		t.Fatalf("promote --lift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, w.dir, "resolve")
	for _, f := range []string{"pin.lock.dr.hcl", "pin.lock.production.hcl"} {
		if l := readFileT(t, filepath.Join(w.dir, f)); r.code != exitOK || strings.Contains(l, "hold ") {
			t.Errorf("resolve after the lift: exit %d; %s holds again:\n%s\n%s", r.code, f, l, r.stdout)
		}
	}
	if v := w.lockedVersion("pin.lock.dr.hcl"); v != "1.3.0" {
		t.Errorf("dr's www, no longer held, tracks upstream: locks %s, want 1.3.0", v)
	}
}
