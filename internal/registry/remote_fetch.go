package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/pin-tool/pin/internal/image"
)

// Image describes repo:ref, ref being a tag or a "sha256:" digest, with an
// index resolved to platform.
//
// With a cache, what the digests read last describe is remembered
// (recentDigests of them): a module's decision reads the same digest more
// than once (the newest tag, then the previous lock's entry naming it),
// and reading it again from the cache cost a read, a hash and a decoding
// each time while asking the registry nothing. Without a cache every call
// asks, as before.
func (r *Remote) Image(ctx context.Context, repo, ref, platform string) (image.Image, error) {
	if _, err := r.repository(repo); err != nil {
		return image.Image{}, err
	}
	if r.cache != nil && strings.HasPrefix(ref, "sha256:") {
		if img, ok := r.described.load(describedKey{repo, ref, platform}); ok {
			return cloneImage(img), nil
		}
	}
	img, err := describe(ctx, r, repo, ref, platform)
	if err == nil && r.cache != nil {
		byDigest := cloneImage(img)
		byDigest.Tag = ""
		r.described.store(describedKey{repo, img.Digest, platform}, byDigest)
	}
	return img, err
}

// describedKey is a repository, a manifest digest and the platform asked.
type describedKey struct{ repo, digest, platform string }

// recentDigests is how many described digests a Remote remembers. A
// module's re-reads come within its own decision, while at most a few
// dozen modules are decided at once; remembering every digest of a run
// kept a second copy of every image until the end (1,100
// modules, 2,200 images), and 512 of them kept 0.1 MB more than 128 to
// the end of a run (16 modules decided at once, two digests each). When
// it starts again, a module in the middle of its decision reads a digest
// from the on-disk cache once more: no request.
const recentDigests = 128

// recent remembers values by key, up to max of them; when full it starts
// again empty, as enforce.Memo does.
type recent[K comparable, V any] struct {
	max int
	mu  sync.Mutex
	m   map[K]V
}

func (c *recent[K, V]) load(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// store remembers v by k, and reports whether it started again empty to
// make room.
func (c *recent[K, V]) store(k K, v V) (emptied bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if emptied = len(c.m) >= c.max; c.m == nil || emptied {
		c.m = make(map[K]V, c.max)
	}
	c.m[k] = v
	return emptied
}

// cloneImage copies img's maps, so that no caller shares them.
func cloneImage(img image.Image) image.Image {
	img.Labels = maps.Clone(img.Labels)
	img.Platforms = maps.Clone(img.Platforms)
	img.Manifests = slices.Clone(img.Manifests)
	return img
}

// manifest fetches a manifest by tag or digest. By digest, a cached copy
// costs nothing. By tag, when the cache has a hint for the tag, a HEAD
// learns the tag's digest and a cached copy of that is used; otherwise (no
// hint, or the tag moved to a manifest not cached) the manifest is fetched
// by tag.
func (r *Remote) manifest(ctx context.Context, repo, ref string) ([]byte, string, error) {
	target, err := r.repository(repo)
	if err != nil {
		return nil, "", err
	}
	what := r.where(reference(repo, ref))
	if strings.HasPrefix(ref, "sha256:") {
		if b, ok := r.cache.get(ref); ok {
			return b, ref, nil
		}
		d, err := digestRef(target, ref)
		if err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
		if err := r.ready(ctx, target); err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
		desc, err := r.puller().Get(ctx, d)
		if err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, classify(err))
		}
		if err := verify(desc.Manifest, ref); err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
		r.cache.putVerified(ref, desc.Manifest)
		return desc.Manifest, ref, nil
	}

	if _, err := name.NewTag(target.Name()+":"+ref, name.StrictValidation); err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
	}
	if err := r.ready(ctx, target); err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
	}
	hintKey := r.host.Repo(target.RepositoryStr()).Name()
	if _, ok := r.cache.hint(hintKey, ref); ok {
		desc, err := r.puller().Head(ctx, target.Tag(ref))
		switch {
		case err == nil:
			digest := desc.Digest.String()
			if b, ok := r.cache.get(digest); ok {
				r.cache.remember(hintKey, ref, digest)
				return b, digest, nil
			}
		case unusableHead(err):
			// Answered, but without the digest (some proxies drop the
			// header from HEAD answers): the GET below tells.
		default:
			err = classify(err)
			if errors.Is(err, image.ErrNotFound) {
				r.cache.forget(hintKey, ref)
			}
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
	}
	desc, err := r.puller().Get(ctx, target.Tag(ref))
	if err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, classify(err))
	}
	if desc.MediaType == types.DockerManifestSchema1 || desc.MediaType == types.DockerManifestSchema1Signed {
		return nil, "", fmt.Errorf("manifest of %s: Docker schema 1 manifests are not supported", what)
	}
	digest := desc.Digest.String()
	if err := verify(desc.Manifest, digest); err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
	}
	r.cache.putVerified(digest, desc.Manifest)
	r.cache.remember(hintKey, ref, digest)
	return desc.Manifest, digest, nil
}

// blob fetches a blob (a config) by digest, or reads it from the cache.
func (r *Remote) blob(ctx context.Context, repo, digest string) ([]byte, error) {
	if b, ok := r.cache.get(digest); ok {
		return b, nil
	}
	target, err := r.repository(repo)
	if err != nil {
		return nil, err
	}
	d, err := digestRef(target, digest)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", digest, err)
	}
	if err := r.ready(ctx, target); err != nil {
		return nil, fmt.Errorf("blob %s: %w", digest, err)
	}
	layer, err := r.puller().Layer(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("blob %s from %s: %w", digest, r.source.RegistryStr(), classify(err))
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, fmt.Errorf("blob %s from %s: %w", digest, r.source.RegistryStr(), classify(err))
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("blob %s from %s: %w", digest, r.source.RegistryStr(), classify(err))
	}
	if len(b) > maxConfigSize {
		return nil, fmt.Errorf("blob %s from %s: larger than %s, not a config: %w", digest, r.source.RegistryStr(), sizeText(maxConfigSize), ErrTooLarge)
	}
	if err := verify(b, digest); err != nil {
		return nil, fmt.Errorf("blob from %s: %w", r.source.RegistryStr(), err)
	}
	r.cache.putVerified(digest, b)
	return b, nil
}
