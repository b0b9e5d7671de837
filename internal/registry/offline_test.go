package registry

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/testkit/testimage"
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

// TestOfflineAfterRemote: what a Remote read online, Offline answers from
// the same cache alike, by tag (the hint the Remote left) and by digest,
// for the registry's own names even when a mirror was asked; what the
// Remote did not read is unavailable.
func TestOfflineAfterRemote(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		amd := testimage.Platform{OS: "linux", Architecture: "amd64"}
		arm := testimage.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
		idx := testimage.Index(t, map[testimage.Platform]v1.Image{
			amd: testimage.Build(t, testimage.Options{Content: "amd", Platform: amd, Created: created1}),
			arm: testimage.Build(t, testimage.Options{Content: "arm", Platform: arm, Created: created2}),
		})
		testimage.Push(t, reg.host+"/offline/app:2.0", idx)
		reg.push(t, reg.host+"/offline/app:1.0", versioned(t, "1.0", created1))
		ctx := context.Background()

		for _, tc := range []struct {
			name string
			opts RemoteOptions
			repo string // as named in the catalogue
		}{
			{"registry", RemoteOptions{Host: reg.host}, reg.host + "/offline/app"},
			{"mirror", RemoteOptions{Host: "registry.example.org", Mirror: reg.host}, "registry.example.org/offline/app"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.opts.Cache = NewCache(t.TempDir())
				r, _ := newTestRemote(t, tc.opts)
				online, err := r.Image(ctx, tc.repo, "2.0", "linux/arm64")
				if err != nil {
					t.Fatal(err)
				}
				o := Offline{Cache: tc.opts.Cache}
				got, err := o.Image(ctx, tc.repo, "2.0", "linux/arm64")
				if err != nil {
					t.Fatalf("offline by tag: %v", err)
				}
				if diff := cmp.Diff(online, got); diff != "" {
					t.Errorf("offline by tag (-online +offline):\n%s", diff)
				}
				got, err = o.Image(ctx, tc.repo, online.Digest, "linux/arm64")
				online.Tag = ""
				if diff := cmp.Diff(online, got); err != nil || diff != "" {
					t.Errorf("offline by digest: %v (-online +offline):\n%s", err, diff)
				}
				// Never read online: the other platform, the other tag, the tags.
				if _, err := o.Image(ctx, tc.repo, "2.0", "linux/amd64"); !errors.Is(err, image.ErrUnavailable) {
					t.Errorf("offline, a platform not read: %v, want ErrUnavailable", err)
				}
				if _, err := o.Image(ctx, tc.repo, "1.0", ""); !errors.Is(err, image.ErrUnavailable) {
					t.Errorf("offline, a tag not read: %v, want ErrUnavailable", err)
				}
				if _, err := o.Tags(ctx, tc.repo); !errors.Is(err, image.ErrUnavailable) {
					t.Errorf("offline tags: %v, want ErrUnavailable", err)
				}
			})
		}
	})
}
