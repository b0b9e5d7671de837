package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestEnvironmentsOnRealEngines: staging on the suite's Docker Engine,
// production on Podman's Docker-compatible API, real containers of
// images pulled from the real test registry. Across a history of
// rollouts and rollbacks on both, each environment's lock is checked
// against an oracle of its own (the versions this test deployed, not
// pin's ordering): it never names an image below what that environment
// runs or locked before, staging running older never lowers
// production's, staging running newer never raises it, and the two
// files are separate (a run that changes only staging's leaves
// production's bytes as they were).
func TestEnvironmentsOnRealEngines(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	ph := testenv.PodmanHost(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/env/app-%d", reg, id)
	container := fmt.Sprintf("app-%d", id)
	sleeper := testimage.Sleeper(t)
	versions := []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0"}
	digests := map[string]string{}
	for i, v := range versions {
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath},
			Created: time.Date(2026, time.Month(i+1), 1, 0, 0, 0, 0, time.UTC), Labels: map[string]string{"org.opencontainers.image.version": v}})
		digests[v] = testimage.Push(t, repo+":"+v, img).DigestStr()
	}
	rank := func(v string) int {
		for i, x := range versions {
			if x == v {
				return i
			}
		}
		return -1
	}
	engines := map[string]string{"staging-1": dh, "prod-1": ph}
	for _, addr := range engines {
		t.Cleanup(func() { exec.Command("docker", "-H", addr, "rm", "-f", container).Run() })
	}
	// deploy (re)creates the container on host h with version v.
	deploy := func(h, v string) {
		t.Helper()
		addr := engines[h]
		exec.Command("docker", "-H", addr, "rm", "-f", container).Run()
		dockerCLI(t, addr, "pull", "-q", repo+":"+v)
		dockerCLI(t, addr, "run", "-d", "--network", "none", "--name", container, repo+":"+v)
	}

	dir := t.TempDir()
	cat := fmt.Sprintf(`host "staging-1" {
  docker = %q
}

host "prod-1" {
  docker = %q
}

environment "staging" {
  hosts = ["staging-1"]
}

environment "production" {
  hosts = ["prod-1"]
  from  = "staging"
  soak  = "24h"
}

module "app" {
  image  = %q
  policy = "at-least-running"
  pin    = "1.1.0"
  runs_on "staging-1" { container = %q }
  runs_on "prod-1" { container = %q }
}
`, dh, ph, repo, container, container)
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	lockFile := map[string]string{"staging": filepath.Join(dir, "pin.lock.staging.hcl"), "production": filepath.Join(dir, "pin.lock.production.hcl")}
	hostOf := map[string]string{"staging": "staging-1", "production": "prod-1"}
	// locked is the version an environment's lock names, by digest.
	locked := func(env string) string {
		t.Helper()
		b, err := os.ReadFile(lockFile[env])
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		m := entryDigest.FindStringSubmatch(string(b))
		for v, d := range digests {
			if m != nil && d == m[1] {
				return v
			}
		}
		t.Fatalf("%s's lock names no build of app:\n%s", env, b)
		return ""
	}

	// The oracle: what each environment runs now, and the lowest version
	// its lock may name (the highest it ran or locked: the floor).
	runs := map[string]string{}
	floor := map[string]string{"staging": "1.1.0", "production": "1.1.0"} // the pin
	steps := []struct {
		env, version string
		// changes: which environments' lock files may change.
		changes []string
	}{
		{"staging", "1.0.0", nil},    // staging runs older than production will
		{"production", "1.2.0", nil}, // production runs newer than the pin
		{"staging", "1.3.0", nil},    // staging moves past production
		{"production", "1.0.0", nil}, // production rolled back by hand
		{"staging", "1.0.0", nil},    // staging rolled back by hand
		{"production", "1.3.0", nil}, // production catches up
	}
	for i, st := range steps {
		deploy(hostOf[st.env], st.version)
		runs[st.env] = st.version
		if len(runs) < 2 {
			continue // both environments run app before the first resolve
		}
		before := map[string][]byte{}
		for env, f := range lockFile {
			before[env], _ = os.ReadFile(f)
		}
		r := pin(t, dir, "resolve", cache)
		if r.code != exitOK {
			t.Fatalf("step %d (%s runs %s): resolve exit %d\n%s%s", i, st.env, st.version, r.code, r.stdout, r.stderr)
		}
		for env := range lockFile {
			if rank(runs[env]) > rank(floor[env]) {
				floor[env] = runs[env]
			}
			got := locked(env)
			// at-least-running: exactly the newest of the pin, what runs,
			// and what was locked — in this environment only.
			if got != floor[env] {
				t.Errorf("step %d (%s runs %s): %s locks %s, want %s (it runs %s)", i, st.env, st.version, env, got, floor[env], runs[env])
			}
		}
		// A step in one environment leaves the other's file as it was.
		other := map[string]string{"staging": "production", "production": "staging"}[st.env]
		if i > 1 {
			if after, _ := os.ReadFile(lockFile[other]); string(after) != string(before[other]) {
				t.Errorf("step %d: a change in %s rewrote %s's lock", i, st.env, other)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); err == nil {
		t.Error("pin.lock.hcl written for a catalogue with environments")
	}
	// plan HOST judges each host by its own environment's lock: prod-1
	// runs what production locks.
	if r := pin(t, dir, "plan", "prod-1", cache); r.code != exitOK {
		t.Errorf("plan prod-1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
