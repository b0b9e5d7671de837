package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/faultproxy"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

func configOf(t *testing.T, img v1.Image) string {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func digestOf(t *testing.T, d interface{ Digest() (v1.Hash, error) }) string {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// TestRegistryTrackUpstreamIndex resolves a track-upstream module against a
// real registry: the newest release is a multi-platform index, a newer
// pre-release is passed over, the lock names the index digest and each
// platform's digest, and the requests made are exactly the cost model's
// floor, cold and warm (printed by -v).
func TestRegistryTrackUpstreamIndex(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("%s/upstream/web-%d", reg, time.Now().UnixNano())
	img := func(v string, p testimage.Platform) v1.Image {
		return testimage.Build(t, testimage.Options{Content: v + p.String(), Platform: p, Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
			Labels: map[string]string{"org.opencontainers.image.version": v}})
	}
	amd, arm := testimage.Platform{OS: "linux", Architecture: "amd64"}, testimage.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	testimage.Push(t, repo+":1.0.0", img("1.0.0", amd))
	idxAmd, idxArm := img("1.1.0", amd), img("1.1.0", arm)
	idx := testimage.Index(t, map[testimage.Platform]v1.Image{amd: idxAmd, arm: idxArm})
	testimage.Push(t, repo+":1.1.0", idx)
	testimage.Push(t, repo+":1.2.0-rc.1", img("1.2.0-rc.1", amd))
	testimage.Push(t, repo+":latest", img("1.2.0-rc.1", amd))

	dir := t.TempDir()
	cat := fmt.Sprintf(`module "web" {
  image  = %q
  policy = "track-upstream"
  pin    = "1.0.0"
}
`, repo)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	r := pin(t, dir, "resolve", "-v", cache)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	for _, want := range []string{
		`tag     = "1.1.0"`,
		`digest  = "` + digestOf(t, idx) + `"`,
		`config  = "` + configOf(t, idxAmd) + `"`, // linux/amd64 when nothing runs
		`"linux/amd64"    = "` + digestOf(t, idxAmd) + `"`,
		`"linux/arm64/v8" = "` + digestOf(t, idxArm) + `"`,
		`source = "upstream"`,
	} {
		if !strings.Contains(string(lockSrc), want) {
			t.Errorf("lock lacks %s:\n%s", want, lockSrc)
		}
	}
	// Cold: 1 tag list + 2 manifests (index and platform) + 1 config, and
	// the ping (go-containerregistry tries https first, then plain http).
	wantCold := reg + ": 6 requests (blob GET 1, manifest GET 2, ping http 1, ping https 1, tags list 1)"
	if !strings.Contains(r.stderr, wantCold) {
		t.Errorf("cold requests: want %q in\n%s", wantCold, r.stderr)
	}
	// Warm: 1 tag list + 1 HEAD; manifests and configs come from the cache.
	r = pin(t, dir, "resolve", "-v", cache)
	wantWarm := reg + ": 4 requests (manifest HEAD 1, ping http 1, ping https 1, tags list 1)"
	if r.code != 0 || !strings.Contains(r.stderr, wantWarm) || !strings.Contains(r.stdout, "Plan: 1 unchanged.") {
		t.Errorf("warm run: exit %d, want %q in\n%s\n%s", r.code, wantWarm, r.stderr, r.stdout)
	}
}

// TestRegistryRunningPlatform: a host runs the arm64 image of an index; the
// lock keeps the index digest and the arm64 config, not amd64's.
func TestRegistryRunningPlatform(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("%s/platform/db-%d", reg, time.Now().UnixNano())
	amd, arm := testimage.Platform{OS: "linux", Architecture: "amd64"}, testimage.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	build := func(v string, p testimage.Platform) v1.Image {
		return testimage.Build(t, testimage.Options{Content: v + p.String(), Platform: p, Labels: map[string]string{"org.opencontainers.image.version": v}})
	}
	old := testimage.Push(t, repo+":2.0.0", build("2.0.0", amd))
	newArm := build("2.1.0", arm)
	idx := testimage.Index(t, map[testimage.Platform]v1.Image{amd: build("2.1.0", amd), arm: newArm})
	idxRef := testimage.Push(t, repo+":2.1.0", idx)

	dir := t.TempDir()
	snap := host.Snapshot{Schema: 1, Host: "arm-1", ImageStore: "classic",
		Containers: []host.Container{{ID: "c1", Name: "db", Image: repo + ":2.1.0", ImageID: configOf(t, newArm), State: "running"}},
		Images: []host.Image{{ID: configOf(t, newArm), RepoDigests: []string{idxRef.String()}, OS: "linux", Arch: "arm64", Variant: "v8",
			Labels: map[string]string{"org.opencontainers.image.version": "2.1.0"}}}}
	b, _ := snap.Marshal()
	os.WriteFile(filepath.Join(dir, "arm-1.json"), b, 0o644)
	cat := fmt.Sprintf(`host "arm-1" {
  snapshot = "arm-1.json"
}

module "db" {
  image  = %q
  policy = "at-least-running"
  pin    = "2.0.0@%s"
  runs_on "arm-1" { container = "db" }
}
`, repo, old.DigestStr())
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644)
	r := pin(t, dir, "resolve", "--cache-dir="+filepath.Join(dir, "cache"))
	if r.code != 0 {
		t.Fatalf("exit %d %s", r.code, r.stderr)
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	for _, want := range []string{`digest  = "` + idxRef.DigestStr() + `"`, `config  = "` + configOf(t, newArm) + `"`, `source = "running"`} {
		if !strings.Contains(string(lockSrc), want) {
			t.Errorf("lock lacks %s:\n%s", want, lockSrc)
		}
	}
}

// TestRegistryCredentialsNeverShown reads a registry behind basic auth with
// credentials from a Docker config; the password appears in no output, no
// lock and no error, with good credentials and with wrong ones.
func TestRegistryCredentialsNeverShown(t *testing.T) {
	addr, user, password := testenv.AuthRegistry(t)
	repo := fmt.Sprintf("%s/private/app-%d", addr, time.Now().UnixNano())
	auth := authn.FromConfig(authn.AuthConfig{Username: user, Password: password})
	testimage.Push(t, repo+":3.0.0", testimage.Build(t, testimage.Options{Content: "3.0.0"}), auth)
	testimage.Push(t, repo+":3.1.0", testimage.Build(t, testimage.Options{Content: "3.1.0"}), auth)

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(fmt.Sprintf(`module "app" {
  image  = %q
  policy = "track-upstream"
}
`, repo)), 0o644)
	secrets := []string{password, base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	check := func(what string, texts ...string) {
		t.Helper()
		for _, s := range secrets {
			for _, text := range texts {
				if strings.Contains(text, s) {
					t.Errorf("%s shows the secret %q", what, s)
				}
			}
		}
	}
	writeConfig := func(pass string) {
		cfg := t.TempDir()
		enc := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		os.WriteFile(filepath.Join(cfg, "config.json"), []byte(fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, addr, enc)), 0o600)
		t.Setenv("DOCKER_CONFIG", cfg)
	}

	writeConfig(password)
	r := pin(t, dir, "resolve", "-v", "--format", "json", "--cache-dir="+filepath.Join(dir, "cache"))
	if r.code != 0 || !strings.Contains(r.stdout, `"tag": "3.1.0"`) {
		t.Fatalf("with credentials: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	check("resolve", r.stdout, r.stderr, string(lockSrc))

	// Wrong password: exit 3, the registry named, no secret shown.
	writeConfig("wrong-" + password)
	secrets = append(secrets, "wrong-"+password)
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	r = pin(t, dir, "resolve", "-v", "--cache-dir="+filepath.Join(dir, "cache2"))
	if r.code != 3 || !strings.Contains(r.stderr, addr) {
		t.Fatalf("wrong password: exit %d\n%s", r.code, r.stderr)
	}
	check("failed resolve", r.stdout, r.stderr)
}

// TestRegistryEpochDatesRefused: a floating tag moved between two
// reproducible builds (created 1970-01-01, no version): nothing orders them,
// so following the tag is refused, naming what was known of each.
func TestRegistryEpochDatesRefused(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("%s/repro/tool-%d", reg, time.Now().UnixNano())
	epoch := time.Unix(0, 0)
	running := testimage.Build(t, testimage.Options{Content: "build a", Created: epoch})
	ranRef := testimage.Push(t, repo+":latest", running)
	testimage.Push(t, repo+":latest", testimage.Build(t, testimage.Options{Content: "build b", Created: epoch}))

	dir := t.TempDir()
	snap := host.Snapshot{Schema: 1, Host: "h", ImageStore: "classic",
		Containers: []host.Container{{ID: "c", Name: "tool", Image: repo + ":latest", ImageID: configOf(t, running), State: "running"}},
		Images:     []host.Image{{ID: configOf(t, running), RepoDigests: []string{ranRef.String()}, Created: epoch.UTC(), OS: "linux", Arch: "amd64"}}}
	b, _ := snap.Marshal()
	os.WriteFile(filepath.Join(dir, "h.json"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(fmt.Sprintf(`host "h" {
  snapshot = "h.json"
}

module "tool" {
  image  = %q
  policy = "track-upstream"
  tag    = "latest"
  runs_on "h" { container = "tool" }
}
`, repo)), 0o644)
	r := pin(t, dir, "resolve", "--cache-dir="+filepath.Join(dir, "cache"))
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"cannot be ordered against what h/tool runs", "build date 1970-01-01T00:00:00Z (not plausible: treated as unknown)", "no semver version in its tag or label"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// TestRegistryTokenFleet resolves three track-upstream modules on a real
// registry that hands out Bearer tokens: the -v summary shows one ping (https,
// then the plain http of loopback) and one token for all three, then the
// cost model's floor per module, cold and warm.
func TestRegistryTokenFleet(t *testing.T) {
	reg := testenv.TokenRegistry(t)
	base := fmt.Sprintf("%s/fleet-%d", reg, time.Now().UnixNano())
	var cat strings.Builder
	for _, name := range []string{"api", "web", "worker"} {
		repo := base + "/" + name
		for _, v := range []string{"1.0.0", "1.1.0"} {
			testimage.Push(t, repo+":"+v, testimage.Build(t, testimage.Options{Content: name + v,
				Labels: map[string]string{"org.opencontainers.image.version": v}}))
		}
		fmt.Fprintf(&cat, "module %q {\n  image  = %q\n  policy = \"track-upstream\"\n  pin    = \"1.0.0\"\n}\n", name, repo)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat.String()), 0o644)
	cache := "--cache-dir=" + filepath.Join(dir, "cache")

	r := pin(t, dir, "resolve", "-v", cache)
	wantCold := reg + ": 12 requests (blob GET 3, manifest GET 3, ping http 1, ping https 1, tags list 3, token 1)"
	if r.code != 0 || !strings.Contains(r.stderr, wantCold) {
		t.Errorf("cold run: exit %d, want %q in\n%s\n%s", r.code, wantCold, r.stderr, r.stdout)
	}
	lockSrc, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl"))
	if n := strings.Count(string(lockSrc), `tag     = "1.1.0"`); n != 3 {
		t.Errorf("%d modules locked at 1.1.0, want 3:\n%s", n, lockSrc)
	}
	r = pin(t, dir, "resolve", "-v", cache)
	wantWarm := reg + ": 9 requests (manifest HEAD 3, ping http 1, ping https 1, tags list 3, token 1)"
	if r.code != 0 || !strings.Contains(r.stderr, wantWarm) {
		t.Errorf("warm run: exit %d, want %q in\n%s\n%s", r.code, wantWarm, r.stderr, r.stdout)
	}
}

// TestRegistryTokenHosts: a registry whose token server is on another host
// is refused, and pin says what to write; once the catalogue names that
// host in token_hosts, the token server is asked.
func TestRegistryTokenHosts(t *testing.T) {
	reg, user, password := testenv.AuthRegistry(t)
	path := fmt.Sprintf("tokenhosts/app-%d", time.Now().UnixNano())
	testimage.Push(t, reg+"/"+path+":1.0.0", testimage.Build(t, testimage.Options{Content: "1.0.0"}), &authn.Basic{Username: user, Password: password})
	tokens := faultproxy.NewRecorder(t)
	// By name: go-containerregistry refuses a realm at a loopback address
	// other than the registry's own.
	tokenHost := strings.Replace(tokens.Host, "127.0.0.1", "localhost", 1)
	px := faultproxy.New(t, reg)
	px.Inject(faultproxy.Any, 0, faultproxy.Headers(func(_ *http.Request, h http.Header) {
		if h.Get("WWW-Authenticate") != "" {
			h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="registry"`, tokenHost))
		}
	}))
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	dir := t.TempDir()
	module := fmt.Sprintf("module \"app\" {\n  image  = \"%s/%s\"\n  policy = \"track-upstream\"\n  pin    = \"1.0.0\"\n}\n", px.Host, path)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(module), 0o644)

	r := pin(t, dir, "resolve")
	want := fmt.Sprintf(`add token_hosts = [%q] to the catalogue's registry block`, tokenHost)
	if r.code != 3 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, want 3 and %q in\n%s", r.code, want, r.stderr)
	}
	if got := tokens.Requests(); len(got) != 0 {
		t.Fatalf("the token server was asked before the catalogue allowed it: %+v", got)
	}

	block := fmt.Sprintf("registry %q {\n  token_hosts = [%q]\n}\n", px.Host, tokenHost)
	os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(block+module), 0o644)
	r = pin(t, dir, "resolve")
	got := tokens.Requests()
	if len(got) == 0 || !strings.HasPrefix(got[0].Path, "/token?") {
		t.Fatalf("token_hosts: the token server was not asked (exit %d)\n%s", r.code, r.stderr)
	}
}
