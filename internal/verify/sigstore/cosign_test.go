package sigstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

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
	good, other := verifytest.NewKey(t), verifytest.NewKey(t)
	push := func(tag, content string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: content})).DigestStr()
	}
	signed := push("1.0", "signed")
	sigDigest := verifytest.PushSignature(t, repo, signed, verifytest.Payload(repo, signed), verifytest.Sign(t, good, verifytest.Payload(repo, signed)))
	unsigned := push("1.1", "unsigned")
	wrongKey := push("1.2", "wrong key")
	verifytest.PushSignature(t, repo, wrongKey, verifytest.Payload(repo, wrongKey), verifytest.Sign(t, other, verifytest.Payload(repo, wrongKey)))
	malformed := push("1.3", "malformed")
	sig := verifytest.Sign(t, good, verifytest.Payload(repo, malformed))
	verifytest.PushSignature(t, repo, malformed, verifytest.Payload(repo, malformed), sig[:len(sig)-3])
	altered := push("1.4", "altered")
	p := verifytest.Payload(repo, altered)
	verifytest.PushSignature(t, repo, altered, bytes.Replace(p, []byte(`"optional":null`), []byte(`"optional":{"x":"y"}`), 1), verifytest.Sign(t, good, p))
	copied := push("1.5", "copied")
	verifytest.PushSignature(t, repo, copied, verifytest.Payload(repo, signed), verifytest.Sign(t, good, verifytest.Payload(repo, signed)))

	counter := registry.NewCounter(http.DefaultTransport)
	cache := registry.NewCache(t.TempDir())
	src := registry.NewRemote(registry.RemoteOptions{Host: host, Transport: counter, Cache: cache})
	pol, err := sigstore.New(verify.Spec{Keys: []string{other.Path, good.Path}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := pol.Verify(ctx, both(src), repo, signed)
	if err != nil {
		t.Fatalf("signed image: %v", err)
	}
	if want := (verify.Result{Method: verify.MethodCosignKey, Signer: good.Fingerprint, Signature: sigDigest}); r != want {
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
		_, err := pol.Verify(ctx, both(src), repo, tt.digest)
		var f *verify.Failure
		if !errors.As(err, &f) || f.Reason != tt.want {
			t.Errorf("%s: %v, want a failure %q", tt.name, err, tt.want)
		}
	}
	only, err := sigstore.New(verify.Spec{Keys: []string{good.Path}})
	if err != nil {
		t.Fatal(err)
	}
	var f *verify.Failure
	if _, err := only.Verify(ctx, both(src), repo, wrongKey); !errors.As(err, &f) || f.Reason != verify.UntrustedSigner {
		t.Errorf("wrong key: %v, want untrusted signer", err)
	}

	// Warm: the .sig tag costs one HEAD; the recorded signature digest
	// costs nothing.
	before := total(counter)
	if _, err := pol.Verify(ctx, both(src), repo, signed); err != nil {
		t.Fatal(err)
	}
	if got := total(counter) - before; got != 1 {
		t.Errorf("warm Verify sent %d requests, want 1 (a manifest HEAD): %v", got, counter.Summary())
	}
	before = total(counter)
	if _, err := pol.Recheck(ctx, both(src), repo, signed, sigDigest); err != nil {
		t.Fatal(err)
	}
	if got := total(counter) - before; got != 0 {
		t.Errorf("warm Recheck sent %d requests, want 0: %v", got, counter.Summary())
	}
	// Offline, from the cache alone.
	if _, err := pol.Recheck(ctx, both(registry.Offline{Cache: cache}), repo, signed, sigDigest); err != nil {
		t.Errorf("offline Recheck: %v", err)
	}
	// The signature tag re-pushed with another digest's signature: the
	// recorded digest still verifies, the tag does not.
	verifytest.PushSignature(t, repo, signed, verifytest.Payload(repo, copied), verifytest.Sign(t, good, verifytest.Payload(repo, copied)))
	if _, err := pol.Recheck(ctx, both(src), repo, signed, sigDigest); err != nil {
		t.Errorf("Recheck by the recorded digest after the tag moved: %v", err)
	}
	if _, err := pol.Verify(ctx, both(src), repo, signed); !errors.As(err, &f) || f.Reason != verify.OtherDigest {
		t.Errorf("Verify after the tag moved: %v, want signature for another digest", err)
	}

	// Asked whether the registry still serves it: one HEAD, warm.
	asking := sigstore.Registry{Source: src, Referrers: src, Heads: src}
	before = total(counter)
	if _, err := pol.Recheck(ctx, asking, repo, signed, sigDigest); err != nil {
		t.Fatal(err)
	}
	if got := total(counter) - before; got != 1 {
		t.Errorf("warm Recheck with Heads sent %d requests, want 1 (a HEAD): %v", got, counter.Summary())
	}
	// The signature deleted from the registry: the cache still holds
	// its content, the HEAD says it is gone.
	deleteManifest(t, repo, sigDigest)
	if _, err := pol.Recheck(ctx, both(src), repo, signed, sigDigest); err != nil {
		t.Errorf("Recheck from the cache after the signature was deleted: %v", err)
	}
	_, err = pol.Recheck(ctx, asking, repo, signed, sigDigest)
	if !errors.As(err, &f) || f.Reason != verify.Unsigned || !strings.Contains(f.Detail, "is gone from the registry") {
		t.Errorf("Recheck with Heads after the signature was deleted: %v, want unsigned, gone from the registry", err)
	}
}

// deleteManifest deletes repo@digest from its registry, as "crane delete"
// does (distribution needs storage.delete.enabled, which scripts/test
// sets).
func deleteManifest(t *testing.T, repo, digest string) {
	t.Helper()
	ref, err := name.NewDigest(repo+"@"+digest, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Delete(ref); err != nil {
		t.Fatalf("deleting %s: %v", ref, err)
	}
}

func total(c *registry.Counter) int {
	n := 0
	for _, l := range c.Summary() {
		var k int
		_, rest, _ := strings.Cut(l, ": ")
		if _, err := fmt.Sscan(rest, &k); err == nil {
			n += k
		}
	}
	return n
}

func TestNewRefuses(t *testing.T) {
	for _, spec := range []verify.Spec{{}, {Issuer: "https://issuer", Subject: "me", TrustedRoot: "root.json"}, {Keys: []string{"/nonexistent/cosign.pub"}}} {
		if _, err := sigstore.New(spec); err == nil {
			t.Errorf("New(%+v) = nil error", spec)
		}
	}
}

// both is a registry client read for the tag scheme and its referrers.
func both[R interface {
	sigstore.Source
	sigstore.Referrers
}](r R) sigstore.Registry {
	return sigstore.Registry{Source: r, Referrers: r}
}
