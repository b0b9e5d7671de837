package sigstore

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/pin-tool/pin/internal/verify"
)

// Source is what verification reads from a registry: manifests and
// blobs. The registry client (internal/registry's Remote, Offline and
// Layout) implements it.
type Source interface {
	// Manifest returns the manifest repo:ref names (a tag or a "sha256:"
	// digest) and its digest; a missing one wraps image.ErrNotFound.
	Manifest(ctx context.Context, repo, ref string) ([]byte, string, error)
	// Blob returns the blob of digest, checked against it.
	Blob(ctx context.Context, repo, digest string) ([]byte, error)
}

// Referrers lists OCI 1.1 referrers: internal/registry's Remote (the
// referrers API, or its fallback tag) and Offline (what Remote saw last).
type Referrers interface {
	// Referrers returns the image index listing the manifests whose
	// subject is repo@digest: the referrers API's answer, or, where the
	// registry has none, the index under the fallback tag
	// "sha256-<hex>"; an empty index (or an error wrapping
	// image.ErrNotFound) when there are none.
	Referrers(ctx context.Context, repo, digest string) ([]byte, error)
}

// Heads asks a registry what it serves now, with one HEAD request and
// nothing cached: internal/registry's Remote.
type Heads interface {
	// Head returns the manifest digest ref names now, or an error
	// wrapping image.ErrNotFound when it names nothing.
	Head(ctx context.Context, repo, ref string) (string, error)
}

// Registry is where signatures are read: a Source; its Referrers when it
// lists them (nil: the tag scheme alone is read, as from an OCI layout
// mirror); and its Heads when it can be asked what it serves now (nil
// for the cache and a layout, which hold what they hold): a recorded
// signature, whose content the cache keeps, is asked for by a HEAD, for
// a signature deleted from the registry is lost.
type Registry struct {
	Source    Source
	Referrers Referrers
	Heads     Heads
}

// Policy is a loaded verify.Spec: keys read and parsed, or a trusted root
// and an identity. It is built once per policy and run, and is safe for
// concurrent use.
type Policy struct {
	keys    []key
	keyless *keyless
	// repository: signatures must name the repository they are read for.
	repository bool
}

type key struct {
	path        string
	fingerprint string
	verifier    signature.Verifier
	// bundles verifies Sigstore bundles signed with this key.
	bundles *sgverify.Verifier
}

// New loads spec's keys, or its trusted root and identity. A spec that
// names both, or neither, is refused.
func New(spec verify.Spec) (*Policy, error) {
	if spec.Issuer != "" || spec.Subject != "" || spec.SubjectRegex != nil || spec.TrustedRoot != "" {
		if len(spec.Keys) > 0 {
			return nil, errors.New("verify names keys and a keyless identity: keep one")
		}
		kl, err := newKeyless(spec)
		if err != nil {
			return nil, err
		}
		return &Policy{keyless: kl, repository: spec.MatchRepository}, nil
	}
	if len(spec.Keys) == 0 {
		return nil, errors.New("verify names no key: write keys = [\"cosign.pub\"]")
	}
	p := &Policy{repository: spec.MatchRepository}
	for _, path := range spec.Keys {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("verify key: %w", err)
		}
		k, err := parseKey(path, b)
		if err != nil {
			return nil, err
		}
		p.keys = append(p.keys, k)
	}
	return p, nil
}

func parseKey(path string, pemBytes []byte) (key, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return key{}, fmt.Errorf("verify key %s: not a PEM public key: %w", path, err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return key{}, fmt.Errorf("verify key %s: %w", path, err)
	}
	fp, err := Fingerprint(pub)
	if err != nil {
		return key{}, fmt.Errorf("verify key %s: %w", path, err)
	}
	// A bundle names its key by a hint only: the key is the one asked
	// about whatever the hint, and it has no validity period.
	material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(v, time.Time{}, time.Time{}), nil
	})
	bv, err := sgverify.NewVerifier(material, sgverify.WithNoObserverTimestamps())
	if err != nil {
		return key{}, fmt.Errorf("verify key %s: %w", path, err)
	}
	return key{path: path, fingerprint: fp, verifier: v, bundles: bv}, nil
}

// Fingerprint is how a lock names a key: "sha256:" and the hex SHA-256 of
// its DER SubjectPublicKeyInfo.
func Fingerprint(pub crypto.PublicKey) (string, error) {
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// On binds p to the registry reg: what package resolve asks of a verifier
// (resolve.Verifier).
func (p *Policy) On(reg Registry) *Verifier { return &Verifier{p: p, reg: reg} }

// Verifier is a Policy bound to one registry.
type Verifier struct {
	p   *Policy
	reg Registry
}

// Verify is Policy.Verify on the bound registry.
func (v *Verifier) Verify(ctx context.Context, repo, digest string) (verify.Result, error) {
	return v.p.Verify(ctx, v.reg, repo, digest)
}

// Recheck is Policy.Recheck on the bound registry.
func (v *Verifier) Recheck(ctx context.Context, repo, digest, sigDigest string) (verify.Result, error) {
	return v.p.Recheck(ctx, v.reg, repo, digest, sigDigest)
}
