package resolve

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
)

// Header is what Outdated's liveness checks ask of a registry: which
// digest a tag or a digest names now, by one HEAD request each (as
// registry.Remote.Head). A Registry that is not a Header (offline, where
// the cache cannot say what is served now) gets no liveness check.
type Header interface {
	// Head returns the manifest digest ref (a tag or a "sha256:" digest)
	// names now, or an error wrapping image.ErrNotFound when it names
	// nothing.
	Head(ctx context.Context, repo, ref string) (string, error)
}

// immutableLooking matches a tag that reads as a full semver version
// (1.27.3, v1.27.3, 1.27.3-alpine, 1.27.3+build.5): a tag people expect
// never to move. "1.27", "latest" and "stable" move by design.
var immutableLooking = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]*)?$`)

// liveness checks, with HEAD requests only, that the lock still works
// against the registry: the locked digest is still served (else
// digest-gone: the next pull fails), and each locked tag that looks
// immutable (the entry's tag and its recorded tags) still names the locked
// digest (else tag-moved: a re-publish). A tag deleted upstream is no
// finding: the lock pulls by digest. One request per digest and per tag.
func (c *checker) liveness(ctx context.Context, cand *image.Image) {
	l := c.s.Locked
	h, ok := c.reg.(Header)
	if l == nil || !ok || l.Digest == "" {
		return
	}
	regErr := func(err error) {
		c.fail(fmt.Errorf("checking the lock: %w", &observe.SourceError{Source: "registry of " + c.m.Image, Err: err}))
	}
	locked := Label(c.opts, claimedImage(l))
	// What this run already read answers for free: a candidate asked by
	// tag that named the locked digest shows the digest served and that
	// tag where it was. So a current lock costs no request more.
	served, unmoved := false, ""
	if cand != nil && cand.Digest == l.Digest {
		served, unmoved = true, cand.Tag
	}
	switch _, err := headUnless(served, func() (string, error) { return h.Head(ctx, l.Image, l.Digest) }); {
	case errors.Is(err, image.ErrNotFound):
		c.add(StatusDigestGone, fmt.Sprintf("the registry no longer serves the locked %s (%s): the next pull of the lock fails", locked, image.Short(l.Digest)))
	case errors.Is(err, image.ErrUnavailable):
		return
	case err != nil:
		regErr(err)
		return
	}
	seen := map[string]bool{}
	for _, tag := range append([]string{l.Tag}, l.Tags...) {
		if seen[tag] || !immutableLooking.MatchString(tag) || tag == unmoved {
			continue
		}
		seen[tag] = true
		now, _, err := c.tags.head(ctx, tag)
		switch {
		case errors.Is(err, image.ErrNotFound), errors.Is(err, image.ErrUnavailable):
			continue
		case err != nil:
			regErr(err)
			return
		case now != l.Digest:
			c.add(StatusTagMoved, fmt.Sprintf("the tag %s now names %s, not the locked %s: it was re-published; the lock still pulls %s by digest",
				tag, image.Short(now), image.Short(l.Digest), locked))
		}
	}
}

// headUnless asks head unless known already says the answer is yes.
func headUnless(known bool, head func() (string, error)) (string, error) {
	if known {
		return "", nil
	}
	return head()
}
