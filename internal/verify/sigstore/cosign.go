package sigstore

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/verify"
)

// SignatureAnnotation is the layer annotation cosign writes the base64
// signature of the layer (the simple-signing payload) in.
const SignatureAnnotation = "dev.cosignproject.cosign/signature"

// SignatureTag is the tag cosign's tag scheme stores the signatures of
// digest under: "sha256-<hex>.sig".
func SignatureTag(digest string) string {
	return strings.Replace(digest, ":", "-", 1) + ".sig"
}

// Verify checks the signatures of repo@digest: first under cosign's tag
// scheme, then, when that finds none that verifies and reg lists
// referrers, the signatures that refer to digest (OCI 1.1: classic cosign
// signatures and Sigstore bundles). A
// verdict against the image is a *verify.Failure (the most telling one of
// both); any other error is the registry's (the image may be signed, it
// could not be told).
//
// Cost: the .sig tag (cold a manifest GET and a blob GET per signature
// layer; warm a HEAD); when that yields no verified signature, the
// referrers (one GET, two without the API) and, per signature referrer,
// a manifest and a blob GET by digest (cached: warm, nothing).
func (p *Policy) Verify(ctx context.Context, reg Registry, repo, digest string) (verify.Result, error) {
	src := reg.Source
	if !strings.HasPrefix(digest, "sha256:") {
		return verify.Result{}, fmt.Errorf("verifying %s: no digest to verify", repo)
	}
	var tagFail *verify.Failure
	raw, sigDigest, err := src.Manifest(ctx, repo, SignatureTag(digest))
	switch {
	case errors.Is(err, image.ErrNotFound):
		tagFail = &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: "no signature under " + SignatureTag(digest)}
	case err != nil:
		return verify.Result{}, fmt.Errorf("signatures of %s@%s: %w", repo, image.Short(digest), err)
	default:
		r, err := p.check(ctx, src, repo, digest, raw, sigDigest)
		if !errors.As(err, &tagFail) {
			return r, err
		}
	}
	if reg.Referrers == nil {
		return verify.Result{}, tagFail
	}
	r, err := p.referrers(ctx, reg, repo, digest)
	var refFail *verify.Failure
	if !errors.As(err, &refFail) {
		return r, err
	}
	if verify.Rank(refFail.Reason) > verify.Rank(tagFail.Reason) {
		return verify.Result{}, refFail
	}
	if tagFail.Reason == verify.Unsigned && refFail.Reason == verify.Unsigned {
		if refFail.Detail == noReferrerDetail {
			return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: tagFail.Detail + ", none as a referrer"}
		}
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: tagFail.Detail + "; " + refFail.Detail}
	}
	return verify.Result{}, tagFail
}

// Recheck verifies repo@digest again from the signature manifest a lock
// recorded (sigDigest): by digest, so a tag re-pushed since changes
// nothing and a warm cache holds its content; when reg has Heads, one
// HEAD asks whether the registry still serves it (a signature deleted
// there is gone, whatever the cache holds). The manifest is the
// tag scheme's, a classic signature referrer, or a referrer holding a
// Sigstore bundle.
func (p *Policy) Recheck(ctx context.Context, reg Registry, repo, digest, sigDigest string) (verify.Result, error) {
	if sigDigest == "" {
		return p.Verify(ctx, reg, repo, digest)
	}
	src := reg.Source
	gone := func() (verify.Result, error) {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: "the recorded signature " + image.Short(sigDigest) + " is gone from the registry"}
	}
	if reg.Heads != nil {
		// Its content never changes, and the cache may hold it; whether
		// the registry still serves it is asked.
		_, err := reg.Heads.Head(ctx, repo, sigDigest)
		if errors.Is(err, image.ErrNotFound) {
			return gone()
		}
		if err != nil {
			return verify.Result{}, fmt.Errorf("signature %s of %s: %w", image.Short(sigDigest), repo, err)
		}
	}
	raw, got, err := src.Manifest(ctx, repo, sigDigest)
	if errors.Is(err, image.ErrNotFound) {
		return gone()
	}
	if err != nil {
		return verify.Result{}, fmt.Errorf("signature %s of %s: %w", image.Short(sigDigest), repo, err)
	}
	if m, err := v1.ParseManifest(bytes.NewReader(raw)); err == nil && isBundleManifest(m) {
		return p.checkBundle(ctx, src, repo, digest, m, got)
	}
	return p.check(ctx, src, repo, digest, raw, got)
}

// check weighs every signature layer of a signature manifest: one that a
// configured key (or the keyless identity, against the trusted root)
// verifies and that names digest (and, under MatchRepository, repo)
// wins; else the most telling failure (another digest, another
// repository, then an untrusted signer, then a malformed signature).
func (p *Policy) check(ctx context.Context, src Source, repo, digest string, raw []byte, sigDigest string) (verify.Result, error) {
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: "signature manifest " + image.Short(sigDigest) + " is not an image manifest"}
	}
	var worst *verify.Failure
	note := func(f *verify.Failure) {
		if worst == nil || verify.Rank(f.Reason) > verify.Rank(worst.Reason) {
			worst = f
		}
	}
	for _, l := range m.Layers {
		b64, ok := l.Annotations[SignatureAnnotation]
		if !ok {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(sig) == 0 {
			note(&verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: "signature annotation is not base64"})
			continue
		}
		body, err := src.Blob(ctx, repo, l.Digest.String())
		if errors.Is(err, image.ErrNotFound) {
			note(&verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: "signed payload " + image.Short(l.Digest.String()) + " is missing"})
			continue
		}
		if err != nil {
			return verify.Result{}, fmt.Errorf("signed payload of %s: %w", repo, err)
		}
		method, signer, who := verify.MethodCosignKey, "", ""
		if p.keyless != nil {
			e, f := tagLayer(digest, l.Annotations, sig, body)
			if f == nil {
				method = verify.MethodCosignKeyless
				signer, f = p.keyless.verify(digest, e, sgverify.WithArtifact(bytes.NewReader(body)))
				who = signer
			}
			if f != nil {
				note(f)
				continue
			}
		} else {
			k, ok := p.verifies(sig, body)
			if !ok {
				if !p.wellFormed(sig) {
					note(&verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: "the signature is malformed"})
				} else {
					note(&verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("verifies under none of the %d configured key(s): signed by another key, or altered since", len(p.keys))})
				}
				continue
			}
			signer, who = k.fingerprint, k.path
		}
		var sci payload.SimpleContainerImage
		if err := json.Unmarshal(body, &sci); err != nil || sci.Critical.Type != payload.CosignSignatureType {
			note(&verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: "the signed payload is not a cosign simple-signing document"})
			continue
		}
		if got := sci.Critical.Image.DockerManifestDigest; got != digest {
			note(&verify.Failure{Digest: digest, Reason: verify.OtherDigest, Detail: "signed by " + who + " for " + image.Short(got)})
			continue
		}
		if f := p.otherRepository(digest, repo, who, []string{sci.Critical.Identity.DockerReference}); f != nil {
			note(f)
			continue
		}
		return verify.Result{Method: method, Signer: signer, Signature: sigDigest}, nil
	}
	if worst == nil {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: "signature manifest " + image.Short(sigDigest) + " holds no cosign signature"}
	}
	return verify.Result{}, worst
}

// verifies returns the first key whose signature over body sig is.
func (p *Policy) verifies(sig, body []byte) (key, bool) {
	for _, k := range p.keys {
		if k.verifier.VerifySignature(bytes.NewReader(sig), bytes.NewReader(body)) == nil {
			return k, true
		}
	}
	return key{}, false
}

// wellFormed tells a signature that could be some key's (it parses as
// the configured keys' signatures do) from bytes that cannot be one: only
// ECDSA signatures have a structure to check (DER, two positive integers).
func (p *Policy) wellFormed(sig []byte) bool {
	for _, k := range p.keys {
		pub, err := k.verifier.PublicKey()
		if err != nil {
			continue
		}
		if _, ok := pub.(*ecdsa.PublicKey); !ok {
			return true
		}
		var rs struct{ R, S *big.Int }
		rest, err := asn1.Unmarshal(sig, &rs)
		if err == nil && len(rest) == 0 && rs.R.Sign() > 0 && rs.S.Sign() > 0 {
			return true
		}
	}
	return false
}
