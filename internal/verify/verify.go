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
)

// Policy is a loaded Spec: keys read and parsed.
type Policy struct {
	keys []key
}

type key struct {
	path        string
	fingerprint string
	verifier    signature.Verifier
}

// New loads spec's keys. A keyless spec is refused: this build verifies
// key-based signatures only.
func New(spec Spec) (*Policy, error) {
	if spec.Issuer != "" || spec.Subject != "" || spec.SubjectRegex != nil || spec.TrustedRoot != "" {
		return nil, errors.New("keyless verification (issuer, subject, trusted_root) is not supported yet: verify with keys = [\"cosign.pub\"]")
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
	return key{path: path, fingerprint: fp, verifier: v}, nil
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
	// Method is MethodCosignKey.
	Method string
	// Signer is the fingerprint of the key that verified.
	Signer string
	// Signature is the digest of the signature manifest.
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
