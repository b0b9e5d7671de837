package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestLivenessRealRegistry: against the real registry of ./scripts/test
// (manifest DELETE enabled in its config), a lock goes stale in the two
// ways a cache hides: upstream re-publishes the locked tag 1.27.3
// (tag-moved), then purges the locked digest (digest-gone). pin outdated
// finds both with HEAD requests only, and the exit code follows --fail-on.
func TestLivenessRealRegistry(t *testing.T) {
	reg := testenv.Registry(t)
	repo := fmt.Sprintf("%s/liveness/forge-%d", reg, time.Now().UnixNano())
	day := func(d int) time.Time { return time.Date(2026, 9, d, 0, 0, 0, 0, time.UTC) }
	first := testimage.Build(t, testimage.Options{Content: "forge 1.27.3", Created: day(1), Labels: map[string]string{"org.opencontainers.image.version": "1.27.3"}})
	locked := testimage.Push(t, repo+":1.27.3", first)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), fmt.Sprintf(`module "forge" {
  image  = %q
  policy = "exact"
  pin    = "1.27.3@%s"
}
`, repo, locked.DigestStr()))
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s", r.code, r.stderr)
	}
	statuses := func(args ...string) (result, []string, []string) {
		t.Helper()
		r := pin(t, dir, append([]string{"outdated", "--format", "json", "-v", cache}, args...)...)
		var out outdatedOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Modules) != 1 {
			t.Fatalf("outdated: exit %d, %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
		}
		var msgs []string
		for _, f := range out.Modules[0].Findings {
			msgs = append(msgs, f.Message)
		}
		return r, out.Modules[0].Statuses, msgs
	}

	// Live: the digest is served, the tag names it.
	r, st, _ := statuses()
	if r.code != 0 || strings.Join(st, ",") != "current" {
		t.Fatalf("before: exit %d, statuses %v\n%s", r.code, st, r.stderr)
	}
	// Liveness asks nothing more of a current lock: the upstream
	// candidate, read by the locked tag, named the locked digest, which
	// shows the digest served and the tag unmoved. Only the tag list and
	// the candidate's manifest are asked.
	wantLive := reg + ": 4 requests (manifest GET 1, ping http 1, ping https 1, tags list 1)"
	if !strings.Contains(r.stderr, wantLive) {
		t.Errorf("requests: want %q in\n%s", wantLive, r.stderr)
	}

	// Upstream re-publishes 1.27.3: another image under the same tag.
	second := testimage.Build(t, testimage.Options{Content: "forge 1.27.3, rebuilt", Created: day(2), Labels: map[string]string{"org.opencontainers.image.version": "1.27.3"}})
	moved := testimage.Push(t, repo+":1.27.3", second)
	r, st, msgs := statuses()
	if !contains(st, "tag-moved") || contains(st, "digest-gone") {
		t.Fatalf("after the re-publish: statuses %v\n%s", st, r.stderr)
	}
	wantMsg := fmt.Sprintf("the tag 1.27.3 now names %s, not the locked %s", short(moved), short(locked))
	if !strings.Contains(strings.Join(msgs, "\n"), wantMsg) {
		t.Errorf("findings %q lack %q", msgs, wantMsg)
	}
	if r := pin(t, dir, "outdated", cache, "--fail-on", "tag-moved"); r.code != 1 {
		t.Errorf("--fail-on tag-moved: exit %d, want 1", r.code)
	}

	// Upstream purges the locked digest: the cache still has its content,
	// so only the HEAD knows.
	ref := locked
	if err := remote.Delete(ref); err != nil {
		t.Fatalf("deleting %s (is storage.delete enabled in the registry's config?): %v", ref, err)
	}
	r, st, msgs = statuses()
	if !contains(st, "digest-gone") {
		t.Fatalf("after the purge: statuses %v\n%s", st, r.stderr)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "the registry no longer serves the locked 1.27.3 ("+short(locked)+"): the next pull of the lock fails") {
		t.Errorf("findings %q", msgs)
	}
	if r.code != 1 {
		t.Errorf("digest-gone is in --fail-on's default: exit %d, want 1", r.code)
	}
	if r := pin(t, dir, "outdated", cache, "--fail-on", "tag-moved"); r.code != 1 {
		t.Errorf("--fail-on tag-moved: exit %d, want 1", r.code)
	}
	if lock, _ := os.ReadFile(filepath.Join(dir, "pin.lock.hcl")); !strings.Contains(string(lock), locked.DigestStr()) {
		t.Error("outdated changed the lock")
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// short is image.Short of a pushed digest: "sha256:" and 12 hex digits.
func short(d interface{ DigestStr() string }) string { return d.DigestStr()[:19] }
