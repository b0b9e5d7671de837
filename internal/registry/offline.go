package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/image"
)

// Offline is the source of an --offline run for a registry with no layout
// mirror: it answers from the disk cache only and sends nothing. Content by
// digest is what it always is; a tag resolves to the digest it named when
// last seen online (the hint a Remote keeps), which is the most an offline
// run can know. Tag lists are not cached, so Tags always fails.
// Everything it cannot answer wraps image.ErrUnavailable.
type Offline struct {
	Cache *Cache
}

// Tags fails: tag lists are never cached.
func (o Offline) Tags(_ context.Context, repo string) ([]string, error) {
	return nil, fmt.Errorf("listing tags of %s: %w (tag lists are not cached)", repo, image.ErrUnavailable)
}

// Image describes repo:ref from the cache.
func (o Offline) Image(ctx context.Context, repo, ref, platform string) (image.Image, error) {
	return describe(ctx, o, repo, ref, platform)
}

func (o Offline) manifest(_ context.Context, repo, ref string) ([]byte, string, error) {
	digest := ref
	if !strings.HasPrefix(ref, "sha256:") {
		d, ok := o.Cache.hint(repo, ref)
		if !ok {
			return nil, "", fmt.Errorf("tag %s of %s: %w", ref, repo, image.ErrUnavailable)
		}
		digest = d
	}
	b, ok := o.Cache.get(digest)
	if !ok {
		return nil, "", fmt.Errorf("manifest %s of %s: %w", digest, repo, image.ErrUnavailable)
	}
	return b, digest, nil
}

func (o Offline) blob(_ context.Context, repo, digest string) ([]byte, error) {
	b, ok := o.Cache.get(digest)
	if !ok {
		return nil, fmt.Errorf("blob %s of %s: %w", digest, repo, image.ErrUnavailable)
	}
	return b, nil
}
