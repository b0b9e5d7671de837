// Package verify checks an image's signatures against a catalogue's
// verify policy, so that an image that fails it cannot win a decision.
//
// It verifies cosign signatures made with a key: it finds the signature
// manifest under cosign's tag scheme ("sha256-<hex>.sig", derived from
// the image's digest), reads each layer that carries the
// "dev.cosignproject.cosign/signature" annotation by its digest, checks the
// signature over the layer (the simple-signing payload) with
// github.com/sigstore/sigstore's signature package, and checks that the
// payload names the image's digest. The result names the method, the
// fingerprint of the key that verified and the signature manifest's
// digest; Recheck verifies again from a recorded signature digest, which
// needs no tag and, with a warm cache, no request.
//
// Cost: cold, one manifest GET (the .sig tag) and one blob GET per
// signature layer; warm, one manifest HEAD (the tag may have moved) and
// nothing else; Recheck warm, nothing.
//
// It does not sign, does not fetch keys, and does not yet verify keyless
// (Fulcio certificate and transparency log) signatures, OCI 1.1 referrers
// or Notation signatures: a Policy that asks for them is refused by New.
// It reaches registries only through Source.
package verify
