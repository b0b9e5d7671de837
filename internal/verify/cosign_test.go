package verify_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testenv"
	"github.com/pin-tool/pin/internal/testimage"
	"github.com/pin-tool/pin/internal/verify"
)

// keyPair is a signing key and its public key file.
type keyPair struct {
	priv *ecdsa.PrivateKey
	path string
	fp   string
}

func newKey(t *testing.T) keyPair {
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
	fp, err := verify.Fingerprint(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{priv: priv, path: path, fp: fp}
}

// payloadFor is cosign's simple-signing payload for repo@digest.
func payloadFor(repo, digest string) []byte {
	return []byte(`{"critical":{"identity":{"docker-reference":"` + repo + `"},"image":{"docker-manifest-digest":"` + digest + `"},"type":"cosign container image signature"},"optional":null}`)
}

func sign(t *testing.T, k keyPair, payload []byte) []byte {
	t.Helper()
	s, err := signature.LoadECDSASignerVerifier(k.priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.SignMessage(bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// pushSignature writes a cosign tag-scheme signature manifest, as cosign
// does: the payload as a layer annotated with its base64 signature, under
// repo:sha256-<hex>.sig. It returns the signature manifest's digest.
func pushSignature(t *testing.T, repo, digest string, payload, sig []byte) string {
	t.Helper()
	layer := static.NewLayer(payload, "application/vnd.dev.cosign.simplesigning.v1+json")
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.Append(img, mutate.Addendum{Layer: layer, Annotations: map[string]string{verify.SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)}})
	if err != nil {
		t.Fatal(err)
	}
	return testimage.Push(t, repo+":"+verify.SignatureTag(digest), img).DigestStr()
}

// registries are the registries the tests run on: go-containerregistry's
// in-memory one, and the real test registry ./scripts/test starts.
func registries(t *testing.T) map[string]string {
	h := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	out := map[string]string{"in-process": strings.TrimPrefix(srv.URL, "http://")}
	if !testing.Short() {
		out["real"] = testenv.Registry(t)
	}
	return out
}

func TestCosignKey(t *testing.T) {
	for name, host := range registries(t) {
		t.Run(name, func(t *testing.T) { testCosignKey(t, host) })
	}
}

func testCosignKey(t *testing.T, host string) {
	ctx := context.Background()
	repo := host + "/verify/" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	good, other := newKey(t), newKey(t)
	push := func(tag, content string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: content})).DigestStr()
	}
	signed := push("1.0", "signed")
	sigDigest := pushSignature(t, repo, signed, payloadFor(repo, signed), sign(t, good, payloadFor(repo, signed)))
	unsigned := push("1.1", "unsigned")
	wrongKey := push("1.2", "wrong key")
	pushSignature(t, repo, wrongKey, payloadFor(repo, wrongKey), sign(t, other, payloadFor(repo, wrongKey)))
	malformed := push("1.3", "malformed")
	sig := sign(t, good, payloadFor(repo, malformed))
	pushSignature(t, repo, malformed, payloadFor(repo, malformed), sig[:len(sig)-3])
	altered := push("1.4", "altered")
	p := payloadFor(repo, altered)
	pushSignature(t, repo, altered, bytes.Replace(p, []byte(`"optional":null`), []byte(`"optional":{"x":"y"}`), 1), sign(t, good, p))
	copied := push("1.5", "copied")
	pushSignature(t, repo, copied, payloadFor(repo, signed), sign(t, good, payloadFor(repo, signed)))

	counter := registry.NewCounter(http.DefaultTransport)
	cache := registry.NewCache(t.TempDir())
	src := registry.NewRemote(registry.RemoteOptions{Host: host, Transport: counter, Cache: cache})
	pol, err := verify.New(verify.Spec{Keys: []string{other.path, good.path}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := pol.Verify(ctx, src, repo, signed)
	if err != nil {
		t.Fatalf("signed image: %v", err)
	}
	if want := (verify.Result{Method: verify.MethodCosignKey, Signer: good.fp, Signature: sigDigest}); r != want {
		t.Errorf("signed image: %+v, want %+v", r, want)
	}
	for _, tt := range []struct {
		name   string
		digest string
		want   verify.Reason
	}{
		{"unsigned", unsigned, verify.Unsigned},
		{"altered payload", altered, verify.UntrustedSigner},
		{"malformed signature", malformed, verify.BadSignature},
		{"signature for another digest", copied, verify.OtherDigest},
	} {
		_, err := pol.Verify(ctx, src, repo, tt.digest)
		var f *verify.Failure
		if !errors.As(err, &f) || f.Reason != tt.want {
			t.Errorf("%s: %v, want a failure %q", tt.name, err, tt.want)
		}
	}
	only, err := verify.New(verify.Spec{Keys: []string{good.path}})
	if err != nil {
		t.Fatal(err)
	}
	var f *verify.Failure
	if _, err := only.Verify(ctx, src, repo, wrongKey); !errors.As(err, &f) || f.Reason != verify.UntrustedSigner {
		t.Errorf("wrong key: %v, want untrusted signer", err)
	}

	// Warm: the .sig tag costs one HEAD; the recorded signature digest
	// costs nothing.
	before := total(counter)
	if _, err := pol.Verify(ctx, src, repo, signed); err != nil {
		t.Fatal(err)
	}
	if got := total(counter) - before; got != 1 {
		t.Errorf("warm Verify sent %d requests, want 1 (a manifest HEAD): %v", got, counter.Summary())
	}
	before = total(counter)
	if _, err := pol.Recheck(ctx, src, repo, signed, sigDigest); err != nil {
		t.Fatal(err)
	}
	if got := total(counter) - before; got != 0 {
		t.Errorf("warm Recheck sent %d requests, want 0: %v", got, counter.Summary())
	}
	// Offline, from the cache alone.
	if _, err := pol.Recheck(ctx, registry.Offline{Cache: cache}, repo, signed, sigDigest); err != nil {
		t.Errorf("offline Recheck: %v", err)
	}
	// The signature tag re-pushed with another digest's signature: the
	// recorded digest still verifies, the tag does not.
	pushSignature(t, repo, signed, payloadFor(repo, copied), sign(t, good, payloadFor(repo, copied)))
	if _, err := pol.Recheck(ctx, src, repo, signed, sigDigest); err != nil {
		t.Errorf("Recheck by the recorded digest after the tag moved: %v", err)
	}
	if _, err := pol.Verify(ctx, src, repo, signed); !errors.As(err, &f) || f.Reason != verify.OtherDigest {
		t.Errorf("Verify after the tag moved: %v, want signature for another digest", err)
	}
}

func total(c *registry.Counter) int {
	n := 0
	for _, l := range c.Summary() {
		var k int
		_, rest, _ := strings.Cut(l, ": ")
		if _, err := fmtSscan(rest, &k); err == nil {
			n += k
		}
	}
	return n
}

func TestNewRefuses(t *testing.T) {
	for _, spec := range []verify.Spec{{}, {Issuer: "https://issuer", Subject: "me", TrustedRoot: "root.json"}, {Keys: []string{"/nonexistent/cosign.pub"}}} {
		if _, err := verify.New(spec); err == nil {
			t.Errorf("New(%+v) = nil error", spec)
		}
	}
	_ = v1.Hash{}
}

func fmtSscan(s string, n *int) (int, error) { return fmt.Sscan(s, n) }
