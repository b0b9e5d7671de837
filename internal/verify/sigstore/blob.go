package sigstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/pin-tool/pin/internal/verify"
)

// VerifyBlob checks sig, a signature over body as "cosign sign-blob
// --key" writes it (base64, or the raw bytes), with the policy's keys. It
// answers as Verify does: the key's fingerprint, or a *verify.Failure
// whose Digest is body's sha256 digest. A keyless policy cannot verify a
// bare signature (it needs the certificate and a verified time): it is
// refused as an untrusted signer, with that said.
func (p *Policy) VerifyBlob(sig, body []byte) (verify.Result, error) {
	sum := sha256.Sum256(body)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if p.keyless != nil {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner,
			Detail: "a keyless identity verifies signatures with their certificate, which a bare signature file lacks: publish to an OCI reference, or verify with a key"}
	}
	trimmed := bytes.TrimSpace(sig)
	if len(trimmed) == 0 {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: "the signature is empty"}
	}
	raw, err := base64.StdEncoding.DecodeString(string(trimmed))
	if err != nil {
		raw = sig
	}
	k, ok := p.verifies(raw, body)
	if !ok {
		if !p.wellFormed(raw) {
			return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: "the signature is malformed"}
		}
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner,
			Detail: fmt.Sprintf("verifies under none of the %d configured key(s): signed by another key, or altered since", len(p.keys))}
	}
	return verify.Result{Method: verify.MethodCosignKey, Signer: k.fingerprint}, nil
}
