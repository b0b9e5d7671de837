package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/image"
)

// referrersTag is the fallback tag of the OCI 1.1 referrers tag scheme:
// "sha256-<hex>".
func referrersTag(digest string) string {
	return strings.Replace(digest, ":", "-", 1)
}

// Referrers returns the image index of the manifests whose subject is
// repo@digest, for the signature verifier (OCI 1.1 referrers): the
// referrers API's answer (GET /v2/<repo>/referrers/<digest>), or, where
// the registry has no such API (it answers 404, 400 or 406), the index
// under the fallback tag "sha256-<hex>", an empty index when that is
// missing too. Cost: one GET on a registry with the API; two (the API's
// 404, then the tag) on one without; the answer is not content-addressed
// and so never served from the cache. It is kept in the cache all the
// same, under the fallback tag's hint, for Offline.Referrers.
func (r *Remote) Referrers(ctx context.Context, repo, digest string) ([]byte, error) {
	target, err := r.repository(repo)
	if err != nil {
		return nil, err
	}
	d, err := digestRef(target, digest)
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", repo, err)
	}
	what := r.where(repo + "@" + digest)
	if err := r.ready(ctx, target); err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", what, err)
	}
	idx, err := remote.Referrers(d, remote.Reuse(r.puller()), remote.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", what, classify(err))
	}
	b, err := idx.RawManifest()
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", what, err)
	}
	if r.cache != nil {
		sum := sha256.Sum256(b)
		key := "sha256:" + hex.EncodeToString(sum[:])
		r.cache.put(key, b)
		r.cache.remember(r.host.Repo(target.RepositoryStr()).Name(), referrersTag(digest), key)
	}
	return b, nil
}

// Referrers answers from the cache: the referrers index a Remote last
// saw for repo@digest; see Remote.Referrers.
func (o Offline) Referrers(ctx context.Context, repo, digest string) ([]byte, error) {
	b, _, err := o.manifest(ctx, repo, referrersTag(digest))
	if err != nil {
		return nil, fmt.Errorf("referrers of %s@%s: %w", repo, digest, image.ErrUnavailable)
	}
	return b, nil
}
