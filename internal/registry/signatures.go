package registry

import "context"

// Manifest returns the manifest repo:ref names (ref a tag or a "sha256:"
// digest) and its digest, for the signature verifier
// (internal/verify/sigstore): a cosign signature is a manifest under the
// tag "sha256-<hex>.sig", or a referrer. By digest a cached copy costs
// nothing (the verifier asks Head whether the registry still serves a
// recorded one); by tag it costs what manifest says (a HEAD when the tag
// was seen before and its manifest is cached, else a GET). A missing
// manifest wraps image.ErrNotFound.
func (r *Remote) Manifest(ctx context.Context, repo, ref string) ([]byte, string, error) {
	return r.manifest(ctx, repo, ref)
}

// Blob returns the blob of that digest (at most 4 MiB, checked against
// its digest), from the cache when it holds it: a signature's payload.
func (r *Remote) Blob(ctx context.Context, repo, digest string) ([]byte, error) {
	return r.blob(ctx, repo, digest)
}

// Manifest answers from the cache; see Remote.Manifest.
func (o Offline) Manifest(ctx context.Context, repo, ref string) ([]byte, string, error) {
	return o.manifest(ctx, repo, ref)
}

// Blob answers from the cache; see Remote.Blob.
func (o Offline) Blob(ctx context.Context, repo, digest string) ([]byte, error) {
	return o.blob(ctx, repo, digest)
}

// Manifest answers from the layout; see Remote.Manifest.
func (l *Layout) Manifest(ctx context.Context, repo, ref string) ([]byte, string, error) {
	return l.manifest(ctx, repo, ref)
}

// Blob answers from the layout; see Remote.Blob.
func (l *Layout) Blob(ctx context.Context, repo, digest string) ([]byte, error) {
	return l.blob(ctx, repo, digest)
}
