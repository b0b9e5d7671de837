package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
)

// TestRegistryVerifyKeyless runs pin on the real test registry
// (distribution 2.8: no referrers API) with keyless signatures from a
// generated test Sigstore: the newest tag signed by the identity, as a
// Sigstore bundle found through the referrers fallback tag, wins over an
// older tag-scheme signature and a newer unsigned tag; the plan's JSON
// carries the verification lines and matches its schema; pin verify
// passes without asking any host (one that cannot be reached is named),
// and fails for another subject.
func TestRegistryVerifyKeyless(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("%s/verify/keyless-%d", reg, time.Now().UnixNano())
	const iss, who = "https://issuer.example", "release@example.com"
	ss := verifytest.NewSigstore(t)
	push := func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: tag + time.Now().String()})).DigestStr()
	}
	d10 := push("1.0.0")
	ss.SignKeyless(t, who, iss, repo, d10)
	d11 := push("1.1.0")
	ref11 := verifytest.PushBundle(t, repo, d11, ss.KeylessBundle(t, who, iss, verifytest.Statement(repo, d11)))
	d12 := push("1.2.0") // unsigned, newest

	dir := t.TempDir()
	write := func(subject, extra string) {
		cat := fmt.Sprintf(`%smodule "web" {
  image  = %q
  policy = "track-upstream"
  verify {
    issuer       = %q
    subject      = %q
    trusted_root = %q
  }
}
`, extra, repo, iss, subject, ss.RootPath)
		if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(who, "")
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	r := pin(t, dir, "resolve", cache, "--format", "json")
	if r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validate(t, compileSchemas(t)["plan.schema.json"], "resolve, keyless", r.stdout)
	var p planOutput
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || len(p.Modules) != 1 || p.Modules[0].New == nil {
		t.Fatalf("resolve: %v\n%s", err, r.stdout)
	}
	if n := p.Modules[0].New; n.Digest != d11 || n.Verified != verify.MethodCosignKeyless || n.Signer != iss+" "+who || n.Signature != ref11 {
		t.Errorf("plan: new %+v, want 1.1.0 %s verified keyless by %q with the referrer %s", n, d11, iss+" "+who, ref11)
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	for _, want := range []string{`verified  = "cosign-keyless"`, `signer    = "` + iss + " " + who + `"`, `signature = "` + ref11 + `"`} {
		if !strings.Contains(string(lockSrc), want) {
			t.Errorf("lock lacks %s:\n%s", want, lockSrc)
		}
	}
	if strings.Contains(string(lockSrc), d12) {
		t.Errorf("the unsigned 1.2.0 was locked:\n%s", lockSrc)
	}

	// A Docker host whose socket counts connections: pin verify does not
	// ask it.
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var dialed atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Close()
		}
	}()
	write(who, "host \"h1\" {\n  docker = \"unix://"+sock+"\"\n}\n")
	r = pin(t, dir, "verify", cache)
	if r.code != 0 || !strings.Contains(r.stdout, "ok   web") || !strings.Contains(r.stdout, "cosign-keyless") {
		t.Errorf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := dialed.Load(); n != 0 {
		t.Errorf("verify connected to the Docker host %d time(s), want none", n)
	}
	r = pin(t, dir, "verify", cache, "--offline")
	if r.code != 0 {
		t.Errorf("verify offline: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	write("someone-else@example.com", "")
	r = pin(t, dir, "verify", cache)
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL web") || !strings.Contains(r.stdout, "untrusted signer") {
		t.Errorf("verify with another subject: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The identity changed: the locked 1.1.0 can no longer be verified,
	// and resolve says so and refuses (it neither keeps it silently nor
	// goes below it), the lock byte-identical.
	locked, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	r = pin(t, dir, "resolve", cache)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "can no longer be verified") || !strings.Contains(r.stdout+r.stderr, `allow_unverified = "<why>"`) ||
		!strings.Contains(r.stderr, "signed by "+iss+" "+who+", not the identity the verify block names") {
		t.Errorf("resolve with another subject: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); string(after) != string(locked) {
		t.Errorf("the refused run changed the lock:\n%s", after)
	}
}
