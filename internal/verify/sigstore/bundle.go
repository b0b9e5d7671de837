package sigstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/verify"
)

// Sigstore bundles as cosign attaches them to an image (OCI 1.1): a
// manifest whose artifactType is the bundle's media type, whose one layer
// is the bundle (JSON), and whose subject is the image.
const (
	// BundleMediaType is the artifact and layer media type of a referrer
	// that holds a Sigstore bundle (v0.3; v0.1 and v0.2 are read too).
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// SignPredicate is the in-toto predicate type of an image signature
	// in a bundle (cosign sign with the bundle format): a DSSE envelope
	// around an in-toto statement whose subject is the image's digest.
	// A bundle with another predicate is an attestation, not a
	// signature, and does not count.
	SignPredicate = "https://sigstore.dev/cosign/sign/v1"
)

func isBundleType(t string) bool {
	return strings.HasPrefix(t, "application/vnd.dev.sigstore.bundle")
}

func isBundleManifest(m *v1.Manifest) bool {
	if isBundleType(m.ArtifactType) {
		return true
	}
	return len(m.Layers) == 1 && isBundleType(string(m.Layers[0].MediaType))
}

// statement is what pin reads of an in-toto statement before verifying
// it: its predicate type and its subjects' digests.
type statement struct {
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
}

// checkBundle verifies the referrer m (digest sigDigest) as a signature
// of digest: its bundle must hold a DSSE envelope around an in-toto
// statement of predicate SignPredicate whose subject is digest, signed by
// a configured key or by the keyless identity (checked by sigstore-go,
// which also checks the subject against digest).
func (p *Policy) checkBundle(ctx context.Context, src Source, repo, digest string, m *v1.Manifest, sigDigest string) (verify.Result, error) {
	fail := func(r verify.Reason, detail string) (verify.Result, error) {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: r, Detail: "referrer " + image.Short(sigDigest) + ": " + detail}
	}
	var layer *v1.Descriptor
	for i := range m.Layers {
		if isBundleType(string(m.Layers[i].MediaType)) {
			layer = &m.Layers[i]
			break
		}
	}
	if layer == nil {
		return fail(verify.Unsigned, "holds no Sigstore bundle")
	}
	body, err := src.Blob(ctx, repo, layer.Digest.String())
	if errors.Is(err, image.ErrNotFound) {
		return fail(verify.BadSignature, "its bundle "+image.Short(layer.Digest.String())+" is missing")
	}
	if err != nil {
		return verify.Result{}, fmt.Errorf("bundle of %s: %w", repo, err)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(body); err != nil {
		return fail(verify.BadSignature, "not a valid Sigstore bundle: "+err.Error())
	}
	env, err := b.Envelope()
	if err != nil || env == nil {
		return fail(verify.Unsigned, "a message signature, which names no image: not an image signature")
	}
	var st statement
	payloadBytes, err := env.RawEnvelope().DecodeB64Payload()
	if err != nil || json.Unmarshal(payloadBytes, &st) != nil {
		return fail(verify.BadSignature, "its envelope does not hold an in-toto statement")
	}
	if st.PredicateType != SignPredicate {
		return fail(verify.Unsigned, fmt.Sprintf("an attestation (%s), not a signature", st.PredicateType))
	}
	method, signer, f := p.verifyBundle(digest, &b, artifactDigest(digest))
	if f == nil {
		// The subjects that name this digest name the repository, if any.
		var names []string
		for _, sub := range st.Subject {
			if "sha256:"+sub.Digest["sha256"] == digest {
				names = append(names, sub.Name)
			}
		}
		if f := p.otherRepository(digest, repo, signer, names); f != nil {
			f.Detail = "referrer " + image.Short(sigDigest) + ": " + f.Detail
			return verify.Result{}, f
		}
		return verify.Result{Method: method, Signer: signer, Signature: sigDigest}, nil
	}
	// A statement about another image: say so when it otherwise verifies.
	for _, s := range st.Subject {
		other := "sha256:" + s.Digest["sha256"]
		if other == digest || s.Digest["sha256"] == "" {
			continue
		}
		if _, who, f2 := p.verifyBundle(digest, &b, artifactDigest(other)); f2 == nil {
			return fail(verify.OtherDigest, "signed by "+who+" for "+image.Short(other))
		}
	}
	f.Detail = "referrer " + image.Short(sigDigest) + ": " + f.Detail
	return verify.Result{}, f
}

func artifactDigest(digest string) sgverify.ArtifactPolicyOption {
	b, _ := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	return sgverify.WithArtifactDigest("sha256", b)
}

// verifyBundle verifies b with the policy's keyless identity or keys.
func (p *Policy) verifyBundle(digest string, b *bundle.Bundle, artifact sgverify.ArtifactPolicyOption) (method, signer string, f *verify.Failure) {
	vc, err := b.VerificationContent()
	if err != nil {
		return "", "", &verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: err.Error()}
	}
	if p.keyless != nil {
		if vc.Certificate() == nil {
			return "", "", &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: "signed with a key, not a certificate: the verify block names a keyless identity"}
		}
		signer, f := p.keyless.verify(digest, b, artifact)
		return verify.MethodCosignKeyless, signer, f
	}
	if vc.Certificate() != nil {
		return "", "", &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: "signed with a certificate (keyless): the verify block names keys"}
	}
	var last error
	for _, k := range p.keys {
		_, err := k.bundles.Verify(b, sgverify.NewPolicy(artifact, sgverify.WithKey()))
		if err == nil {
			return verify.MethodCosignKey, k.fingerprint, nil
		}
		last = err
	}
	return "", "", &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("verifies under none of the %d configured key(s): %v", len(p.keys), last)}
}
