package verify

import (
	"fmt"
	"regexp"

	"github.com/pin-tool/pin/internal/image"
)

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
	// MatchRepository: a signature counts only when what it signed names
	// the repository the image is read from (a simple-signing payload's
	// docker-reference, a bundle statement's subject name). Off, as in
	// cosign: the digest alone is checked.
	MatchRepository bool
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

// Result is how an image was verified, as a lock records it.
type Result struct {
	// Method is MethodCosignKey or MethodCosignKeyless.
	Method string
	// Signer is the fingerprint of the key that verified, or the
	// certificate's identity: its issuer, a space and its subject.
	Signer string
	// Signature is the digest of the signature manifest: the tag
	// scheme's, or the referrer's that holds the signature.
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
	// OtherRepository: under MatchRepository, a valid signature of this
	// digest whose signed document names another repository, or none.
	OtherRepository Reason = "signature for another repository"
)

// Rank orders reasons from the least telling (Unsigned) to the most (a
// signature of another digest): of several failures, the most telling
// is the one given.
func Rank(r Reason) int {
	switch r {
	case OtherDigest:
		return 4
	case OtherRepository:
		return 3
	case UntrustedSigner:
		return 2
	case BadSignature:
		return 1
	}
	return 0
}

// Failure is an image that failed verification: a verdict, not a fault of
// the registry (which a verifier returns as any other error).
type Failure struct {
	Digest string
	Reason Reason
	Detail string
}

func (f *Failure) Error() string {
	s := fmt.Sprintf("%s: %s", image.Short(f.Digest), f.Reason)
	if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	return s
}
