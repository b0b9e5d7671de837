// Package verifytest signs test images as cosign does, for tests of
// signature verification: generated keys, the simple-signing payload, and
// the tag-scheme signature manifest pushed with go-containerregistry;
// keyless signatures from a generated test Sigstore (sigstore-go's
// VirtualSigstore) and its trusted_root.json; Sigstore bundles attached as
// OCI 1.1 referrers.
package verifytest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// Key is a signing key; Path is its public key file (cosign.pub) and
// Fingerprint what a lock records for it.
type Key struct {
	Priv        *ecdsa.PrivateKey
	Path        string
	Fingerprint string
}

// NewKey generates a P-256 key and writes its public key to a file.
func NewKey(t testing.TB) Key {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	fp, err := sigstore.Fingerprint(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return Key{Priv: priv, Path: path, Fingerprint: fp}
}

// Payload is cosign's simple-signing payload for repo@digest.
func Payload(repo, digest string) []byte {
	return []byte(`{"critical":{"identity":{"docker-reference":"` + repo + `"},"image":{"docker-manifest-digest":"` + digest + `"},"type":"cosign container image signature"},"optional":null}`)
}

// Sign signs payload with k.
func Sign(t testing.TB, k Key, payload []byte) []byte {
	t.Helper()
	s, err := signature.LoadECDSASignerVerifier(k.Priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.SignMessage(bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// PushSignature writes the signature manifest cosign's tag scheme
// stores for digest: payload as a layer annotated with its base64 sig,
// under repo:sha256-<hex>.sig. It returns the manifest's digest.
func PushSignature(t testing.TB, repo, digest string, payload, sig []byte) string {
	t.Helper()
	return pushSig(t, repo, digest, payload, map[string]string{sigstore.SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)})
}

func pushSig(t testing.TB, repo, digest string, payload []byte, ann map[string]string) string {
	t.Helper()
	layer := static.NewLayer(payload, "application/vnd.dev.cosign.simplesigning.v1+json")
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{Layer: layer, Annotations: ann})
	if err != nil {
		t.Fatal(err)
	}
	return testimage.Push(t, repo+":"+sigstore.SignatureTag(digest), img).DigestStr()
}

// SignImage signs repo@digest with k, as cosign sign --key does.
func SignImage(t testing.TB, k Key, repo, digest string) string {
	t.Helper()
	p := Payload(repo, digest)
	return PushSignature(t, repo, digest, p, Sign(t, k, p))
}
