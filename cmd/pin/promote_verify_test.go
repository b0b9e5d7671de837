package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
)

// TestPromoteRefusesUnverified: a module with a verify policy (a cosign
// key) on the real test registry. Staging runs a build that is not
// signed, then one signed by another key: pin promote staging production
// refuses each, naming the module and what to do, with every lock file
// byte-identical. A build signed by the trusted key is promoted, and its
// entry records the signer: the refusals were the signature's.
func TestPromoteRefusesUnverified(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("%s/promote/app-%d", reg, time.Now().UnixNano())
	key, other := verifytest.NewKey(t), verifytest.NewKey(t)
	type pushed struct{ digest, config string }
	builds := map[string]pushed{}
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0"} {
		img := testimage.Build(t, testimage.Options{Content: repo + v, Labels: map[string]string{"org.opencontainers.image.version": v}})
		cfg, err := img.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		builds[v] = pushed{testimage.Push(t, repo+":"+v, img).DigestStr(), cfg.String()}
	}
	verifytest.SignImage(t, key, repo, builds["1.0.0"].digest)
	// 1.1.0 is not signed; 1.2.0 is signed by a key the module does not trust.
	verifytest.SignImage(t, other, repo, builds["1.2.0"].digest)
	verifytest.SignImage(t, key, repo, builds["1.3.0"].digest)

	dir := t.TempDir()
	// runs writes host h's snapshot: app at version v, started ago.
	runs := func(h, v string, ago time.Duration) {
		b := builds[v]
		s := &host.Snapshot{Schema: 1, Host: h, ImageStore: "classic",
			Containers: []host.Container{{ID: fmt.Sprintf("%064d", 1), Name: "app", Image: repo + ":" + v, ImageID: b.config, State: "running", StartedAt: testNow.Add(-ago)}},
			Images:     []host.Image{{ID: b.config, RepoTags: []string{repo + ":" + v}, RepoDigests: []string{repo + "@" + b.digest}, OS: "linux", Arch: "amd64"}}}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, h+".json"), string(out))
	}
	cat := ""
	for _, h := range []string{"p1", "s1", "s2"} {
		cat += fmt.Sprintf("host %q {\n  snapshot = %q\n}\n\n", h, h+".json")
	}
	cat += fmt.Sprintf(`module "app" {
  image  = %q
  policy = "at-least-running"
  runs_on "s1" { container = "app" }
  runs_on "s2" { container = "app" }
  runs_on "p1" { container = "app" }
  verify {
    keys = [%q]
  }
}

environment "staging" {
  hosts = ["s1", "s2"]
}

environment "production" {
  hosts = ["p1"]
  from  = "staging"
  soak  = "24h"
}
`, repo, key.Path)
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	runs("p1", "1.0.0", 100*time.Hour)
	runs("s1", "1.0.0", 100*time.Hour)
	runs("s2", "1.0.0", 100*time.Hour)
	if r := pin(t, dir, "resolve", cache); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	files := []string{"pin.lock.staging.hcl", "pin.lock.production.hcl"}
	for _, tc := range []struct{ name, version, why string }{
		{"unsigned", "1.1.0", "no signature"},
		{"another key", "1.2.0", "untrusted signer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs("s1", tc.version, 48*time.Hour)
			runs("s2", tc.version, 48*time.Hour)
			before := map[string]string{}
			for _, f := range files {
				before[f] = readFileT(t, filepath.Join(dir, f))
			}
			r := pin(t, dir, "promote", "staging", "production", cache)
			if r.code != exitFindings || !strings.Contains(r.stderr, `module "app": refusing to promote (unverified): `+tc.version) ||
				!strings.Contains(r.stderr, "sign the build (cosign sign) with a key or identity the module's verify block trusts") ||
				!strings.Contains(r.stderr, "pin.lock.production.hcl left unchanged") {
				t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.why) {
				t.Errorf("the refusal does not say %q:\n%s", tc.why, r.stderr)
			}
			for _, f := range files {
				if after, _ := os.ReadFile(filepath.Join(dir, f)); string(after) != before[f] {
					t.Errorf("%s changed on a refusal", f)
				}
			}
		})
	}

	// Signed by the trusted key: promoted, the signer recorded.
	runs("s1", "1.3.0", 48*time.Hour)
	runs("s2", "1.3.0", 48*time.Hour)
	if r := pin(t, dir, "promote", "staging", "production", cache); r.code != exitOK {
		t.Fatalf("promote a signed build: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lf := readFileT(t, filepath.Join(dir, "pin.lock.production.hcl"))
	for _, want := range []string{`digest    = "` + builds["1.3.0"].digest + `"`, `verified  = "cosign-key"`, `signer    = "` + key.Fingerprint + `"`, `from    = "staging"`} {
		if !strings.Contains(lf, want) {
			t.Errorf("production's lock lacks %s:\n%s", want, lf)
		}
	}
}
