package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMinAgeCoolsDown: with the clock injected and pin's cache kept
// between runs, a tag published an hour ago is not picked under
// min_age = "3d": the plan and pin outdated say it cools down, and until
// when; once the clock passes the wait, pin resolve takes it. The tag
// seen before min_age was written counts from then.
func TestMinAgeCoolsDown(t *testing.T) {
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
	// 1.1.0 is published an hour before t0, and min_age written.
	w.tag(repo, "1.1.0", w.build("web 1.1.0", "1.1.0", "2026-12-01T09:00:00Z"))
	w.write([]string{"registry.example.org"}, strings.Replace(module, "%s", "\n  min_age = \"3d\"", 1))
	r := pinAt(t, w.dir, t0, "resolve", "--cache-dir", cache)
	if r.code != exitOK || !strings.Contains(r.stdout, "skipped  1.1.0") || !strings.Contains(r.stdout, "cooling down until 2026-12-04T10:00:00Z: first seen by pin 2026-12-01T10:00:00Z, just now; min_age is 3d") ||
		strings.Contains(r.stdout, "so its version is unknown") {
		t.Errorf("resolve an hour after 1.1.0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := readFileT(t, filepath.Join(w.dir, "pin.lock.hcl")); !strings.Contains(l, `version = "1.0.0"`) {
		t.Errorf("the lock moved to a tag cooling down:\n%s", l)
	}
	r = pinAt(t, w.dir, t0, "resolve", "--cache-dir", cache, "--format", "json")
	validate(t, compileSchemas(t)["plan.schema.json"], "resolve --format json, cooling down", r.stdout)
	if !strings.Contains(r.stdout, `"cooling_until": "2026-12-04T10:00:00Z"`) {
		t.Errorf("resolve --format json:\n%s", r.stdout)
	}
	r = pinAt(t, w.dir, t0.Add(time.Hour), "outdated", "--cache-dir", cache)
	if !strings.Contains(r.stdout+r.stderr, "cooling down until 2026-12-04T10:00:00Z") {
		t.Errorf("outdated: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = pinAt(t, w.dir, t0.Add(72*time.Hour+time.Minute), "resolve", "--cache-dir", cache)
	if l := readFileT(t, filepath.Join(w.dir, "pin.lock.hcl")); r.code != exitOK || !strings.Contains(l, `version = "1.1.0"`) {
		t.Errorf("once old enough: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, l)
	}
}
