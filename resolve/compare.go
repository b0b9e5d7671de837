package resolve

import (
	"context"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
)

// compare orders a against b, each multi-platform image read for the
// other's platform first: a container runs one platform's build of an
// index, and that build, not another platform's, is what it is held
// against (the arm64 build of a release can lag its amd64 one).
func (dc *decider) compare(ctx context.Context, a, b image.Image) order.Result {
	ra, rb := dc.onPlatform(ctx, a, b.Platform), dc.onPlatform(ctx, b, a.Platform)
	res := dc.claims.compare(ctx, a, b, ra, rb, dc.opts)
	if res.Cmp == order.Unknown && (dc.indexEntry(ctx, a, b) || dc.indexEntry(ctx, b, a)) {
		return order.Result{Cmp: order.Equal, Rule: order.RuleContent, Detail: "same content (the index's entry for the platform)"}
	}
	return res
}

// indexEntry reports whether idx's digest names an index whose entry for
// img's platform (the first that matches) is img's digest: one image
// pulled by its index on one host and by its platform's manifest on
// another. What a host says of an image pulled by its index (Docker's
// classic store) does not show it is one; its content does, read by
// digest, only where an order is otherwise unknown (a warm cache answers).
func (dc *decider) indexEntry(ctx context.Context, idx, img image.Image) bool {
	if dc.reg == nil || idx.Digest == "" || img.Digest == "" || idx.Digest == img.Digest || len(idx.Platforms) > 0 {
		return false
	}
	platform := img.Platform
	if platform == "" {
		platform = dc.m.Platform()
	}
	got, state, err := describe(ctx, dc.reg, dc.m, idx.Digest, platform)
	if err != nil || state != contentRead || len(got.Platforms) == 0 {
		return false
	}
	d, ok := got.ManifestFor(platform)
	return ok && d == img.Digest
}

// onPlatform is img as read for platform: an index's manifest for that
// platform, asked once per digest and platform. An image that is not an
// index, or an index without that platform, is img itself; a build the
// registry cannot give keeps only what names it (its digest and tag), so
// that it orders nothing by another platform's content.
func (dc *decider) onPlatform(ctx context.Context, img image.Image, platform string) image.Image {
	if dc.platformed == nil {
		dc.platformed = map[string]image.Image{}
	}
	return readOn(ctx, dc.reg, dc.m, img, platform, dc.platformed)
}

// readOn is onPlatform for callers without a decider; memo keeps what was
// read, by digest and platform.
func readOn(ctx context.Context, reg Registry, m *catalogue.Module, img image.Image, platform string, memo map[string]image.Image) image.Image {
	if platform == "" || len(img.Platforms) == 0 || img.Platform == platform || reg == nil || img.Digest == "" {
		return img
	}
	if _, ok := img.ManifestFor(platform); !ok {
		return img
	}
	if img.ImageID != "" && img.Platform != "" {
		// What a host runs and says the platform of is that platform's
		// build (a containerd-store host names it by the index digest):
		// never another platform's.
		return img
	}
	key := img.Digest + " " + platform
	if got, ok := memo[key]; ok {
		return got
	}
	got, err := reg.Image(ctx, m.Image, img.Digest, platform)
	if err != nil {
		got = image.Image{Repository: img.Repository, Digest: img.Digest, Platforms: img.Platforms, Manifests: img.Manifests, Platform: platform}
	}
	got.Tag, got.ImageID = img.Tag, img.ImageID
	memo[key] = got
	return got
}
