package sigstore_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// TestVerifyKeylessFloors, in process on go-containerregistry's in-memory
// registry with the referrers API: a keyless policy locks the newest tag
// signed by the identity (as a referrer bundle), skips a newer one signed
// by another identity; an unsigned image that runs stays a floor and is
// reported, whether it is older than the choice or newer than every
// signed tag (then it is locked, unverified, never an older signed
// one). A second run rechecks the recorded signature by digest: a .sig
// tag re-pushed since with a bad signature changes nothing.
func TestVerifyKeylessFloors(t *testing.T) {
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)), ggcrregistry.WithReferrersSupport(true)))
	t.Cleanup(srv.Close)
	host_ := strings.TrimPrefix(srv.URL, "http://")
	repo := host_ + "/app"
	const iss, who = "https://issuer.example", "release@example.com"
	ss := verifytest.NewSigstore(t)
	push := func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: tag})).DigestStr()
	}
	d11, d12, d13, d14 := push("1.1.0"), push("1.2.0"), push("1.3.0"), push("1.4.0")
	ref12 := verifytest.PushBundle(t, repo, d12, ss.KeylessBundle(t, who, iss, verifytest.Statement(repo, d12)))
	verifytest.PushBundle(t, repo, d13, ss.KeylessBundle(t, "intruder@example.com", iss, verifytest.Statement(repo, d13)))
	// 1.1.0 and 1.4.0 are unsigned.

	src := `
host "h1" { snapshot = "h1.json" }
host "h2" { snapshot = "h2.json" }
module "low" {
  image   = "` + repo + `"
  policy  = "track-upstream"
  runs_on "h1" { container = "svc" }
  verify {
    issuer       = "` + iss + `"
    subject      = "` + who + `"
    trusted_root = "` + ss.RootPath + `"
  }
}
module "high" {
  image   = "` + repo + `"
  policy  = "track-upstream"
  runs_on "h2" { container = "svc" }
  verify {
    issuer       = "` + iss + `"
    subject      = "` + who + `"
    trusted_root = "` + ss.RootPath + `"
  }
}
`
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	running := func(name, tag, digest string) *host.Snapshot {
		return &host.Snapshot{Host: name, Containers: []host.Container{{ID: "1", Name: "svc", Image: repo + ":" + tag, ImageID: digest, State: "running"}},
			Images: []host.Image{{ID: digest, RepoDigests: []string{repo + "@" + digest}}}}
	}
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{"h1": running("h1", "1.1.0", d11), "h2": running("h2", "1.4.0", d14)}}
	cache := registry.NewCache(t.TempDir())
	remote := registry.NewRemote(registry.RemoteOptions{Host: host_, Cache: cache})
	in := resolve.Input{Catalogue: cat, Observed: seen, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Registry: func(string) resolve.Registry { return remote }, Verifier: verifiers(both(remote))}
	by := func(p *resolve.Plan) map[string]*resolve.Decision {
		out := map[string]*resolve.Decision{}
		for _, d := range p.Decisions {
			out[d.Module.Name] = d
		}
		return out
	}
	floors := func(d *resolve.Decision) string {
		var s []string
		for _, u := range d.Verification.Floors {
			s = append(s, u.Image.Digest+": "+string(u.Failure.Reason))
		}
		return strings.Join(s, ", ")
	}
	first := by(resolve.Resolve(context.Background(), in))

	low := first["low"]
	if low.New() == nil {
		t.Fatalf("low: no entry: %v %v", low.Refusal(), low.Err())
	}
	if low.New().Digest != d12 || low.New().Verified != verify.MethodCosignKeyless || low.New().Signer != iss+" "+who || low.New().Signature != ref12 {
		t.Errorf("low: locked %s (%s %q %s), want 1.2.0 %s verified keyless by %q with %s", low.New().Digest, low.New().Verified, low.New().Signer, low.New().Signature, d12, iss+" "+who, ref12)
	}
	var skipped []string
	for _, u := range low.Verification.Skipped {
		skipped = append(skipped, u.Image.Tag+": "+string(u.Failure.Reason))
	}
	if got, want := strings.Join(skipped, ", "), "1.4.0: unsigned, 1.3.0: untrusted signer"; got != want {
		t.Errorf("low: skipped %q, want %q", got, want)
	}
	if got, want := floors(low), d11+": unsigned"; got != want {
		t.Errorf("low: unverified floors %q, want %q (the running 1.1.0)", got, want)
	}

	high := first["high"]
	if high.New() == nil {
		t.Fatalf("high: no entry: %v %v", high.Refusal(), high.Err())
	}
	if high.New().Digest != d14 || high.New().Verified != "" || high.New().Signature != "" {
		t.Errorf("high: locked %s (%s %s), want the running unsigned 1.4.0 %s, unverified: never older than what runs", high.New().Digest, high.New().Verified, high.New().Signature, d14)
	}
	if got, want := floors(high), d14+": unsigned"; got != want {
		t.Errorf("high: unverified floors %q, want %q (the running 1.4.0)", got, want)
	}
	st := resolve.Outdated(context.Background(), resolve.Input{Catalogue: cat, Observed: seen, Now: in.Now, Registry: in.Registry, Verifier: in.Verifier,
		Old: &lock.Lock{Modules: []*lock.Module{low.New(), high.New()}}}, nil)
	for _, s := range st {
		if !s.Has(resolve.StatusUnverified) {
			t.Errorf("outdated %s: statuses %v, want %q for its unsigned running floor", s.Module.Name, s.Statuses, resolve.StatusUnverified)
		}
	}

	// The .sig tag of 1.2.0 now holds a signature of another digest: the
	// recorded referrer still verifies 1.2.0 by digest.
	verifytest.PushAnnotated(t, repo, d12, verifytest.Payload(repo, d11), map[string]string{sigstore.SignatureAnnotation: "AAAA"})
	// Module low alone: high asks about 1.2.0 afresh, having no record.
	in.Catalogue = &catalogue.Catalogue{Modules: []*catalogue.Module{cat.Module("low")}}
	in.Old = &lock.Lock{Modules: []*lock.Module{low.New()}}
	asked := &askedReferrers{Remote: registry.NewRemote(registry.RemoteOptions{Host: host_, Cache: cache}), digests: map[string]int{}}
	in.Registry = func(string) resolve.Registry { return asked }
	in.Verifier = verifiers(both(asked))
	second := by(resolve.Resolve(context.Background(), in))
	if l := second["low"]; l.New() == nil || l.New().Digest != d12 || l.New().Signature != ref12 {
		t.Errorf("second run, low: %+v (refusal %v), want 1.2.0 verified by the recorded %s", l.New(), l.Refusal(), ref12)
	}
	if n := asked.digests[d12]; n != 0 {
		t.Errorf("second run: the referrers of the locked 1.2.0 were asked %d time(s), want 0: its recorded signature answers", n)
	}
}

// askedReferrers counts the referrer lookups per digest.
type askedReferrers struct {
	*registry.Remote
	mu      sync.Mutex
	digests map[string]int
}

func (a *askedReferrers) Referrers(ctx context.Context, repo, digest string) ([]byte, error) {
	a.mu.Lock()
	a.digests[digest]++
	a.mu.Unlock()
	return a.Remote.Referrers(ctx, repo, digest)
}
