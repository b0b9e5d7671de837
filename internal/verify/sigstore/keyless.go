package sigstore

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/pin-tool/pin/internal/verify"
)

// Annotations cosign writes, beside SignatureAnnotation, on a keyless
// signature layer of the tag scheme.
const (
	// CertificateAnnotation holds the PEM signing certificate.
	CertificateAnnotation = "dev.sigstore.cosign/certificate"
	// ChainAnnotation holds the PEM chain above it (unused: the trusted
	// root holds the chain pin trusts).
	ChainAnnotation = "dev.sigstore.cosign/chain"
	// RekorBundleAnnotation holds the transparency-log entry: its body,
	// integrated time, index, log ID and signed entry timestamp.
	RekorBundleAnnotation = "dev.sigstore.cosign/bundle"
	// TimestampAnnotation holds an RFC 3161 signed timestamp of the
	// signature.
	TimestampAnnotation = "dev.sigstore.cosign/rfc3161timestamp"
)

// keyless is a loaded keyless policy: a trusted root and an identity.
//
// Time is required, never assumed: a signature with a transparency-log
// entry must have that entry verify against one of the root's logs (its
// signed entry timestamp or its inclusion proof), and at least one
// observer time (the entry's, or an RFC 3161 timestamp from one of the
// root's authorities) at which the certificate was valid; a signature
// without one needs an RFC 3161 timestamp from one of the root's
// authorities. Neither: refused. The current time is never used.
type keyless struct {
	identity sgverify.CertificateIdentity
	withLog  *sgverify.Verifier
	withTSA  *sgverify.Verifier
}

func newKeyless(spec verify.Spec) (*keyless, error) {
	if spec.Issuer == "" || (spec.Subject == "" && spec.SubjectRegex == nil) || spec.TrustedRoot == "" {
		return nil, errors.New("keyless verification needs issuer, subject or subject_regex, and trusted_root")
	}
	if spec.Subject != "" && spec.SubjectRegex != nil {
		return nil, errors.New("verify names subject and subject_regex: keep one")
	}
	tr, err := root.NewTrustedRootFromPath(spec.TrustedRoot)
	if err != nil {
		return nil, fmt.Errorf("trusted_root %s: not a Sigstore trusted root: %w", spec.TrustedRoot, err)
	}
	if len(tr.FulcioCertificateAuthorities()) == 0 {
		return nil, fmt.Errorf("trusted_root %s names no certificate authority: keyless signatures cannot verify against it", spec.TrustedRoot)
	}
	re := ""
	if spec.SubjectRegex != nil {
		re = spec.SubjectRegex.String()
	}
	id, err := sgverify.NewShortCertificateIdentity(spec.Issuer, "", spec.Subject, re)
	if err != nil {
		return nil, fmt.Errorf("verify identity: %w", err)
	}
	withLog, err := sgverify.NewVerifier(tr, sgverify.WithTransparencyLog(1), sgverify.WithObserverTimestamps(1))
	if err != nil {
		return nil, err
	}
	withTSA, err := sgverify.NewVerifier(tr, sgverify.WithSignedTimestamps(1))
	if err != nil {
		return nil, err
	}
	return &keyless{identity: id, withLog: withLog, withTSA: withTSA}, nil
}

// verify checks entity against the root and the identity, with artifact
// the signed artifact (or its digest). It returns the signer ("<issuer>
// <subject>") or the failure.
func (k *keyless) verify(digest string, entity sgverify.SignedEntity, artifact sgverify.ArtifactPolicyOption) (string, *verify.Failure) {
	v := k.withTSA
	if entries, _ := entity.TlogEntries(); len(entries) > 0 {
		v = k.withLog
	}
	res, err := v.Verify(entity, sgverify.NewPolicy(artifact, sgverify.WithCertificateIdentity(k.identity)))
	if err == nil {
		c := res.Signature.Certificate
		return c.Issuer + " " + c.SubjectAlternativeName, nil
	}
	return "", classify(digest, entity, err)
}

// classify turns a sigstore-go verification error into a verify.Failure: an
// identity that does not match, or a certificate that does not chain to
// the root, is an untrusted signer; anything else (the signature, the
// log entry, the timestamps) a bad signature.
func classify(digest string, entity sgverify.SignedEntity, err error) *verify.Failure {
	var idErr *sgverify.ErrNoMatchingCertificateIdentity
	switch {
	case errors.As(err, &idErr):
		return &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: "signed by " + identityOf(entity) + ", not the identity the verify block names"}
	case strings.Contains(err.Error(), "leaf certificate"):
		return &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: "the certificate does not chain to the trusted root's certificate authorities: " + err.Error()}
	case strings.Contains(err.Error(), "not enough verified log entries"):
		// Entries of logs the root does not name, or whose signed entry
		// timestamp does not verify, are skipped, then counted short.
		return &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: "no transparency-log entry verifies against the logs the trusted root names"}
	}
	return &verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: err.Error()}
}

// identityOf names the signer of entity's certificate, for a message.
func identityOf(entity sgverify.SignedEntity) string {
	vc, err := entity.VerificationContent()
	if err != nil || vc.Certificate() == nil {
		return "a key"
	}
	s, err := certificate.SummarizeCertificate(vc.Certificate())
	if err != nil {
		return "an unreadable certificate"
	}
	return s.Issuer + " " + s.SubjectAlternativeName
}

// tagEntity is a keyless signature of cosign's tag scheme, read from a
// signature layer's annotations, as sigstore-go verifies it: a message
// signature over the payload, its certificate, its transparency-log
// entry and its timestamps.
type tagEntity struct {
	sgverify.BaseSignedEntity
	cert       *x509.Certificate
	sig        []byte
	digest     []byte
	entries    []*tlog.Entry
	timestamps [][]byte
}

func (e *tagEntity) VerificationContent() (sgverify.VerificationContent, error) {
	return bundle.NewCertificate(e.cert), nil
}

func (e *tagEntity) SignatureContent() (sgverify.SignatureContent, error) {
	return bundle.NewMessageSignature(e.digest, "SHA2_256", e.sig), nil
}

func (e *tagEntity) TlogEntries() ([]*tlog.Entry, error) { return e.entries, nil }

func (e *tagEntity) Timestamps() ([][]byte, error) { return e.timestamps, nil }

func (e *tagEntity) Version() (string, error) { return "v0.1", nil }

func (e *tagEntity) HasInclusionPromise() bool {
	for _, t := range e.entries {
		if t.HasInclusionPromise() {
			return true
		}
	}
	return false
}

// rekorBundle is the JSON of RekorBundleAnnotation.
type rekorBundle struct {
	SignedEntryTimestamp []byte
	Payload              struct {
		Body           []byte `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	}
}

// tagLayer reads a keyless signature layer: ann its annotations, sig the
// decoded signature, payload the signed payload.
func tagLayer(digest string, ann map[string]string, sig, payload []byte) (*tagEntity, *verify.Failure) {
	bad := func(what string) *verify.Failure {
		return &verify.Failure{Digest: digest, Reason: verify.BadSignature, Detail: what}
	}
	pemCert, ok := ann[CertificateAnnotation]
	if !ok {
		return nil, &verify.Failure{Digest: digest, Reason: verify.UntrustedSigner, Detail: "signed with a key, not a certificate: the verify block names a keyless identity"}
	}
	certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(pemCert))
	if err != nil || len(certs) == 0 {
		return nil, bad("the signing certificate is not PEM")
	}
	sum := sha256.Sum256(payload)
	e := &tagEntity{cert: certs[0], sig: sig, digest: sum[:]}
	if raw, ok := ann[RekorBundleAnnotation]; ok {
		var rb rekorBundle
		if err := json.Unmarshal([]byte(raw), &rb); err != nil {
			return nil, bad("the transparency-log bundle is not JSON: " + err.Error())
		}
		logID, err := hex.DecodeString(rb.Payload.LogID)
		if err != nil {
			return nil, bad("the transparency-log bundle's log ID is not hex")
		}
		entry, err := tlog.NewEntry(rb.Payload.Body, rb.Payload.IntegratedTime, rb.Payload.LogIndex, logID, rb.SignedEntryTimestamp, nil) //nolint:staticcheck // cosign's bundle carries exactly these fields
		if err != nil {
			return nil, bad("the transparency-log entry does not parse: " + err.Error())
		}
		e.entries = append(e.entries, entry)
	}
	if raw, ok := ann[TimestampAnnotation]; ok {
		var ts struct{ SignedRFC3161Timestamp string }
		if err := json.Unmarshal([]byte(raw), &ts); err != nil {
			return nil, bad("the RFC 3161 timestamp annotation is not JSON")
		}
		b, err := base64.StdEncoding.DecodeString(ts.SignedRFC3161Timestamp)
		if err != nil {
			return nil, bad("the RFC 3161 timestamp is not base64")
		}
		e.timestamps = append(e.timestamps, b)
	}
	return e, nil
}
