package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Head asks the registry, with one HEAD request and nothing else, which
// manifest digest ref (a tag, or a "sha256:" digest) names now: the
// digest, or an error wrapping image.ErrNotFound when it names nothing
// (a tag deleted, a digest purged). Nothing is cached: it asks what is
// true now ("pin outdated" checks the lock's liveness with it).
func (r *Remote) Head(ctx context.Context, repo, ref string) (string, error) {
	target, err := r.repository(repo)
	if err != nil {
		return "", err
	}
	what := r.where(reference(repo, ref))
	var nref name.Reference
	if strings.HasPrefix(ref, "sha256:") {
		nref, err = digestRef(target, ref)
	} else {
		nref, err = name.NewTag(target.Name()+":"+ref, name.StrictValidation)
	}
	if err != nil {
		return "", fmt.Errorf("HEAD %s: %w", what, err)
	}
	if err := r.ready(ctx, target); err != nil {
		return "", fmt.Errorf("HEAD %s: %w", what, err)
	}
	desc, err := r.puller().Head(ctx, nref)
	if err != nil {
		return "", fmt.Errorf("HEAD %s: %w", what, classify(err))
	}
	return desc.Digest.String(), nil
}
