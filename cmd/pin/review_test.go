package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewFirstLockFromOneHost.
//
// HOLE (issue 12 case 3, the first time): "pin lock --from-host mesh-2"
// reads mesh-2 alone and keeps, of the other hosts, only what the previous
// lock recorded. With no lock yet (a fleet's first lock, or a lock deleted
// to start over), forge, a one_way module that mesh-1 runs at 1.27.3, is
// locked at 1.22.6 (what mesh-2 runs, and the pin), exit 0: the lock names
// an image older than what runs on mesh-1, without a word in the
// catalogue. "pin resolve" on the same catalogue locks 1.27.3.
//
// FIX: resolve.decide in ModeFromHost (resolve/resolve.go): a module that
// runs on hosts other than --from-host for which the previous entry
// records nothing has floors this command cannot know: refuse it (or
// leave it to "pin resolve", as ChangeSkipped does), naming the hosts not
// read; or have cmd/pin's lock read every host of the modules mesh-2 runs.
func TestReviewFirstLockFromOneHost(t *testing.T) {
	dir := incidentDir(t, func(s string) string {
		s = strings.Replace(s, `  runs_on "mesh-1" { container = "forgejo" }`, `  runs_on "mesh-1" { container = "forgejo" }
  runs_on "mesh-2" { container = "forgejo" }`, 1)
		return s + "\nhost \"mesh-2\" {\n  snapshot = \"mesh-2.json\"\n}\n"
	})
	writeFile(t, filepath.Join(dir, "mesh-2.json"), `{"schema": 1, "host": "mesh-2", "image_store": "classic",
  "containers": [{"id": "2", "name": "forgejo", "image": "registry.example.org/forge/forgejo:1.22.6",
    "image_id": "sha256:0a70ad70cc3b01ed11e4051b88ef0e042a9b02fb59881176872106ac46890262", "state": "running"}],
  "images": [{"id": "sha256:0a70ad70cc3b01ed11e4051b88ef0e042a9b02fb59881176872106ac46890262",
    "repo_digests": ["registry.example.org/forge/forgejo@`+forge1226+`"], "created": "2024-12-12T00:00:00Z",
    "labels": {"org.opencontainers.image.version": "1.22.6"}, "os": "linux", "architecture": "amd64"}]}`)
	if _, err := os.Stat(filepath.Join(dir, "pin.lock.hcl")); err == nil {
		t.Fatal("precondition: no lock yet")
	}
	r := pin(t, dir, "lock", "--from-host", "mesh-2")
	if r.code == 0 {
		lock := readLock(t, dir)
		if d := lockedDigest(t, lock, "forge"); d != forge1273 {
			t.Errorf("lock --from-host mesh-2 (no previous lock): exit 0 and forge locked at %s (1.22.6) while mesh-1 runs 1.27.3 (%s); one_way, no allow_downgrade\n%s", d, forge1273, r.stdout)
		}
	}
	// What pin resolve would write, for comparison.
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	if r := pin(t, dir, "resolve"); r.code != 0 || lockedDigest(t, readLock(t, dir), "forge") != forge1273 {
		t.Errorf("precondition: resolve locks forge at 1.27.3: exit %d\n%s", r.code, r.stderr)
	}
}
