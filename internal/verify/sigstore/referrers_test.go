package sigstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/static"

	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// TestClassicReferrer: a classic cosign signature attached as an OCI 1.1
// referrer (cosign sign --registry-referrers-mode=oci-1-1) verifies, by
// the referrers API and by the fallback tag (the real registry has no
// API), and again by its recorded digest; another key's, or another
// digest's, fails as under the .sig tag. A referrer of a type pin does not
// read is named, never "none".
func TestClassicReferrer(t *testing.T) {
	for name, host := range referrerRegistries(t) {
		t.Run(name, func(t *testing.T) { testClassicReferrer(t, host) })
	}
}

func testClassicReferrer(t *testing.T, host string) {
	ctx := context.Background()
	repo := repoFor(t, host)
	good, other := verifytest.NewKey(t), verifytest.NewKey(t)
	push := func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: repo + tag})).DigestStr()
	}
	signed, wrongKey, copied, notation, unsigned := push("signed"), push("wrong-key"), push("copied"), push("notation"), push("unsigned")
	classic := func(k verifytest.Key, digest, payloadFor string) string {
		p := verifytest.Payload(repo, payloadFor)
		return verifytest.PushClassicReferrer(t, repo, digest, p, verifytest.Sign(t, k, p))
	}
	ref := classic(good, signed, signed)
	classic(other, wrongKey, wrongKey)
	classic(good, copied, signed)
	verifytest.PushReferrer(t, repo, notation, "application/vnd.cncf.notary.signature",
		static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json"), static.NewLayer([]byte("jws"), "application/jose+json"), nil, nil)

	pol, err := sigstore.New(verify.Spec{Keys: []string{good.Path}})
	if err != nil {
		t.Fatal(err)
	}
	src := both(registry.NewRemote(registry.RemoteOptions{Host: host, Cache: registry.NewCache(t.TempDir())}))
	r, err := pol.Verify(ctx, src, repo, signed)
	if err != nil {
		t.Fatalf("classic referrer: %v", err)
	}
	if want := (verify.Result{Method: verify.MethodCosignKey, Signer: good.Fingerprint, Signature: ref}); r != want {
		t.Errorf("classic referrer: %+v, want %+v", r, want)
	}
	if r, err := pol.Recheck(ctx, src, repo, signed, ref); err != nil || r.Signature != ref {
		t.Errorf("recheck by the recorded referrer: %+v %v", r, err)
	}
	_, err = pol.Verify(ctx, src, repo, wrongKey)
	failure(t, "another key", err, verify.UntrustedSigner)
	_, err = pol.Verify(ctx, src, repo, copied)
	failure(t, "another digest's signature", err, verify.OtherDigest)

	_, err = pol.Verify(ctx, src, repo, notation)
	failure(t, "a Notation signature", err, verify.Unsigned)
	if err == nil || !strings.Contains(err.Error(), "a referrer of type application/vnd.cncf.notary.signature is not read") {
		t.Errorf("a Notation signature: %v, want the referrer's type named", err)
	}
	_, err = pol.Verify(ctx, src, repo, unsigned)
	failure(t, "unsigned", err, verify.Unsigned)
	if err == nil || !strings.Contains(err.Error(), "none as a referrer") {
		t.Errorf("unsigned: %v, want none as a referrer", err)
	}
}
