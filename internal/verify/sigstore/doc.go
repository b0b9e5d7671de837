// Package sigstore is pin's signature verifier: it checks an image's
// cosign signatures against a verify policy (internal/verify's Spec) with
// sigstore's libraries, and answers in internal/verify's words (a Result,
// or a *verify.Failure). The composition root (internal/source) builds a
// Policy once per verify block and run, and binds it to a registry
// (Policy.On); package resolve asks it through the interface it declares
// (resolve.Verifier) and so links none of this.
//
// A policy is cosign public keys, or a keyless identity (an OIDC issuer,
// and a subject or a subject regular expression) checked against a
// Sigstore trusted-root file the user provides. Signatures are found by
// the image's digest, two ways, in this order:
//
//   - cosign's tag scheme: the signature manifest tagged "sha256-<hex>.sig";
//     each layer with the "dev.cosignproject.cosign/signature" annotation
//     is a simple-signing payload, read by its digest, whose signature is
//     checked (with a key: github.com/sigstore/sigstore's signature
//     package; keyless: the layer's certificate, transparency-log entry
//     and RFC 3161 timestamp annotations, by sigstore-go) and which must
//     name the image's digest;
//   - when that yields no verified signature and the Registry lists
//     referrers: OCI 1.1 referrers (the referrers API, or its fallback
//     tag "sha256-<hex>") whose manifest holds a Sigstore bundle, each a
//     DSSE envelope around an in-toto statement of predicate SignPredicate
//     whose subject is the image's digest, verified by sigstore-go
//     (github.com/sigstore/sigstore-go) with a key or keyless. Bundles of
//     other predicates are attestations, not signatures, and do not count.
//
// Keyless verification is offline and fails closed: the certificate must
// chain to the trusted root's certificate authorities at a verified time
// (a log entry verified against the root's logs, or an RFC 3161 timestamp
// from its authorities; never the current time), and match the identity.
//
// The result names the method (verify.MethodCosignKey,
// verify.MethodCosignKeyless), the signer (a key's fingerprint, or the
// certificate's "<issuer> <subject>") and the signature manifest's digest;
// Recheck verifies again from a recorded signature digest, which needs no
// tag and, with a warm cache, no request.
//
// Cost: see Policy.Verify and the registry's Referrers; warm, the tag
// scheme costs one manifest HEAD, a referrer the .sig tag's GET and one
// referrers GET (two without the API); Recheck warm, nothing.
//
// It does not sign, does not fetch keys or trusted roots (no TUF), does
// not ask a transparency log online, does not read certificate
// transparency (SCTs), and does not verify Notation signatures; the Spec
// leaves room for Notation as further fields. It reaches registries only
// through Registry.
package sigstore
