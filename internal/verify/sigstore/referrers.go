package sigstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/verify"
)

// The OCI 1.1 referrers cosign attaches to an image: its classic
// signature (cosign sign --registry-referrers-mode=oci-1-1: the tag
// scheme's manifest, with a subject and this artifactType), and Sigstore
// bundles (cosign sign --new-bundle-format: BundleMediaType).
const (
	// SignatureArtifactType is the artifactType (and config media type)
	// of a classic cosign signature attached as a referrer: its layers are
	// simple-signing payloads annotated with SignatureAnnotation, as under
	// the .sig tag.
	SignatureArtifactType = "application/vnd.dev.cosign.artifact.sig.v1+json"
	// emptyMediaType is the media type of the empty config an artifact
	// manifest names.
	emptyMediaType = "application/vnd.oci.empty.v1+json"
	// maxReferrers bounds the signature referrers read per image.
	maxReferrers = 8
)

// isSignatureManifest tells a classic cosign signature manifest attached
// as a referrer.
func isSignatureManifest(m *v1.Manifest) bool {
	return m.ArtifactType == SignatureArtifactType || m.Config.MediaType == SignatureArtifactType
}

// read reports whether a referrer of artifactType t may hold a signature
// pin reads. A registry that fills artifactType from the config's media
// type (as go-containerregistry's does, and so cosign's fallback tag)
// names a bundle by the empty config's, and one that names none is
// read to tell: such referrers are read too.
func read(t string) bool {
	return t == SignatureArtifactType || isBundleType(t) || t == emptyMediaType || t == ""
}

// referrers weighs the signatures that refer to repo@digest (classic
// signatures and Sigstore bundles), in digest order, at most
// maxReferrers of them: one that verifies wins, else the most telling
// failure. When none is a signature, the failure names the types of the
// referrers that were there and not read ("a referrer of type … is not
// read"), never "none".
func (p *Policy) referrers(ctx context.Context, reg Registry, repo, digest string) (verify.Result, error) {
	src := reg.Source
	raw, err := reg.Referrers.Referrers(ctx, repo, digest)
	if errors.Is(err, image.ErrNotFound) {
		return verify.Result{}, noReferrer(digest, nil)
	}
	if err != nil {
		return verify.Result{}, fmt.Errorf("referrers of %s@%s: %w", repo, image.Short(digest), err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return verify.Result{}, fmt.Errorf("referrers of %s@%s: not an image index: %w", repo, image.Short(digest), err)
	}
	var unread []string
	var descs []v1.Descriptor
	for _, d := range idx.Manifests {
		if read(d.ArtifactType) {
			descs = append(descs, d)
		} else {
			unread = append(unread, d.ArtifactType)
		}
	}
	slices.SortFunc(descs, func(a, b v1.Descriptor) int { return strings.Compare(a.Digest.String(), b.Digest.String()) })
	if len(descs) > maxReferrers {
		descs = descs[:maxReferrers]
	}
	var worst *verify.Failure
	for _, d := range descs {
		mraw, got, err := src.Manifest(ctx, repo, d.Digest.String())
		if errors.Is(err, image.ErrNotFound) {
			continue
		}
		if err != nil {
			return verify.Result{}, fmt.Errorf("referrer %s of %s: %w", image.Short(d.Digest.String()), repo, err)
		}
		m, err := v1.ParseManifest(bytes.NewReader(mraw))
		var r verify.Result
		switch {
		case err != nil:
			unread = append(unread, d.ArtifactType)
			continue
		case isBundleManifest(m):
			r, err = p.checkBundle(ctx, src, repo, digest, m, got)
		case isSignatureManifest(m):
			r, err = p.check(ctx, src, repo, digest, mraw, got)
		default:
			// An empty config names no type: the manifest's own says.
			unread = append(unread, cmp(m.ArtifactType, string(m.Config.MediaType)))
			continue
		}
		var f *verify.Failure
		if !errors.As(err, &f) {
			return r, err
		}
		if worst == nil || verify.Rank(f.Reason) > verify.Rank(worst.Reason) {
			worst = f
		}
	}
	if worst == nil {
		return verify.Result{}, noReferrer(digest, unread)
	}
	return verify.Result{}, worst
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// noReferrerDetail is the detail of a failure when nothing at all refers
// to the image.
const noReferrerDetail = "no referrer"

// noReferrer is the failure when no referrer holds a signature pin reads:
// unread names the types of those there were.
func noReferrer(digest string, unread []string) *verify.Failure {
	slices.Sort(unread)
	unread = slices.Compact(unread)
	for i, t := range unread {
		if t == "" {
			unread[i] = "(none given)"
		}
	}
	f := &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: noReferrerDetail}
	switch len(unread) {
	case 0:
	case 1:
		f.Detail = "a referrer of type " + unread[0] + " is not read; " + readsWhat
	default:
		f.Detail = "referrers of types " + strings.Join(unread, ", ") + " are not read; " + readsWhat
	}
	return f
}

// readsWhat says which signatures pin reads.
const readsWhat = "pin reads cosign signatures: the sha256-<hex>.sig tag, and referrers of type " +
	SignatureArtifactType + " or a Sigstore bundle (" + BundleMediaType + ")"
