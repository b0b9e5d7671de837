package verify

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Source is what verification reads from a registry. The registry
// client (internal/registry's Remote, Offline and Layout) implements it.
type Source interface {
	// Manifest returns the manifest repo:ref names (a tag or a "sha256:"
	// digest) and its digest; a missing one wraps image.ErrNotFound.
	Manifest(ctx context.Context, repo, ref string) ([]byte, string, error)
	// Blob returns the blob of digest, checked against it.
	Blob(ctx context.Context, repo, digest string) ([]byte, error)
}

// ReferrerSource is a Source that also lists OCI 1.1 referrers. A Source
// that is not one is asked for the tag scheme only.
type ReferrerSource interface {
	Source
	// Referrers returns the image index listing the manifests whose
	// subject is repo@digest: the referrers API's answer, or, where the
	// registry has none, the index under the fallback tag
	// "sha256-<hex>"; an empty index (or an error wrapping
	// image.ErrNotFound) when there are none.
	Referrers(ctx context.Context, repo, digest string) ([]byte, error)
}

// Spec is a verify policy as the catalogue states it: key files, or a
// keyless identity checked against a trusted root.
type Spec struct {
	// Keys are PEM public key files (cosign.pub).
	Keys []string
	// Issuer, Subject or SubjectRegex, and TrustedRoot: a keyless identity.
	Issuer       string
	Subject      string
	SubjectRegex *regexp.Regexp
	TrustedRoot  string
}

// Methods recorded in a lock.
const (
	// MethodCosignKey: a cosign signature verified with a public key.
	MethodCosignKey = "cosign-key"
	// MethodCosignKeyless: a cosign signature made with a short-lived
	// certificate, verified against a Sigstore trusted root and an
	// identity (issuer and subject).
	MethodCosignKeyless = "cosign-keyless"
)

// Policy is a loaded Spec: keys read and parsed, or a trusted root and an
// identity.
type Policy struct {
	keys    []key
	keyless *keyless
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
func New(spec Spec) (*Policy, error) {
	if spec.Issuer != "" || spec.Subject != "" || spec.SubjectRegex != nil || spec.TrustedRoot != "" {
		if len(spec.Keys) > 0 {
			return nil, errors.New("verify names keys and a keyless identity: keep one")
		}
		kl, err := newKeyless(spec)
		if err != nil {
			return nil, err
		}
		return &Policy{keyless: kl}, nil
	}
	if len(spec.Keys) == 0 {
		return nil, errors.New("verify names no key: write keys = [\"cosign.pub\"]")
	}
	p := &Policy{}
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

// Result is how an image was verified, as a lock records it.
type Result struct {
	// Method is MethodCosignKey or MethodCosignKeyless.
	Method string
	// Signer is the fingerprint of the key that verified, or the
	// certificate's identity: its issuer, a space and its subject.
	Signer string
	// Signature is the digest of the signature manifest: the tag
	// scheme's, or the referrer's that holds a Sigstore bundle.
	Signature string
}

// Reason is why an image failed verification.
type Reason string

// Reasons, as "pin outdated" and refusals give them.
const (
	Unsigned        Reason = "unsigned"
	UntrustedSigner Reason = "untrusted signer"
	BadSignature    Reason = "bad signature"
	OtherDigest     Reason = "signature for another digest"
)

// Failure is an image that failed verification: a verdict, not a fault of
// the registry (which Verify returns as any other error).
type Failure struct {
	Digest string
	Reason Reason
	Detail string
}

func (f *Failure) Error() string {
	s := fmt.Sprintf("%s: %s", shortDigest(f.Digest), f.Reason)
	if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	return s
}

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
