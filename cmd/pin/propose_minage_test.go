package main

import (
	"encoding/json"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
)

// TestProposeMinAge: a track-upstream module with min_age = "3d" and a
// new upstream tag published an hour before the injected clock: pin
// propose proposes nothing for it; with pin's cache kept (first seen is
// kept there) and the clock past the wait, it proposes the tag.
func TestProposeMinAge(t *testing.T) {
	gitUser(t)
	w := newWorld(t)
	const repo = "registry.example.org/team/web"
	w.tag(repo, "1.0.0", w.build("web 1.0.0", "1.0.0", "2026-11-01T00:00:00Z"))
	module := `module "web" {
  image   = "registry.example.org/team/web"
  policy  = "track-upstream"%s
}
`
	w.write([]string{"registry.example.org"}, strings.Replace(module, "%s", "", 1))
	cache := filepath.Join(t.TempDir(), "cache")
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if r := pinAt(t, w.dir, t0.AddDate(0, 0, -10), "resolve", "--cache-dir", cache); r.code != exitOK {
		t.Fatalf("first resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	remote := localRemote(t)
	gitIn(t, w.dir, "init", "--quiet")
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", "web, locked at 1.0.0")
	gitIn(t, w.dir, "remote", "add", "origin", remote)
	gitIn(t, w.dir, "push", "--quiet", "origin", "HEAD:refs/heads/main")

	// 1.1.0 is published an hour before t0, and min_age written.
	b110 := w.build("web 1.1.0", "1.1.0", "2026-12-01T09:00:00Z")
	w.tag(repo, "1.1.0", b110)
	w.write([]string{"registry.example.org"}, strings.Replace(module, "%s", "\n  min_age = \"3d\"", 1))
	gitIn(t, w.dir, "add", "-A")
	gitIn(t, w.dir, "commit", "--quiet", "-m", "upstream publishes 1.1.0; web cools down for 3d")
	gitIn(t, w.dir, "push", "--quiet", "origin", "HEAD:refs/heads/main")

	proposed := func() string {
		out, err := exec.Command("git", "-C", remote, "show", "refs/heads/pin/update:pin.lock.hcl").CombinedOutput()
		if err != nil {
			return ""
		}
		return string(out)
	}
	r := pinAt(t, w.dir, t0, "propose", "--cache-dir", cache)
	if r.code != exitOK || !strings.Contains(r.stdout, "No change") || !strings.Contains(r.stdout, "Cooling down, not proposed yet:\n  web: 1.1.0@"+image.Short(b110.digest)+" cools down until 2026-12-04T10:00:00Z (min_age 3d)\n") || strings.Contains(r.stdout, "→ 1.1.0") {
		t.Errorf("propose an hour after 1.1.0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := proposed(); l != "" {
		t.Errorf("a tag cooling down was proposed:\n%s", l)
	}
	r = pinAt(t, w.dir, t0, "propose", "--cache-dir", cache, "--dry-run", "--format", "json")
	validate(t, proposeSchema(t), "propose --format json, cooling down", r.stdout)
	var out struct{ Cooling []map[string]string }
	want := map[string]string{"module": "web", "tag": "1.1.0", "digest": b110.digest, "until": "2026-12-04T10:00:00Z", "min_age": "3d"}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != exitOK || len(out.Cooling) != 1 || !maps.Equal(out.Cooling[0], want) {
		t.Errorf("propose --format json: exit %d, cooling %v, want [%v] (%v)\n%s", r.code, out.Cooling, want, err, r.stderr)
	}
	r = pinAt(t, w.dir, t0.Add(72*time.Hour+time.Minute), "propose", "--cache-dir", cache)
	if r.code != exitOK || !strings.Contains(r.stdout, "1.0.0 → 1.1.0") {
		t.Errorf("propose once old enough: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := proposed(); !strings.Contains(l, `version = "1.1.0"`) {
		t.Errorf("once old enough, the proposal's lock:\n%s", l)
	}
}
