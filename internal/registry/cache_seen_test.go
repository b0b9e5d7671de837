package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFirstSeen: the first time a digest is seen under a tag is kept on
// disk, read back by another process's cache, and not moved by a later
// sighting; another digest under the tag, or the digest under another
// tag, is seen anew; an earlier clock moves it back; nil keeps nothing.
func TestFirstSeen(t *testing.T) {
	dir := t.TempDir()
	const repo = "registry.example.org/team/app"
	d1 := "sha256:" + strings.Repeat("a", 64)
	d2 := "sha256:" + strings.Repeat("b", 64)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	c := NewCache(dir)
	if got := c.FirstSeen(repo, "1.0", d1, t0); !got.Equal(t0) {
		t.Errorf("first sighting %v", got)
	}
	if got := c.FirstSeen(repo, "1.0", d1, t0.Add(time.Hour)); !got.Equal(t0) {
		t.Errorf("a later sighting moved it: %v", got)
	}
	again := NewCache(dir) // another run
	for _, tc := range []struct {
		tag, digest string
		now, want   time.Time
	}{
		{"1.0", d1, t0.Add(48 * time.Hour), t0},
		{"1.0", d2, t0.Add(48 * time.Hour), t0.Add(48 * time.Hour)},    // the tag moved: a new build
		{"latest", d1, t0.Add(49 * time.Hour), t0.Add(49 * time.Hour)}, // under another tag
		{"1.0", d1, t0.Add(-time.Hour), t0.Add(-time.Hour)},            // an earlier clock
		{"1.0", d1, t0, t0.Add(-time.Hour)},
	} {
		if got := again.FirstSeen(repo, tc.tag, tc.digest, tc.now); !got.Equal(tc.want) {
			t.Errorf("%s %s at %v: first seen %v, want %v", tc.tag, tc.digest[:9], tc.now, got, tc.want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "seen"))
	if err != nil || strings.Count(string(b), "\n") != 4 {
		t.Errorf("seen file (%v):\n%s", err, b)
	}
	var none *Cache
	if got := none.FirstSeen(repo, "1.0", d1, t0.Add(time.Minute)); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("a nil cache remembered %v", got)
	}
}
