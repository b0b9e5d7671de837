package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestCertsDir resolves a module of the registry that requires a client
// certificate (scripts/test's, from the test CA), whose CA and client
// certificate stand only in a certs.d folder of the test's: --certs-dir,
// or PIN_CERTS_DIR, names it instead of /etc/docker/certs.d. The flag
// comes before the variable, a folder without the host's files is refused
// saying where the files belong, and a folder that does not exist (or a
// file) is bad input.
func TestCertsDir(t *testing.T) {
	addr, tlsDir := testenv.MTLSRegistry(t)
	repo := fmt.Sprintf("%s/certsdir/app-%d", addr, time.Now().UnixNano())
	img := testimage.Build(t, testimage.Options{Content: t.Name(), Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
		Labels: map[string]string{"org.opencontainers.image.version": "1.0.0"}})
	testimage.PushTLS(t, repo+":1.0.0", img, testenv.TLSTransport(t, tlsDir, true))

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), fmt.Sprintf(`module "app" {
  image  = %q
  policy = "track-upstream"
  pin    = "1.0.0"
}
`, repo))
	good := filepath.Join(dir, "certs.d")
	testenv.WriteFiles(t, filepath.Join(good, addr), map[string][]byte{
		"ca.crt":      testenv.ReadFile(t, tlsDir, "ca.pem"),
		"client.cert": testenv.ReadFile(t, tlsDir, "cert.pem"),
		"client.key":  testenv.ReadFile(t, tlsDir, "key.pem"),
	})
	empty := filepath.Join(dir, "empty.d")
	os.Mkdir(empty, 0o755)

	runs := 0
	resolve := func(env string, flags ...string) result {
		t.Helper()
		t.Setenv(envCertsDir, env)
		os.Remove(filepath.Join(dir, "pin.lock.hcl"))
		runs++ // a cold cache each time: every run asks the registry
		return pin(t, dir, append([]string{"resolve", "--cache-dir", filepath.Join(dir, fmt.Sprint("cache", runs))}, flags...)...)
	}
	reads := func(what string, r result) {
		t.Helper()
		if r.code != exitOK {
			t.Fatalf("%s: exit %d\n%s", what, r.code, r.stderr)
		}
		digest := digestOf(t, img)
		if lock := readLock(t, dir); !strings.Contains(lock, `digest  = "`+digest+`"`) {
			t.Errorf("%s: the lock does not name %s:\n%s", what, digest, lock)
		}
	}
	refused := func(what string, r result, code int, says ...string) {
		t.Helper()
		if r.code != code {
			t.Errorf("%s: exit %d, want %d\n%s", what, r.code, code, r.stderr)
		}
		for _, s := range says {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("%s: stderr does not say %q:\n%s", what, s, r.stderr)
			}
		}
	}

	reads("--certs-dir", resolve("", "--certs-dir", good))
	reads("PIN_CERTS_DIR", resolve(good))
	// Without its files the registry is not reached, and pin says where
	// they belong: in the folder named, not /etc/docker/certs.d.
	refused("--certs-dir before PIN_CERTS_DIR", resolve(good, "--certs-dir", empty), exitSource, filepath.Join(empty, addr))
	refused("PIN_CERTS_DIR of no files", resolve(empty), exitSource, filepath.Join(empty, addr))
	missing := filepath.Join(dir, "nowhere")
	refused("--certs-dir that does not exist", resolve("", "--certs-dir", missing), exitInput, "--certs-dir "+missing)
	refused("PIN_CERTS_DIR that does not exist", resolve(missing), exitInput, envCertsDir+" "+missing+": no such folder")
	refused("--certs-dir of a file", resolve("", "--certs-dir", filepath.Join(dir, "catalogue.hcl")), exitInput, "not a folder")
}
