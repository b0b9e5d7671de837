package registry

import (
	"fmt"
	"testing"

	"github.com/pin-tool/pin/internal/image"
)

// TestRecentForgetsTheOldest: the memory of described digests holds the
// last recentDigests, forgets the oldest first, and storing a key it holds
// again replaces it without forgetting another.
func TestRecentForgetsTheOldest(t *testing.T) {
	var c recent
	key := func(i int) describedKey { return describedKey{"r.example/x", fmt.Sprintf("sha256:%064d", i), ""} }
	for i := range recentDigests {
		c.store(key(i), image.Image{Digest: key(i).digest})
	}
	c.store(key(0), image.Image{Digest: "again"}) // held: replaced, nothing forgotten
	for i := range recentDigests {
		if _, ok := c.load(key(i)); !ok {
			t.Fatalf("digest %d forgotten while there was room", i)
		}
	}
	if img, _ := c.load(key(0)); img.Digest != "again" {
		t.Errorf("a key stored again holds %q", img.Digest)
	}
	for i := recentDigests; i < recentDigests+10; i++ {
		c.store(key(i), image.Image{Digest: key(i).digest})
	}
	for i := range recentDigests + 10 {
		_, ok := c.load(key(i))
		if want := i >= 10; ok != want {
			t.Errorf("digest %d remembered: %v, want %v", i, ok, want)
		}
	}
	if len(c.imgs) != recentDigests {
		t.Errorf("%d images held, want %d", len(c.imgs), recentDigests)
	}
}
