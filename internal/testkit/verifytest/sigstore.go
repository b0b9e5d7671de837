package verifytest

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// Sigstore is a test Sigstore deployment (sigstore-go's VirtualSigstore:
// a Fulcio-like certificate authority, a Rekor-like log and a timestamp
// authority, all generated), and RootPath its trusted_root.json.
type Sigstore struct {
	VS       *ca.VirtualSigstore
	RootPath string
}

// NewSigstore generates a test Sigstore and writes its trusted root.
func NewSigstore(t testing.TB) Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// VirtualSigstore names its logs by the hex of their key IDs as bytes;
	// a trusted root names them by the raw key IDs.
	logs := func(in map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
		for id, l := range in {
			raw, err := hex.DecodeString(id)
			if err != nil {
				t.Fatal(err)
			}
			l.ID = raw
		}
		return in
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), logs(vs.CTLogs()), vs.TimestampingAuthorities(), logs(vs.RekorLogs()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return Sigstore{VS: vs, RootPath: path}
}

// set is the signed entry timestamp the test log gives entry.
func (s Sigstore) set(t testing.TB, entry *tlog.Entry) ([]byte, *protorekor.TransparencyLogEntry) {
	t.Helper()
	tle := entry.TransparencyLogEntry()
	sig, err := s.VS.RekorSignPayload(tlog.RekorPayload{Body: entry.Body(), IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
	if err != nil {
		t.Fatal(err)
	}
	return sig, tle
}

// KeylessAnnotations signs payload as subject (an e-mail SAN) of issuer
// with a certificate of s, as cosign sign does without a key, and returns
// the signature and the annotations of the tag scheme's layer: the
// signature, the certificate, the log entry (with its signed entry
// timestamp) and an RFC 3161 timestamp.
func (s Sigstore) KeylessAnnotations(t testing.TB, subject, issuer string, payload []byte) ([]byte, map[string]string) {
	t.Helper()
	e, err := s.VS.Sign(subject, issuer, payload)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	sig := sc.MessageSignatureContent().Signature()
	certPEM, err := cryptoutils.MarshalCertificateToPEM(vc.Certificate())
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := e.TlogEntries()
	set, tle := s.set(t, entries[0])
	var rb struct {
		SignedEntryTimestamp []byte
		Payload              struct {
			Body           []byte `json:"body"`
			IntegratedTime int64  `json:"integratedTime"`
			LogIndex       int64  `json:"logIndex"`
			LogID          string `json:"logID"`
		}
	}
	rb.SignedEntryTimestamp = set
	rb.Payload.Body, rb.Payload.IntegratedTime, rb.Payload.LogIndex, rb.Payload.LogID = tle.CanonicalizedBody, tle.IntegratedTime, tle.LogIndex, hex.EncodeToString(tle.LogId.KeyId)
	rbJSON, _ := json.Marshal(rb)
	tss, _ := e.Timestamps()
	tsJSON, _ := json.Marshal(map[string]string{"SignedRFC3161Timestamp": base64.StdEncoding.EncodeToString(tss[0])})
	return sig, map[string]string{
		sigstore.SignatureAnnotation:   base64.StdEncoding.EncodeToString(sig),
		sigstore.CertificateAnnotation: string(certPEM),
		sigstore.RekorBundleAnnotation: string(rbJSON),
		sigstore.TimestampAnnotation:   string(tsJSON),
	}
}

// SignKeyless signs repo@digest as subject of issuer with a certificate of
// s, under cosign's tag scheme, and returns the signature manifest's
// digest.
func (s Sigstore) SignKeyless(t testing.TB, subject, issuer, repo, digest string) string {
	t.Helper()
	p := Payload(repo, digest)
	_, ann := s.KeylessAnnotations(t, subject, issuer, p)
	return PushAnnotated(t, repo, digest, p, ann)
}

// Statement is the in-toto statement cosign signs, in the bundle format,
// for an image: subject the image's digest, predicate SignPredicate.
func Statement(repo, digest string) []byte {
	return []byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"` + repo + `","digest":{"sha256":"` + strings.TrimPrefix(digest, "sha256:") + `"}}],"predicateType":"` + sigstore.SignPredicate + `","predicate":{}}`)
}

// KeylessBundle signs statement as subject of issuer with a certificate of
// s and returns the Sigstore bundle (v0.3, JSON): a DSSE envelope, the
// certificate, the log entry with its inclusion proof and signed entry
// timestamp, and an RFC 3161 timestamp.
func (s Sigstore) KeylessBundle(t testing.TB, subject, issuer string, statement []byte) []byte {
	t.Helper()
	e, err := s.VS.AttestAtTime(subject, issuer, statement, time.Now().Add(5*time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	entries, _ := e.TlogEntries()
	set, tle := s.set(t, entries[0])
	tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
	tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
	tss, _ := e.Timestamps()
	env := sc.EnvelopeContent().RawEnvelope()
	return marshalBundle(t, &protobundle.VerificationMaterial{
		Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
		TlogEntries:               []*protorekor.TransparencyLogEntry{tle},
		TimestampVerificationData: &protobundle.TimestampVerificationData{Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: tss[0]}}},
	}, env)
}

// KeyBundle signs statement with k and returns the Sigstore bundle: a
// DSSE envelope and the key's hint, no log entry.
func KeyBundle(t testing.TB, k Key, statement []byte) []byte {
	t.Helper()
	s, err := signature.LoadECDSASignerVerifier(k.Priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	const payloadType = "application/vnd.in-toto+json"
	sig, err := s.SignMessage(bytes.NewReader(dsse.PAE(payloadType, statement)))
	if err != nil {
		t.Fatal(err)
	}
	env := &dsse.Envelope{PayloadType: payloadType, Payload: base64.StdEncoding.EncodeToString(statement),
		Signatures: []dsse.Signature{{Sig: base64.StdEncoding.EncodeToString(sig)}}}
	return marshalBundle(t, &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: k.Fingerprint}},
	}, env)
}

func marshalBundle(t testing.TB, vm *protobundle.VerificationMaterial, env *dsse.Envelope) []byte {
	t.Helper()
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	pe := &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType}
	for _, s := range env.Signatures {
		b, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			t.Fatal(err)
		}
		pe.Signatures = append(pe.Signatures, &protodsse.Signature{Sig: b, Keyid: s.KeyID})
	}
	b, err := protojson.Marshal(&protobundle.Bundle{MediaType: sigstore.BundleMediaType, VerificationMaterial: vm,
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: pe}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// PushBundle attaches bundle to repo@digest as cosign does (OCI 1.1): a
// manifest of artifactType sigstore.BundleMediaType, the empty config, the
// bundle as its one layer, and the image as its subject; go-containerregistry
// also updates the fallback tag "sha256-<hex>" index. It returns the
// referrer's digest.
func PushBundle(t testing.TB, repo, digest string, bundle []byte) string {
	t.Helper()
	empty := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	layer := static.NewLayer(bundle, sigstore.BundleMediaType)
	return PushReferrer(t, repo, digest, sigstore.BundleMediaType, empty, layer, nil,
		map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": sigstore.SignPredicate})
}

// PushClassicReferrer attaches a classic cosign signature of payload to
// repo@digest as "cosign sign --registry-referrers-mode=oci-1-1" does: the
// tag scheme's signature manifest, with artifactType and config media type
// sigstore.SignatureArtifactType and the image as its subject. It returns
// the referrer's digest.
func PushClassicReferrer(t testing.TB, repo, digest string, payload, sig []byte) string {
	t.Helper()
	config := static.NewLayer([]byte("{}"), sigstore.SignatureArtifactType)
	layer := static.NewLayer(payload, "application/vnd.dev.cosign.simplesigning.v1+json")
	return PushReferrer(t, repo, digest, sigstore.SignatureArtifactType, config, layer,
		map[string]string{sigstore.SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)}, nil)
}

// PushReferrer attaches to repo@digest a manifest of artifactType, with
// config and one layer (annotated layerAnn), annotations ann, and the
// image as its subject. It returns the referrer's digest.
func PushReferrer(t testing.TB, repo, digest, artifactType string, config, layer v1.Layer, layerAnn, ann map[string]string) string {
	t.Helper()
	r, err := name.NewRepository(repo, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []v1.Layer{config, layer} {
		if err := remote.WriteLayer(r, l); err != nil {
			t.Fatal(err)
		}
	}
	desc := func(l v1.Layer, ann map[string]string) map[string]any {
		d, _ := l.Digest()
		sz, _ := l.Size()
		mt, _ := l.MediaType()
		out := map[string]any{"mediaType": mt, "digest": d.String(), "size": sz}
		if len(ann) > 0 {
			out["annotations"] = ann
		}
		return out
	}
	subject, err := remote.Head(r.Digest(digest))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]any{
		"schemaVersion": 2,
		"mediaType":     types.OCIManifestSchema1,
		"artifactType":  artifactType,
		"config":        desc(config, nil),
		"layers":        []any{desc(layer, layerAnn)},
		"subject":       map[string]any{"mediaType": subject.MediaType, "digest": subject.Digest.String(), "size": subject.Size},
	}
	if len(ann) > 0 {
		fields["annotations"] = ann
	}
	m, _ := json.Marshal(fields)
	h, _, _ := v1.SHA256(bytes.NewReader(m))
	if err := remote.Put(r.Digest(h.String()), rawManifest{m, types.OCIManifestSchema1}); err != nil {
		t.Fatal(err)
	}
	return h.String()
}

type rawManifest struct {
	b  []byte
	mt types.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.b, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.mt, nil }

// PushAnnotated writes the tag scheme's signature manifest for digest:
// payload as a layer with annotations ann, under repo:sha256-<hex>.sig.
func PushAnnotated(t testing.TB, repo, digest string, payload []byte, ann map[string]string) string {
	t.Helper()
	return pushSig(t, repo, digest, payload, ann)
}

// Cert returns the leaf certificate of a KeylessAnnotations result.
func Cert(t testing.TB, ann map[string]string) *x509.Certificate {
	t.Helper()
	c, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(ann[sigstore.CertificateAnnotation]))
	if err != nil || len(c) == 0 {
		t.Fatal(err)
	}
	return c[0]
}
