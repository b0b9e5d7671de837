package registry

import (
	"fmt"
	"testing"

	"github.com/pin-tool/pin/internal/image"
)

// TestRecentIsBounded: the memory of described digests holds what was
// stored until it has recentDigests, then starts again empty; it never
// holds more.
func TestRecentIsBounded(t *testing.T) {
	var c recent
	key := func(i int) describedKey { return describedKey{"r.example/x", fmt.Sprintf("sha256:%064d", i), ""} }
	for i := range recentDigests {
		c.store(key(i), image.Image{Digest: key(i).digest})
	}
	for i := range recentDigests {
		if img, ok := c.load(key(i)); !ok || img.Digest != key(i).digest {
			t.Fatalf("digest %d forgotten while there was room", i)
		}
	}
	c.store(key(recentDigests), image.Image{Digest: key(recentDigests).digest})
	if _, ok := c.load(key(0)); ok {
		t.Error("full, and the oldest is still held")
	}
	if _, ok := c.load(key(recentDigests)); !ok {
		t.Error("the digest stored when full is not held")
	}
	for i := range 3 * recentDigests {
		c.store(key(i), image.Image{})
		if len(c.imgs) > recentDigests {
			t.Fatalf("%d images held, at most %d", len(c.imgs), recentDigests)
		}
	}
}
