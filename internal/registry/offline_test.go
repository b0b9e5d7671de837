package registry

import (
	"context"
	"errors"
	"testing"

	"github.com/pin-tool/pin/internal/image"
)

// TestOfflineAnswersFromCacheOnly: what a Remote cached answers offline;
// everything else is unavailable, never fetched.
func TestOfflineAnswersFromCacheOnly(t *testing.T) {
	c := NewCache(t.TempDir())
	l := openIncident(t)
	ctx := context.Background()
	img, err := l.Image(ctx, forge, "1.27.3", "linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	// Seed the cache as a Remote would have: index, platform manifest,
	// config, and the tag's hint.
	for _, d := range []string{img.Digest, img.PlatformDigest(), img.ConfigDigest} {
		b, err := l.blob(ctx, forge, d)
		if err != nil {
			t.Fatal(err)
		}
		c.put(d, b)
	}
	c.remember(forge, "1.27.3", img.Digest)

	o := Offline{Cache: c}
	got, err := o.Image(ctx, forge, "1.27.3", "linux/amd64")
	if err != nil || got.Digest != img.Digest || got.ConfigDigest != img.ConfigDigest || len(got.Platforms) != 2 {
		t.Fatalf("offline by tag: %+v %v", got, err)
	}
	if _, err := o.Image(ctx, forge, img.Digest, "linux/amd64"); err != nil {
		t.Fatalf("offline by digest: %v", err)
	}
	if _, err := o.Image(ctx, forge, "1.27.3", "linux/arm64"); !errors.Is(err, image.ErrUnavailable) {
		t.Errorf("uncached platform: %v", err)
	}
	if _, err := o.Image(ctx, forge, "1.22.6", "linux/amd64"); !errors.Is(err, image.ErrUnavailable) {
		t.Errorf("uncached tag: %v", err)
	}
	if _, err := o.Tags(ctx, forge); !errors.Is(err, image.ErrUnavailable) {
		t.Errorf("tags offline: %v", err)
	}
}
