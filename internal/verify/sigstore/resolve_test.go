package sigstore_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
	"github.com/pin-tool/pin/resolve"
)

// TestVerifySelection, in process on go-containerregistry's in-memory
// registry: track-upstream locks the newest signed tag and records the
// newer unsigned one as skipped; an unsigned exact pin is refused with
// the reason; a pin signed by another key is refused as untrusted.
func TestVerifySelection(t *testing.T) {
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	repo := host + "/app"
	key, other := verifytest.NewKey(t), verifytest.NewKey(t)
	push := func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: tag})).DigestStr()
	}
	d10, d11, d12, d13 := push("1.0.0"), push("1.1.0"), push("1.2.0"), push("1.3.0")
	verifytest.SignImage(t, key, repo, d10)
	sig11 := verifytest.SignImage(t, key, repo, d11)
	verifytest.SignImage(t, other, repo, d13) // newest, signed by a key not named
	reg := registry.NewRemote(registry.RemoteOptions{Host: host})

	src := `
module "up" {
  image  = "` + repo + `"
  policy = "track-upstream"
  verify {
    keys = ["` + key.Path + `"]
  }
}
module "exact" {
  image  = "` + repo + `"
  policy = "exact"
  pin    = "1.2.0@` + d12 + `"
  verify {
    keys = ["` + key.Path + `"]
  }
}
module "plain" {
  image  = "` + repo + `"
  policy = "track-upstream"
}
`
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := resolve.Resolve(context.Background(), resolve.Input{Catalogue: cat, Observed: observe.Observed{},
		Registry: func(string) resolve.Registry { return reg }, Verifier: verifiers(both(reg)), Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	by := map[string]*resolve.Decision{}
	for _, d := range p.Decisions {
		by[d.Module.Name] = d
	}

	up := by["up"]
	if up.New() == nil {
		t.Fatalf("up: no entry: %v %v", up.Refusal(), up.Err())
	}
	if up.New().Digest != d11 || up.New().Verified != verify.MethodCosignKey || up.New().Signer != key.Fingerprint || up.New().Signature != sig11 {
		t.Errorf("up: locked %s %s (%s %s %s), want 1.1.0 %s verified by %s with %s", up.New().Tag, up.New().Digest, up.New().Verified, up.New().Signer, up.New().Signature, d11, key.Fingerprint, sig11)
	}
	var reasons []string
	for _, u := range up.Verification.Skipped {
		reasons = append(reasons, u.Image.Tag+": "+string(u.Failure.Reason))
	}
	if got, want := strings.Join(reasons, ", "), "1.3.0: untrusted signer, 1.2.0: unsigned"; got != want {
		t.Errorf("up: skipped %q, want %q", got, want)
	}

	ex := by["exact"]
	if ex.Refusal() == nil || ex.Refusal().Kind != resolve.KindUnverified || !strings.Contains(ex.Refusal().Error(), "unsigned") {
		t.Errorf("exact: refusal %v, err %v; want an unverified refusal naming unsigned", ex.Refusal(), ex.Err())
	}

	// Without a verify block nothing is asked of signatures.
	if pl := by["plain"]; pl.New() == nil || pl.New().Digest != d13 || pl.New().Verified != "" || pl.Verification != nil {
		t.Errorf("plain: %+v", pl.New())
	}
}

// verifiers builds each module's verifier as internal/source does: the
// policy of its verify block, bound to reg.
func verifiers(reg sigstore.Registry) func(*catalogue.Module) (resolve.Verifier, error) {
	return func(m *catalogue.Module) (resolve.Verifier, error) {
		v := m.Verify
		p, err := sigstore.New(verify.Spec{Keys: v.Keys, Issuer: v.Issuer, Subject: v.Subject, SubjectRegex: v.SubjectRegex, TrustedRoot: v.TrustedRoot, MatchRepository: v.MatchRepository})
		if err != nil {
			return nil, err
		}
		return p.On(reg), nil
	}
}
