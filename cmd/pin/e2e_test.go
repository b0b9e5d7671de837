package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// dockerCLIHost is the test engine's address, for tests that also drive it
// with the docker CLI: they skip without one on a laptop, and fail in CI.
func dockerCLIHost(t *testing.T) string {
	t.Helper()
	dh := testenv.DockerHost(t)
	if _, err := exec.LookPath("docker"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker CLI required in CI")
		}
		t.Skip("docker CLI not installed")
	}
	return dh
}

// dockerCLI runs the Docker CLI against the test engine.
func dockerCLI(t *testing.T, host string, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", append([]string{"-H", host}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestIncidentEndToEnd reproduces the incident against a real registry and
// a real Docker Engine: the host pulls a floating tag, the tag moves on, the
// container is recreated on the newer build, and the catalogue still pins
// the older digest. pin resolve, pin lock --from-host and pin plan all
// catch it; a snapshot taken live gives the same lock.
func TestIncidentEndToEnd(t *testing.T) {
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	id := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/e2e/forge-%d", reg, id)
	container := fmt.Sprintf("forgejo-%d", id)
	sleeper := testimage.Sleeper(t)
	build := func(v, date string) (string, string) {
		created, _ := time.Parse("2006-01-02", date)
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath}, Created: created,
			Labels: map[string]string{"org.opencontainers.image.version": v}})
		d := testimage.Push(t, repo+":"+v, img)
		return d.DigestStr(), v
	}
	oldDigest, _ := build("1.22.6", "2024-12-12")
	newDigest, _ := build("1.27.3", "2026-09-01")
	// "stable" first names 1.22.6; the host runs it.
	tagStable := func(digest string) {
		t.Helper()
		out, err := exec.Command("docker", "-H", dh, "pull", "-q", repo+"@"+digest).CombinedOutput()
		if err != nil {
			t.Fatalf("pull: %v %s", err, out)
		}
		dockerCLI(t, dh, "tag", repo+"@"+digest, repo+":stable")
		dockerCLI(t, dh, "push", "-q", repo+":stable")
	}
	tagStable(oldDigest)
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", container, repo+":stable")
	t.Cleanup(func() { exec.Command("docker", "-H", dh, "rm", "-f", container).Run() })
	// The tag moves on; the host recreates the container on the newer build.
	tagStable(newDigest)
	dockerCLI(t, dh, "rm", "-f", container)
	dockerCLI(t, dh, "pull", "-q", repo+":stable")
	dockerCLI(t, dh, "run", "-d", "--network", "none", "--name", container, repo+":stable")

	dir := t.TempDir()
	writeCat := func(policy, extra, hostAttr string) {
		cat := fmt.Sprintf(`host "mesh-1" {
  %s
}

module "forge" {
  image  = %q
  policy = %q
  pin    = "1.22.6@%s"
  %s
  runs_on "mesh-1" { container = %q }
}
`, hostAttr, repo, policy, oldDigest, extra, container)
		if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live := fmt.Sprintf("docker = %q", dh)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	// exact: refused, naming both images; nothing written.
	writeCat("exact", "", live)
	r := pin(t, dir, "resolve", cache)
	if r.code != 1 || !strings.Contains(r.stderr, `module "forge": refusing a downgrade`) || !strings.Contains(r.stderr, "version 1.22.6 < 1.27.3") {
		t.Fatalf("exact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); !os.IsNotExist(err) {
		t.Fatal("a refused resolve wrote the lock")
	}

	// at-least-running: lock --from-host keeps what runs and records it.
	writeCat("at-least-running", "", live)
	r = pin(t, dir, "lock", "--from-host", "mesh-1", "--snapshot", "mesh-1.json", cache)
	if r.code != 0 {
		t.Fatalf("lock --from-host: exit %d\n%s", r.code, r.stderr)
	}
	fromHost, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	for _, want := range []string{`digest  = "` + newDigest + `"`, `source  = "running"`, `rule    = "version"`, `observed "mesh-1"`, `version = "1.27.3"`} {
		if !bytes.Contains(fromHost, []byte(want)) {
			t.Errorf("lock lacks %s:\n%s", want, fromHost)
		}
	}
	// resolve agrees, and the gate says "same".
	r = pin(t, dir, "resolve", cache)
	if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); r.code != 0 || !bytes.Equal(after, fromHost) {
		t.Fatalf("resolve after lock --from-host: exit %d, lock changed %v\n%s", r.code, !bytes.Equal(after, fromHost), r.stderr)
	}
	if r := pin(t, dir, "plan", "mesh-1"); r.code != 0 || !strings.Contains(r.stdout, "SAME") {
		t.Fatalf("plan after lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The snapshot taken live gives the same lock.
	os.Rename(filepath.Join(dir, "pin.lock.hcl"), filepath.Join(dir, "live.lock.hcl"))
	writeCat("at-least-running", "", `snapshot = "mesh-1.json"`)
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve from snapshot: %s", r.stderr)
	}
	fromSnap, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Equal(fromSnap, fromHost) {
		t.Errorf("snapshot lock differs from live lock:\n%s\n---\n%s", fromSnap, fromHost)
	}
	// And offline, from the snapshot and the cache alone.
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	if r := pin(t, dir, "resolve", "--offline", cache); r.code != 0 {
		t.Fatalf("resolve --offline from snapshot: %s", r.stderr)
	}
	offline, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if !bytes.Equal(offline, fromHost) {
		t.Errorf("offline lock differs from live lock:\n%s\n---\n%s", offline, fromHost)
	}

	// A lock that names the old pin (downgrade stated) fails the gate.
	writeCat("exact", `allow_downgrade = "e2e"`, live)
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve with allow_downgrade: %s", r.stderr)
	}
	r = pin(t, dir, "plan", "mesh-1", cache)
	if r.code != 1 || !strings.Contains(r.stdout, "DOWNGRADE") || !strings.Contains(r.stdout, "version 1.22.6 < 1.27.3") {
		t.Fatalf("plan with the old pin locked: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestHostDown: an engine that does not answer gives exit 3, a message
// naming the host, and an untouched lock.
func TestHostDown(t *testing.T) {
	dir := incidentDir(t, nil)
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	cat := filepath.Join(dir, "catalogue.hcl")
	src, _ := os.ReadFile(cat)
	s := strings.Replace(string(src), `snapshot = "`+repoRoot+`/examples/incident/mesh-1.json"`, `docker = "unix:///nonexistent/pin-test.sock"`, 1)
	os.WriteFile(cat, []byte(s), 0o644)
	r := pin(t, dir, "resolve")
	if r.code != 3 || !strings.Contains(r.stderr, "host mesh-1") || !strings.Contains(r.stderr, "unix:///nonexistent/pin-test.sock") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(before, after) {
		t.Error("lock changed")
	}
	if r := pin(t, dir, "plan", "mesh-1"); r.code != 3 {
		t.Errorf("plan on a down host: exit %d", r.code)
	}
}
