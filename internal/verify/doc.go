// Package verify holds the words of signature verification that pin's
// decision speaks: a verify policy as the catalogue states it (Spec), how
// an image was verified (Result, as the lock records it), and why it was
// not (a *Failure with its Reason). It verifies nothing itself and links
// no signature library: the sigstore implementation is package
// internal/verify/sigstore, built by the composition root
// (internal/source) and handed to package resolve behind the small
// interface resolve declares (resolve.Verifier).
package verify
