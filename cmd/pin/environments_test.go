package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/host"
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

// newLockedEnvWorld is an envWorld where s1 (staging) runs 1.3.0 and p1
// (production) 1.0.0, at-least-running, resolved once: staging locks
// 1.3.0, production the pin 1.1.0.
func newLockedEnvWorld(t *testing.T) *envWorld {
	t.Helper()
	w := newEnvWorld(t)
	w.runs("s1", "1.3.0")
	w.runs("p1", "1.0.0")
	w.write("at-least-running")
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	return w
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

// TestEnvironmentsHostCommands: lock --from-host, plan HOST, outdated and
// export judge a host by its own environment's lock.
func TestEnvironmentsHostCommands(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("s1", "1.0.0")
	w.runs("p1", "1.3.0")
	w.write("at-least-running")
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	// staging locks the pin, 1.1.0; production what p1 runs, 1.3.0. By
	// production's lock p1's cutover changes nothing; by staging's it
	// would be a downgrade.
	if r := pin(t, w.dir, "plan", "p1"); r.code != exitOK || !strings.Contains(r.stdout, "p1/app (module app): SAME") {
		t.Errorf("plan p1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, w.dir, "plan", "s1"); r.code != exitOK || !strings.Contains(r.stdout, "s1/app (module app): UPGRADE") {
		t.Errorf("plan s1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// lock --from-host s1 writes staging's lock alone.
	w.runs("s1", "1.2.0")
	w.write("at-least-running")
	prod := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl"))
	if r := pin(t, w.dir, "lock", "--from-host", "s1"); r.code != exitOK {
		t.Fatalf("lock --from-host s1: exit %d\n%s", r.code, r.stderr)
	}
	if s := w.lockedVersion("pin.lock.staging.hcl"); s != "1.2.0" {
		t.Errorf("staging %s after lock --from-host s1, want 1.2.0", s)
	}
	if got := readFileT(t, filepath.Join(w.dir, "pin.lock.production.hcl")); got != prod {
		t.Error("production's lock written by lock --from-host s1")
	}

	// outdated: one row per module and environment, each by its lock.
	r := pin(t, w.dir, "outdated", "--format", "json", "--fail-on", "none")
	if r.code != exitOK {
		t.Fatalf("outdated: exit %d\n%s", r.code, r.stderr)
	}
	var out outdatedOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range out.Modules {
		if m.Locked != nil {
			got[m.Environment] = m.Locked.Version
		}
	}
	if got["production"] != "1.3.0" || got["staging"] != "1.2.0" || len(out.Modules) != 2 {
		t.Errorf("outdated: locked by environment %v\n%s", got, r.stdout)
	}
	validate(t, compileSchemas(t)["outdated.schema.json"], "outdated with environments", r.stdout)

	// export needs to be told which environment's lock.
	if r := pin(t, w.dir, "export", "--env", "deploy.env"); r.code != exitInput || !strings.Contains(r.stderr, "--environment NAME (production, staging)") {
		t.Errorf("export without --environment: exit %d\n%s", r.code, r.stderr)
	}
	if r := pin(t, w.dir, "export", "--env", "deploy.env", "--environment", "production"); r.code != exitOK {
		t.Fatalf("export --environment production: exit %d\n%s", r.code, r.stderr)
	}
	if env := readFileT(t, filepath.Join(w.dir, "deploy.env")); !strings.Contains(env, "APP_IMAGE="+envApp+":1.3.0@"+w.builds["1.3.0"].digest) {
		t.Errorf("deploy.env:\n%s", env)
	}
}

// TestEnvironmentsPropose: pin propose --environment NAME proposes that
// environment's lock file, resolved against its hosts; without it, a
// catalogue with environments is refused (which lock is not a guess).
func TestEnvironmentsPropose(t *testing.T) {
	gitUser(t)
	w := newEnvWorld(t)
	w.runs("s1", "1.0.0")
	w.runs("p1", "1.2.0")
	w.write("at-least-running")
	bare := filepath.Join(t.TempDir(), "origin.git")
	gitIn(t, w.dir, "init", "--quiet", "--bare", bare)
	gitIn(t, w.dir, "init", "--quiet", "-b", "main")
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", "two environments, no lock yet")
	gitIn(t, w.dir, "remote", "add", "origin", bare)
	gitIn(t, w.dir, "push", "--quiet", "origin", "main")
	if r := pin(t, w.dir, "propose", "--dry-run"); r.code != exitInput || !strings.Contains(r.stderr, "--environment NAME") {
		t.Errorf("propose without --environment: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := pin(t, w.dir, "propose", "--dry-run", "--environment", "production", "--format", "json")
	if r.code != exitOK {
		t.Fatalf("propose --environment production: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "pin.lock.production.hcl") || strings.Contains(r.stdout, "pin.lock.staging.hcl") || strings.Contains(r.stdout, `"pin.lock.hcl"`) {
		t.Errorf("the proposal does not change production's lock alone:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, w.builds["1.0.0"].digest) || !strings.Contains(r.stdout, "1.2.0") {
		t.Errorf("production's proposal is not held against p1 (1.2.0) alone:\n%s", r.stdout)
	}
}

// TestEnvironmentsHistories is the property over generated histories:
// two environments of two hosts each, a module at-least-running on all
// four, and random rollouts and rollbacks (and containers removed) on
// any host, each followed by a resolve. The oracle is the version each
// deploy named, not pin's ordering: after every run, each environment's
// lock names exactly the newest of the pin and every version its own
// hosts ran when a run read them (what it runs now and what it locked),
// never a version only the other environment ran.
func TestEnvironmentsHistories(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 2026))
	versions := []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0"}
	rank := func(v string) int { return slices.Index(versions, v) }
	envOf := map[string]string{"s1": "staging", "s2": "staging", "p1": "production", "p2": "production"}
	const modules = `module "app" {
  image  = "registry.example.org/team/app"
  policy = "at-least-running"
  pin    = "1.1.0"
  runs_on "s1" { container = "app" }
  runs_on "s2" { container = "app" }
  runs_on "p1" { container = "app" }
  runs_on "p2" { container = "app" }
}

environment "staging" {
  hosts = ["s1", "s2"]
}

environment "production" {
  hosts = ["p1", "p2"]
  from  = "staging"
}
`
	for n := range 12 {
		w := newEnvWorld(t)
		floor := map[string]string{"staging": "1.1.0", "production": "1.1.0"}
		running := map[string]string{} // host → version, what a run sees
		var history []string
		for _, h := range []string{"s1", "s2", "p1", "p2"} {
			v := versions[rng.IntN(len(versions))]
			w.runs(h, v)
			running[h] = v
			history = append(history, h+"="+v)
		}
		for step := range 6 {
			hn := []string{"s1", "s2", "p1", "p2"}[rng.IntN(4)]
			if rng.IntN(5) == 0 {
				// The container is removed: the host is read and runs
				// nothing of app; its floor stays in the previous entry.
				w.hosts[hn] = &host.Snapshot{Schema: 1, Host: hn, ImageStore: "classic"}
				delete(running, hn)
				history = append(history, hn+" removed")
			} else {
				v := versions[rng.IntN(len(versions))]
				w.runs(hn, v)
				running[hn] = v
				history = append(history, hn+"="+v)
			}
			// What the run sees raises its environment's floor, and only
			// its environment's.
			for h, v := range running {
				if rank(v) > rank(floor[envOf[h]]) {
					floor[envOf[h]] = v
				}
			}
			w.world.write([]string{"registry.example.org"}, modules)
			r := pin(t, w.dir, "resolve")
			if r.code != exitOK {
				t.Fatalf("history %d step %d (%s): exit %d\n%s", n, step, strings.Join(history, ", "), r.code, r.stderr)
			}
			for _, env := range []string{"staging", "production"} {
				if got := w.lockedVersion("pin.lock." + env + ".hcl"); got != floor[env] {
					t.Fatalf("history %d step %d (%s): %s locks %s, want %s", n, step, strings.Join(history, ", "), env, got, floor[env])
				}
			}
		}
	}
}

// TestEnvironmentsModuleMoves: a module whose runs_on leaves staging's
// hosts keeps its entry in staging's lock, retired (a floor there, said
// so in the plan), and production's lock gets an entry of its own,
// held against production's hosts; moving it back takes the retired
// entry over: staging's floor was not freed.
func TestEnvironmentsModuleMoves(t *testing.T) {
	w := newLockedEnvWorld(t)
	onlyProd := strings.Replace(fmt.Sprintf(envModules, "at-least-running"), "  runs_on \"s1\" { container = \"app\" }\n", "", 1)
	w.world.write([]string{"registry.example.org"}, onlyProd)
	r := pin(t, w.dir, "resolve")
	if r.code != exitOK || !strings.Contains(r.stdout, `module "app" no longer runs in environment staging: its entry stays in pin.lock.staging.hcl (retired "app")`) {
		t.Fatalf("resolve after the move: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b := readFileT(t, filepath.Join(w.dir, "pin.lock.staging.hcl")); !strings.Contains(b, `retired "app"`) || !strings.Contains(b, w.builds["1.3.0"].digest) {
		t.Errorf("staging's lock does not keep app's entry retired:\n%s", b)
	}
	if p := w.lockedVersion("pin.lock.production.hcl"); p != "1.1.0" {
		t.Errorf("production %s, want 1.1.0 (the pin, over what p1 runs)", p)
	}
	// Back in staging, where s1 now runs 1.0.0: the retired entry is a
	// floor, 1.3.0.
	w.runs("s1", "1.0.0")
	w.write("at-least-running")
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve after moving back: exit %d\n%s", r.code, r.stderr)
	}
	if s := w.lockedVersion("pin.lock.staging.hcl"); s != "1.3.0" {
		t.Errorf("staging %s after moving back, want 1.3.0 (its retired entry)", s)
	}
}

// TestEnvironmentsRemovedKeepTheirFloors: removing the environment
// blocks (or one of them) while their lock files are there is refused,
// exit 2, nothing written: their floors would count in no lock.
func TestEnvironmentsRemovedKeepTheirFloors(t *testing.T) {
	w := newLockedEnvWorld(t)
	cat := strings.Split(fmt.Sprintf(envModules, "at-least-running"), "environment ")[0]
	w.world.write([]string{"registry.example.org"}, cat)
	r := pin(t, w.dir, "resolve")
	if r.code != exitInput || !strings.Contains(r.stderr, "pin.lock.production.hcl and ") || !strings.Contains(r.stderr, "pin.lock.staging.hcl: the lock of an environment the catalogue no longer declares") {
		t.Errorf("resolve without the environments: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "pin.lock.hcl")); err == nil {
		t.Error("pin.lock.hcl written")
	}
}

// TestEnvironmentsHostMoves: a floor belongs to what ran on a host, not
// to the environment the host was in. s1 ran app 1.3.0 in staging
// (staging's lock recorded it); the catalogue moves s1 into production
// and s1's container is removed on the way. Production's lock must not
// name less than 1.3.0 for what takes s1's container over, though
// production's own lock and hosts say 1.1.0 and 1.0.0: the oracle is
// the build s1 ran. Staging keeps its entry, retired.
func TestEnvironmentsHostMoves(t *testing.T) {
	w := newLockedEnvWorld(t)
	if s, p := w.lockedVersion("pin.lock.staging.hcl"), w.lockedVersion("pin.lock.production.hcl"); s != "1.3.0" || p != "1.1.0" {
		t.Fatalf("before the move: staging %s, production %s", s, p)
	}
	w.hosts["s1"] = &host.Snapshot{Schema: 1, Host: "s1", ImageStore: "classic"}
	moved := strings.Replace(strings.Replace(fmt.Sprintf(envModules, "at-least-running"), `hosts = ["s1"]`, `hosts = []`, 1), `hosts = ["p1"]`, `hosts = ["p1", "s1"]`, 1)
	w.world.write([]string{"registry.example.org"}, moved)
	// The cutover gate of s1 knows app ran there: missing, not new.
	if r := pin(t, w.dir, "plan", "s1", "--format", "json"); !strings.Contains(r.stdout, `"verdict": "missing"`) || strings.Contains(r.stdout, `"verdict": "new"`) {
		t.Errorf("plan s1 after the move: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := pin(t, w.dir, "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve after the move: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if p := w.lockedVersion("pin.lock.production.hcl"); p != "1.3.0" {
		t.Errorf("production locks %s after s1 joined it, below the 1.3.0 s1 ran (staging's lock recorded it)\n%s", p, r.stdout)
	}
	if !strings.Contains(r.stdout, `inherits module "app" in pin.lock.staging.hcl`) {
		t.Errorf("the plan does not say where production's floor came from:\n%s", r.stdout)
	}
	if b := readFileT(t, filepath.Join(w.dir, "pin.lock.staging.hcl")); !strings.Contains(b, `retired "app"`) {
		t.Errorf("staging's lock does not keep app's entry retired:\n%s", b)
	}
	// Staging's retired entry still records s1: production's plan names
	// it, in its schema.
	r = pin(t, w.dir, "resolve", "--format", "json")
	validate(t, compileSchemas(t)["plan.schema.json"], "resolve --format json after a host moved", r.stdout)
	var out struct {
		Modules []struct {
			Environment string
			TakenOver   []takenOverOutput `json:"taken_over"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	named := false
	for _, m := range out.Modules {
		for _, to := range m.TakenOver {
			named = named || m.Environment == "production" && to.Name == "app" && to.Lock == "pin.lock.staging.hcl" && to.Entry.Digest == w.builds["1.3.0"].digest
		}
	}
	if !named {
		t.Errorf("resolve --format json does not name the other lock's entry production takes over:\n%s", r.stdout)
	}
}

// TestEnvironmentsHostMovesPartialRun: s1 moves from staging to
// production while app still runs in staging on s2. Rewriting staging's
// lock alone would drop its record of s1 (its entry is held against
// staging's hosts) before production's lock took that floor over: pin
// resolve --environment staging is refused, exit 2, both locks
// byte-identical, naming s1 and production. Deciding both in one run
// carries the 1.3.0 s1 ran into production; then staging alone is fine.
func TestEnvironmentsHostMovesPartialRun(t *testing.T) {
	w := newEnvWorld(t)
	w.runs("s1", "1.3.0")
	w.runs("s2", "1.2.0")
	w.runs("p1", "1.0.0")
	three := strings.NewReplacer(`  runs_on "p1" { container = "app" }`, "  runs_on \"p1\" { container = \"app\" }\n  runs_on \"s2\" { container = \"app\" }",
		`hosts = ["s1"]`, `hosts = ["s1", "s2"]`).Replace(fmt.Sprintf(envModules, "at-least-running"))
	w.world.write([]string{"registry.example.org"}, three)
	if r := pin(t, w.dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	if s, p := w.lockedVersion("pin.lock.staging.hcl"), w.lockedVersion("pin.lock.production.hcl"); s != "1.3.0" || p != "1.1.0" {
		t.Fatalf("before the move: staging %s, production %s", s, p)
	}
	w.hosts["s1"] = &host.Snapshot{Schema: 1, Host: "s1", ImageStore: "classic"}
	moved := strings.NewReplacer(`hosts = ["s1", "s2"]`, `hosts = ["s2"]`, `hosts = ["p1"]`, `hosts = ["p1", "s1"]`).Replace(three)
	w.world.write([]string{"registry.example.org"}, moved)
	staging, production := filepath.Join(w.dir, "pin.lock.staging.hcl"), filepath.Join(w.dir, "pin.lock.production.hcl")
	before := readFileT(t, staging) + readFileT(t, production)
	r := pin(t, w.dir, "resolve", "--environment", "staging")
	if r.code != exitInput || !strings.Contains(r.stderr, "pin.lock.staging.hcl recorded what ran on s1, which is environment production's host now") || !strings.Contains(r.stderr, "--environment production --environment staging") {
		t.Errorf("resolve --environment staging after s1 moved: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := readFileT(t, staging) + readFileT(t, production); after != before {
		t.Error("a refused run changed a lock")
	}
	if r := pin(t, w.dir, "resolve", "--environment", "staging", "--environment", "production"); r.code != exitOK {
		t.Fatalf("resolve of both: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if p := w.lockedVersion("pin.lock.production.hcl"); p != "1.3.0" {
		t.Errorf("production locks %s after s1 joined it, below the 1.3.0 s1 ran", p)
	}
	if r := pin(t, w.dir, "resolve", "--environment", "staging"); r.code != exitOK {
		t.Errorf("staging alone once production took the floor over: exit %d\n%s", r.code, r.stderr)
	}
}

// TestEnvironmentsRenamedKeepFloors: staging is renamed stage while its
// lock file stays pin.lock.staging.hcl (an orphan), and s1's container is
// removed. What that lock recorded on s1 still bounds s1: pin plan s1
// says missing, not new, and warns about the orphan; pin promote refuses
// to write (exit 2, both locks byte-identical), as pin resolve does.
func TestEnvironmentsRenamedKeepFloors(t *testing.T) {
	w := newLockedEnvWorld(t)
	w.hosts["s1"] = &host.Snapshot{Schema: 1, Host: "s1", ImageStore: "classic"}
	renamed := strings.NewReplacer(`environment "staging"`, `environment "stage"`, `from  = "staging"`, `from  = "stage"`).Replace(fmt.Sprintf(envModules, "at-least-running"))
	w.world.write([]string{"registry.example.org"}, renamed)
	staging, production := filepath.Join(w.dir, "pin.lock.staging.hcl"), filepath.Join(w.dir, "pin.lock.production.hcl")
	before := readFileT(t, staging) + readFileT(t, production)
	r := pin(t, w.dir, "plan", "s1", "--format", "json")
	if !strings.Contains(r.stdout, `"verdict": "missing"`) || !strings.Contains(r.stderr, "pin: warning: pin.lock.staging.hcl is the lock of an environment the catalogue no longer declares") {
		t.Errorf("plan s1 with staging's lock orphaned: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, w.dir, "promote", "stage", "production")
	if r.code != exitInput || !strings.Contains(r.stderr, "pin.lock.staging.hcl: the lock of an environment the catalogue no longer declares") {
		t.Errorf("promote with staging's lock orphaned: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := readFileT(t, staging) + readFileT(t, production); after != before {
		t.Error("a refused promotion changed a lock")
	}
}
