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
	"github.com/pin-tool/pin/internal/testkit/verifytest"
)

// TestRegistryVerify runs pin on the real test registry with signed and
// unsigned tags: the newest signed tag wins and is recorded; the newer
// unsigned one is reported; pin verify passes, and still passes after the
// locked tag is re-pushed unsigned; an unsigned exact pin and a wrong key
// are refused.
func TestRegistryVerify(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("%s/verify/web-%d", reg, time.Now().UnixNano())
	key, other := verifytest.NewKey(t), verifytest.NewKey(t)
	push := func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: tag + time.Now().String()})).DigestStr()
	}
	d10 := push("1.0.0")
	verifytest.SignImage(t, key, repo, d10)
	d11 := push("1.1.0")
	sig11 := verifytest.SignImage(t, key, repo, d11)
	d12 := push("1.2.0") // unsigned, newest

	dir := t.TempDir()
	write := func(keyPath string, exact string) {
		cat := fmt.Sprintf(`module "web" {
  image  = %q
  policy = "track-upstream"
  verify {
    keys = [%q]
  }
}
`, repo, keyPath)
		if exact != "" {
			cat += fmt.Sprintf(`
module "pinned" {
  image  = %q
  policy = "exact"
  pin    = %q
  verify {
    keys = [%q]
  }
}
`, repo, exact, keyPath)
		}
		if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(key.Path, "")
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	r := pin(t, dir, "resolve", cache)
	if r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	for _, want := range []string{`tag       = "1.1.0"`, `digest    = "` + d11 + `"`, `verified  = "cosign-key"`, `signer    = "` + key.Fingerprint + `"`, `signature = "` + sig11 + `"`} {
		if !strings.Contains(string(lockSrc), want) {
			t.Errorf("lock lacks %s:\n%s", want, lockSrc)
		}
	}
	if strings.Contains(string(lockSrc), d12) {
		t.Errorf("the unsigned 1.2.0 was locked:\n%s", lockSrc)
	}

	r = pin(t, dir, "outdated", cache)
	if r.code != 1 || !strings.Contains(r.stdout, "unverified") || !strings.Contains(r.stdout, "1.2.0") || !strings.Contains(r.stdout, "unsigned") {
		t.Errorf("outdated: exit %d, want 1 and the unsigned 1.2.0 reported\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, dir, "verify", cache)
	if r.code != 0 || !strings.Contains(r.stdout, "ok   web") {
		t.Errorf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// 1.1.0 re-pushed unsigned: the lock's digest still verifies by the
	// signature it records; outdated reports the unsigned candidates.
	push("1.1.0")
	r = pin(t, dir, "verify", cache)
	if r.code != 0 {
		t.Errorf("verify after 1.1.0 moved: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, dir, "verify", cache, "--offline")
	if r.code != 0 {
		t.Errorf("verify offline: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pin(t, dir, "outdated", cache)
	if r.code != 1 || strings.Count(r.stdout, "unsigned") < 2 {
		t.Errorf("outdated after 1.1.0 moved: exit %d, want both unsigned tags reported\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Another key: the lock's signature is refused.
	write(other.Path, "")
	r = pin(t, dir, "verify", cache)
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL web") || !strings.Contains(r.stdout, "untrusted signer") {
		t.Errorf("verify with another key: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// An unsigned exact pin is refused with the reason.
	write(key.Path, "1.2.0@"+d12)
	r = pin(t, dir, "resolve", cache)
	if r.code == 0 || !strings.Contains(r.stderr+r.stdout, "unsigned") {
		t.Errorf("unsigned exact pin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
