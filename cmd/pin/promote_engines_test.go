package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// pinAt runs the CLI in dir with the clock at now.
func pinAt(t *testing.T, dir string, now time.Time, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code := runWithClock(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb}, func() time.Time { return now })
	return result{code, out.String(), errb.String()}
}

// TestPromoteOnRealEngines: staging is the Docker Engine, production is
// Podman, the containers are real and their starts the engines' own; only
// the clock is moved. Staging runs a newer build than production: before
// the soak, promote refuses (lock byte-identical); a day later status shows
// production behind and promote writes production's entry with the start
// docker inspect reports; a restart starts the soak again.
func TestPromoteOnRealEngines(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	ph := testenv.PodmanHost(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/promote/app-%d", reg, id)
	sleeper := testimage.Sleeper(t)
	digests := map[string]string{}
	for _, v := range []string{"1.27.3", "1.28.0"} {
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath},
			Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), Labels: map[string]string{"org.opencontainers.image.version": v}})
		digests[v] = testimage.Push(t, repo+":"+v, img).DigestStr()
	}
	name := fmt.Sprintf("app-%d", id)
	start := func(engine, v string) {
		t.Helper()
		dockerCLI(t, engine, "pull", "-q", repo+":"+v)
		dockerCLI(t, engine, "run", "-d", "--network", "none", "--name", name, repo+":"+v)
		t.Cleanup(func() { dockerCLI(t, engine, "rm", "-f", name) })
	}
	startedAt := func() time.Time {
		t.Helper()
		st, err := host.ParseStartedAt(dockerCLI(t, dh, "inspect", "-f", "{{.State.StartedAt}}", name))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	start(dh, "1.28.0")
	start(ph, "1.27.3")
	s1 := startedAt()

	dir := t.TempDir()
	cat := fmt.Sprintf(`host "s1" {
  docker = %q
}

host "p1" {
  docker = %q
}

module "app" {
  image  = %q
  policy = "at-least-running"
  runs_on "s1" { container = %q }
  runs_on "p1" { container = %q }
}

environment "staging" {
  hosts = ["s1"]
}

environment "production" {
  hosts = ["p1"]
  from  = "staging"
  soak  = "24h"
}
`, dh, ph, repo, name, name)
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	prodLock := filepath.Join(dir, "pin.lock.production.hcl")
	if r := pinAt(t, dir, s1.Add(time.Minute), "resolve", cache); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	before := readFileT(t, prodLock)
	if !strings.Contains(before, digests["1.27.3"]) {
		t.Fatalf("production does not lock what it runs:\n%s", before)
	}

	// An hour after staging started it: the soak is not reached.
	r := pinAt(t, dir, s1.Add(time.Hour), "promote", "staging", "production", cache)
	if r.code != exitFindings || !strings.Contains(r.stderr, "(soak)") || readFileT(t, prodLock) != before {
		t.Fatalf("promote before the soak: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A day later: status shows production behind; promote carries it.
	day := s1.Add(24*time.Hour + time.Minute)
	r = pinAt(t, dir, day, "status", cache)
	if r.code != exitFindings || !strings.Contains(r.stdout, "behind-previous") {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pinAt(t, dir, day, "promote", "staging", "production", cache)
	if r.code != exitOK {
		t.Fatalf("promote: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	after := readFileT(t, prodLock)
	for _, want := range []string{`digest  = "` + digests["1.28.0"] + `"`, `from    = "staging"`, `hosts   = ["s1"]`, `since   = "` + s1.Truncate(time.Second).Format(time.RFC3339) + `"`} {
		if !strings.Contains(after, want) {
			t.Errorf("production lock lacks %s:\n%s", want, after)
		}
	}

	// A restart starts the soak again: a day after the first start is
	// less than a day after the restart.
	if err := os.WriteFile(prodLock, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	dockerCLI(t, dh, "restart", "-t", "1", name)
	s2 := startedAt()
	if !s2.After(s1.Add(time.Second)) {
		t.Fatalf("restart: started %v, then %v", s1, s2)
	}
	r = pinAt(t, dir, s2.Add(24*time.Hour-time.Second), "promote", "staging", "production", cache)
	if r.code != exitFindings || !strings.Contains(r.stderr, "(soak)") || readFileT(t, prodLock) != before {
		t.Errorf("promote a day after the first start, less after the restart: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
