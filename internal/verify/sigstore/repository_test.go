package sigstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// TestMatchRepository: one key signs two repositories. An image of one,
// copied with its signature into the other, verifies there by default
// (as with cosign: the digest alone is checked), and fails under
// MatchRepository as a signature for another repository; a signature
// that names the repository passes either way, under the tag scheme, as
// a classic referrer, and as a bundle whose statement names it. A bundle
// that names no repository (as cosign's bundle format writes them) fails
// under MatchRepository, and says why.
func TestMatchRepository(t *testing.T) {
	for name, host := range referrerRegistries(t) {
		t.Run(name, func(t *testing.T) { testMatchRepository(t, host) })
	}
}

func testMatchRepository(t *testing.T, host string) {
	ctx := context.Background()
	web, admin := repoFor(t, host)+"/web", repoFor(t, host)+"/admin"
	key := verifytest.NewKey(t)
	push := func(repo, tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: repo + tag})).DigestStr()
	}
	// admin's image, signed for admin, then copied into web with its
	// signature: the same digest, a payload naming admin.
	copied := push(admin, "1.0")
	verifytest.SignImage(t, key, admin, copied)
	testimage.Push(t, web+":copied", testimage.Build(t, testimage.Options{Content: admin + "1.0"}))
	p := verifytest.Payload(admin, copied)
	verifytest.PushSignature(t, web, copied, p, verifytest.Sign(t, key, p))

	own := push(web, "own")
	verifytest.SignImage(t, key, web, own)
	classic := push(web, "classic")
	cp := verifytest.Payload(web, classic)
	verifytest.PushClassicReferrer(t, web, classic, cp, verifytest.Sign(t, key, cp))
	named := push(web, "named")
	verifytest.PushBundle(t, web, named, verifytest.KeyBundle(t, key, verifytest.Statement(web, named)))
	unnamed := push(web, "unnamed")
	st := strings.Replace(string(verifytest.Statement(web, unnamed)), `"name":"`+web+`",`, "", 1)
	verifytest.PushBundle(t, web, unnamed, verifytest.KeyBundle(t, key, []byte(st)))

	src := both(registry.NewRemote(registry.RemoteOptions{Host: host}))
	loose, err := sigstore.New(verify.Spec{Keys: []string{key.Path}})
	if err != nil {
		t.Fatal(err)
	}
	strict, err := sigstore.New(verify.Spec{Keys: []string{key.Path}, MatchRepository: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{copied, own, classic, named, unnamed} {
		if _, err := loose.Verify(ctx, src, web, d); err != nil {
			t.Errorf("%s without match_repository: %v", d, err)
		}
	}
	for _, d := range []string{own, classic, named} {
		if _, err := strict.Verify(ctx, src, web, d); err != nil {
			t.Errorf("%s with match_repository: %v", d, err)
		}
	}
	_, err = strict.Verify(ctx, src, web, copied)
	failure(t, "admin's signature in web", err, verify.OtherRepository)
	if err == nil || !strings.Contains(err.Error(), "for "+admin+", not "+web) {
		t.Errorf("admin's signature in web: %v, want both repositories named", err)
	}
	_, err = strict.Verify(ctx, src, web, unnamed)
	failure(t, "a bundle that names no repository", err, verify.OtherRepository)
	if err == nil || !strings.Contains(err.Error(), "names no repository") {
		t.Errorf("a bundle that names no repository: %v", err)
	}
}
