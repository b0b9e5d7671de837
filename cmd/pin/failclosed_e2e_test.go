package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestFailClosedEndToEnd: the fail-closed cases that involve a real
// registry and a real Docker Engine. Two catalogue hosts on the test
// engine: mesh-1 runs forge 1.27.3 (it migrated the data), mesh-2 still
// runs 1.22.6, the pin. Then lock --from-host mesh-2 must not forget
// mesh-1; mesh-1's container stops and stays a floor; and a hand edit
// that puts 1.22.6's digest under 1.27.3's lines is refused by resolve,
// plan and outdated, with the lock left byte-identical.
func TestFailClosedEndToEnd(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/e2e/failclosed-%d", reg, id)
	sleeper := testimage.Sleeper(t)
	build := func(v, date string) string {
		created, _ := time.Parse("2006-01-02", date)
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath}, Created: created,
			Labels: map[string]string{"org.opencontainers.image.version": v}})
		return testimage.Push(t, repo+":"+v, img).DigestStr()
	}
	oldDigest, newDigest := build("1.22.6", "2024-12-12"), build("1.27.3", "2026-09-01")
	a, b := fmt.Sprintf("forgejo-a-%d", id), fmt.Sprintf("forgejo-b-%d", id)
	dockerCLI(t, dh, "pull", "-q", repo+":1.27.3")
	dockerCLI(t, dh, "pull", "-q", repo+":1.22.6")
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", a, repo+":1.27.3")
	t.Cleanup(func() { exec.Command("docker", "-H", dh, "rm", "-f", a).Run() })
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", b, repo+":1.22.6")
	t.Cleanup(func() { exec.Command("docker", "-H", dh, "rm", "-f", b).Run() })

	dir := t.TempDir()
	cat := fmt.Sprintf(`host "mesh-1" {
  docker = %[1]q
}

host "mesh-2" {
  docker = %[1]q
}

module "forge" {
  image   = %[2]q
  policy  = "at-least-running"
  pin     = "1.22.6@%[3]s"
  one_way = true
  runs_on "mesh-1" { container = %[4]q }
  runs_on "mesh-2" { container = %[5]q }
}
`, dh, repo, oldDigest, a, b)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	digestLine := regexp.MustCompile(`(?m)^  digest +=\s*"(sha256:[0-9a-f]+)"`)
	locked := func() string {
		t.Helper()
		m := digestLine.FindStringSubmatch(readLock(t, dir))
		if m == nil {
			t.Fatalf("no digest in the lock:\n%s", readLock(t, dir))
		}
		return m[1]
	}

	if r := pin(t, dir, "resolve", cache); r.code != 0 || locked() != newDigest {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Reading mesh-2 alone keeps mesh-1's floor and its observation.
	r := pin(t, dir, "lock", "--from-host", "mesh-2", cache)
	if r.code != 0 || locked() != newDigest {
		t.Fatalf("lock --from-host mesh-2 went back to %s: exit %d\n%s%s", locked(), r.code, r.stdout, r.stderr)
	}
	if l := readLock(t, dir); !strings.Contains(l, `observed "mesh-1"`) || !strings.Contains(l, `observed "mesh-2"`) {
		t.Errorf("the lock forgot a host:\n%s", l)
	}

	// mesh-1's container stops: what it ran is still a floor.
	dockerCLI(t, dh, "stop", "-t", "0", a)
	if r := pin(t, dir, "resolve", cache); r.code != 0 || locked() != newDigest {
		t.Fatalf("resolve with mesh-1 stopped went back to %s: exit %d\n%s%s", locked(), r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "plan", "mesh-1", cache); r.code != 0 || !strings.Contains(r.stdout, "SAME") || !strings.Contains(r.stdout, "[exited]") {
		t.Errorf("plan mesh-1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "plan", "mesh-2", cache); r.code != 0 || !strings.Contains(r.stdout, "UPGRADE") {
		t.Errorf("plan mesh-2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A hand edit: 1.22.6's digest under 1.27.3's lines.
	path := filepath.Join(dir, "pin.lock.hcl")
	editFile(t, path, func(s string) string { return strings.Replace(s, `"`+newDigest+`"`, `"`+oldDigest+`"`, 1) })
	edited := readLock(t, dir)
	for _, args := range [][]string{{"resolve"}, {"plan", "mesh-1"}, {"outdated"}} {
		r := pin(t, dir, append(args, cache)...)
		if r.code != 2 || !strings.Contains(r.stderr, `the lock's entry for module "forge" says`) || !strings.Contains(r.stderr, "pin.lock.hcl:") {
			t.Errorf("%s on a hand-edited lock: exit %d\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "SAME") || strings.Contains(r.stdout, "UPGRADE") {
			t.Errorf("%s judged the edited entry:\n%s", args[0], r.stdout)
		}
	}
	if readLock(t, dir) != edited {
		t.Error("a refused run rewrote the hand-edited lock")
	}
}
