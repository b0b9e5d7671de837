package main

import (
	"crypto/elliptic"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/lock"
)

// fleetKey writes a key pair in cosign's format (an encrypted "SIGSTORE
// PRIVATE KEY", as cosign generate-key-pair writes it) into dir, its
// password in COSIGN_PASSWORD for the test.
func fleetKey(t *testing.T, dir string) (key, pub string) {
	t.Helper()
	t.Setenv("COSIGN_PASSWORD", "fleet-test")
	priv, pubPEM, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte("fleet-test")))
	if err != nil {
		t.Fatal(err)
	}
	key, pub = filepath.Join(dir, "fleet.key"), filepath.Join(dir, "fleet.pub")
	os.WriteFile(key, priv, 0o600)
	os.WriteFile(pub, pubPEM, 0o644)
	return key, pub
}

// TestObservePublishedHostResolves: a host pin cannot reach publishes
// what it runs with pin observe --push; another pin reads only that,
// verified, and its floor counts as a live one: the running 1.27.3 wins
// over the pinned 1.22.6, and the lock records where it was observed. A
// publication signed by another key is refused, with the host named, and
// the previous lock is left as it was.
func TestObservePublishedHostResolves(t *testing.T) {
	reg := testenv.Registry(t)
	stamp := time.Now().UnixNano()
	repo := fmt.Sprintf("%s/fleet/forgejo-%d", reg, stamp)
	fleetRepo := fmt.Sprintf("%s/fleet/observations-%d", reg, stamp)
	old := testimage.Build(t, testimage.Options{Content: "1.22.6", Created: time.Date(2024, 12, 12, 0, 0, 0, 0, time.UTC), Labels: map[string]string{"org.opencontainers.image.version": "1.22.6"}})
	testimage.Push(t, repo+":1.22.6", old)
	running := testimage.Build(t, testimage.Options{Content: "1.27.3", Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), Labels: map[string]string{"org.opencontainers.image.version": "1.27.3"}})
	ranRef := testimage.Push(t, repo+":1.27.3", running)

	// The agent, on the edge host: its catalogue reads the host (here a
	// snapshot; on a real host its engine), and publishes.
	agent := t.TempDir()
	key, pub := fleetKey(t, agent)
	snap := host.Snapshot{Schema: 1, Host: "edge-1", ImageStore: "classic",
		Containers: []host.Container{{ID: "c", Name: "forgejo", Image: repo + ":1.27.3", ImageID: configOf(t, running), State: host.StateExited}},
		Images:     []host.Image{{ID: configOf(t, running), RepoDigests: []string{ranRef.String()}, OS: "linux", Arch: "amd64"}}}
	b, _ := snap.Marshal()
	os.WriteFile(filepath.Join(agent, "edge-1.json"), b, 0o644)
	os.WriteFile(filepath.Join(agent, "catalogue.hcl"), []byte(`host "edge-1" {
  snapshot = "edge-1.json"
}
`), 0o644)
	r := pin(t, agent, "observe", "edge-1", "--key", key, "--push", fleetRepo)
	if r.code != 0 || !strings.Contains(r.stdout, "published as "+fleetRepo+"@sha256:") {
		t.Fatalf("pin observe: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// The reader: it reaches the registry, never the host.
	dir := t.TempDir()
	catalogue := func(pubKey string) {
		os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(fmt.Sprintf(`host "edge-1" {
  observations = "oci://%s"
  max_age      = "10m"
  verify {
    keys = [%q]
  }
}

module "forge" {
  image  = %q
  policy = "at-least-running"
  pin    = "1.22.6"
  runs_on "edge-1" { container = "forgejo" }
}
`, fleetRepo, pubKey, repo)), 0o644)
	}
	catalogue(pub)
	r = pin(t, dir, "resolve", "--cache-dir="+filepath.Join(dir, "cache"))
	if r.code != 0 {
		t.Fatalf("pin resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	written, err := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	l, diags := lock.Parse(written, "pin.lock.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := l.Module("forge")
	if e == nil || e.Digest != ranRef.DigestStr() || e.Source != lock.SourceRunning {
		t.Fatalf("lock entry %+v, want the running 1.27.3 (%s), won by running:\n%s", e, ranRef.DigestStr(), written)
	}
	// -v counts the requests for the observation apart from the
	// modules': warm, one manifest HEAD (and the ping), the artifact and
	// its signature read from the cache.
	r = pin(t, dir, "resolve", "-v", "--cache-dir="+filepath.Join(dir, "cache"))
	if want := reg + ": 3 requests (manifest HEAD 1, ping http 1, ping https 1) reading published observations"; r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("resolve -v, warm: exit %d, want %q in\n%s", r.code, want, r.stderr)
	}

	// Another key: refused, the host named, the lock untouched.
	otherKey := t.TempDir()
	_, otherPub := fleetKey(t, otherKey)
	catalogue(otherPub)
	r = pin(t, dir, "resolve", "--cache-dir="+filepath.Join(dir, "cache"))
	if r.code == 0 || !strings.Contains(r.stderr, "edge-1") || !strings.Contains(r.stderr, "not signed by a trusted key") {
		t.Fatalf("another key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); string(after) != string(written) {
		t.Fatalf("a refused run changed the lock:\n%s", after)
	}
}
