package published_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/host/published"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// counter counts requests by method and what they ask for.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	k := req.Method + " other"
	switch p := req.URL.Path; {
	case p == "/v2/" || p == "/v2":
		k = "ping"
	case strings.Contains(p, "/manifests/"):
		k = req.Method + " manifest"
	case strings.Contains(p, "/blobs/"):
		k = req.Method + " blob"
	}
	c.mu.Lock()
	c.n[k]++
	c.mu.Unlock()
	return remote.DefaultTransport.RoundTrip(req)
}

func (c *counter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		if k != "ping" { // once per run and registry, not per host
			out[k] = v
		}
	}
	return out
}

// run is one pin run's registry client: its own Remote (a new session),
// the cache directory shared between runs.
func run(addr, cacheDir string) (*registry.Remote, *counter) {
	c := &counter{n: map[string]int{}}
	return registry.NewRemote(registry.RemoteOptions{Host: addr, Cache: registry.NewCache(cacheDir), Transport: c}), c
}

func ociHost(name, repo string, reg published.Registry, pub string, cacheDir string, now time.Time) *published.Host {
	h := &published.Host{Name: name, Location: published.OCIScheme + repo, Trust: verify.Spec{Keys: []string{pub}},
		MaxAge: time.Hour, Registry: reg, Now: func() time.Time { return now }}
	if cacheDir != "" {
		h.Cache = published.NewCache(cacheDir)
	}
	return h
}

func push(t *testing.T, repo string, o *published.Observation, s *published.Signer) string {
	t.Helper()
	ref, err := published.Push(context.Background(), repo, o, s, published.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// copyRef copies the manifest from names to to, as anyone with push
// access to a registry can.
func copyRef(t *testing.T, from, to string) {
	t.Helper()
	f, err := name.ParseReference(from)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := name.ParseReference(to)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(f)
	if err != nil {
		t.Fatalf("reading %s: %v", from, err)
	}
	if err := remote.Write(tr, img); err != nil {
		t.Fatalf("writing %s: %v", to, err)
	}
}

// TestOCIPublishedByTheCosignKey: an observation pushed with the key
// cosign generated is read back whole, and cosign itself accepts its
// signature.
func TestOCIPublishedByTheCosignKey(t *testing.T) {
	addr := testenv.Registry(t)
	cosign := testenv.Cosign(t)
	s, err := published.LoadKey(cosign.Key, []byte(cosign.Password()))
	if err != nil {
		t.Fatal(err)
	}
	repo := addr + "/fleet/cosign-observations"
	push(t, repo, observation("mesh-1", readAt), s)

	reg, _ := run(addr, t.TempDir())
	got, err := ociHost("mesh-1", repo, reg, cosign.Pub, "", readAt.Add(time.Minute)).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := observation("mesh-1", readAt)
	want.Snapshot.Normalise()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if out, ok := cosign.Verify(t, repo+":mesh-1"); !ok {
		t.Fatalf("cosign verify refuses pin's signature:\n%s", out)
	}
}

// TestOCIRefusals: every observation that must not count, published to a
// real registry, is refused with its reason.
func TestOCIRefusals(t *testing.T) {
	addr := testenv.Registry(t)
	k, other := verifytest.NewKey(t), verifytest.NewKey(t)
	now := readAt.Add(10 * time.Minute)
	base := addr + "/fleet/refusals-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	cases := []struct {
		name    string
		prepare func(t *testing.T, repo string)
		want    published.Reason
		detail  string
	}{
		{"not published", func(t *testing.T, repo string) {
			push(t, repo, observation("mesh-2", readAt), signer(t, k))
		}, published.NotPublished, "no such tag"},
		{"unsigned", func(t *testing.T, repo string) {
			push(t, repo+"-scratch", observation("mesh-1", readAt), signer(t, k))
			copyRef(t, repo+"-scratch:mesh-1", repo+":mesh-1")
		}, published.Unsigned, "no signature under sha256-"},
		{"wrong key", func(t *testing.T, repo string) {
			push(t, repo, observation("mesh-1", readAt), signer(t, other))
		}, published.WrongSigner, "none of the 1 configured key"},
		{"tampered", func(t *testing.T, repo string) {
			// The genuine observation, signed; then an altered one, its
			// stopped container gone, under the tag, with the genuine
			// signature copied beside it.
			genuine := push(t, repo, observation("mesh-1", readAt), signer(t, k))
			altered := observation("mesh-1", readAt)
			altered.Snapshot.Containers = altered.Snapshot.Containers[:1]
			fake := push(t, repo+"-scratch", altered, signer(t, other))
			copyRef(t, fake, repo+":mesh-1")
			gd := genuine[strings.Index(genuine, "@")+1:]
			fd := fake[strings.Index(fake, "@")+1:]
			copyRef(t, repo+":"+sigstore.SignatureTag(gd), repo+":"+sigstore.SignatureTag(fd))
		}, published.Tampered, "signature for another digest"},
		{"replayed in another repository", func(t *testing.T, repo string) {
			genuine := push(t, repo+"-origin", observation("mesh-1", readAt), signer(t, k))
			gd := genuine[strings.Index(genuine, "@")+1:]
			copyRef(t, genuine, repo+":mesh-1")
			copyRef(t, repo+"-origin:"+sigstore.SignatureTag(gd), repo+":"+sigstore.SignatureTag(gd))
		}, published.Tampered, "signature for another repository"},
		{"other host", func(t *testing.T, repo string) {
			genuine := push(t, repo, observation("mesh-2", readAt), signer(t, k))
			copyRef(t, genuine, repo+":mesh-1")
		}, published.OtherHost, "published by mesh-2"},
		{"too old", func(t *testing.T, repo string) {
			push(t, repo, observation("mesh-1", now.Add(-2*time.Hour)), signer(t, k))
		}, published.TooOld, "2h0m0s ago"},
		{"future", func(t *testing.T, repo string) {
			push(t, repo, observation("mesh-1", now.Add(time.Hour)), signer(t, k))
		}, published.Future, "1h0m0s ahead"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := base + "/" + string(rune('a'+i))
			c.prepare(t, repo)
			reg, _ := run(addr, t.TempDir())
			s, err := ociHost("mesh-1", repo, reg, k.Path, t.TempDir(), now).Observe(context.Background())
			var r *published.Refusal
			if !errors.As(err, &r) {
				t.Fatalf("got %v, %v; want a refusal", s, err)
			}
			if r.Reason != c.want || !strings.Contains(r.Error(), c.detail) {
				t.Fatalf("refusal %q (reason %q), want reason %q mentioning %q", r, r.Reason, c.want, c.detail)
			}
		})
	}
}

// TestOCIWarmReadIsOneHeadPerHost: a second run reads unchanged
// observations with one HEAD each and nothing else; a host that
// published since costs its own reads only, and is read new.
func TestOCIWarmReadIsOneHeadPerHost(t *testing.T) {
	addr := testenv.Registry(t)
	k := verifytest.NewKey(t)
	s := signer(t, k)
	repo := addr + "/fleet/warm-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	hosts := []string{"h0", "h1", "h2", "h3", "h4"}
	for _, h := range hosts {
		push(t, repo, observation(h, readAt), s)
	}
	cacheDir := t.TempDir()
	now := readAt.Add(time.Minute)
	readAll := func() map[string]int {
		t.Helper()
		reg, c := run(addr, cacheDir)
		for _, h := range hosts {
			if _, err := ociHost(h, repo, reg, k.Path, cacheDir, now).Observe(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		return c.counts()
	}
	cold := readAll()
	if cold["GET manifest"] == 0 || cold["GET blob"] == 0 {
		t.Fatalf("cold run read nothing by GET: %v", cold)
	}
	if d := cmp.Diff(map[string]int{"HEAD manifest": len(hosts)}, readAll()); d != "" {
		t.Fatalf("warm run (-want +got):\n%s", d)
	}
	// h2 publishes again: it costs its own reads, the others one HEAD.
	changed := observation("h2", readAt.Add(30*time.Second))
	changed.Snapshot.Containers = changed.Snapshot.Containers[:1]
	push(t, repo, changed, s)
	got := readAll()
	if got["HEAD manifest"] < len(hosts) || got["GET manifest"] == 0 {
		t.Fatalf("after h2 published: %v", got)
	}
	reg, _ := run(addr, cacheDir)
	o, err := ociHost("h2", repo, reg, k.Path, cacheDir, now).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !o.ReadAt.Equal(changed.ReadAt) || len(o.Snapshot.Containers) != 1 {
		t.Fatalf("h2 read %v with %d containers, want the new observation", o.ReadAt, len(o.Snapshot.Containers))
	}
	if d := cmp.Diff(map[string]int{"HEAD manifest": len(hosts)}, readAll()); d != "" {
		t.Fatalf("warm again (-want +got):\n%s", d)
	}
}

// TestOCISignedByCosignItself: an observation artifact signed by "cosign
// sign --key" (not by pin) is read, with cosign's public key.
func TestOCISignedByCosignItself(t *testing.T) {
	addr := testenv.Registry(t)
	cosign := testenv.Cosign(t)
	repo := fmt.Sprintf("%s/fleet/cosign-signed-%d", addr, time.Now().UnixNano())
	// Published unsigned (by copying a signed one out of scratch), then
	// signed by cosign.
	scratch := push(t, repo+"-scratch", observation("mesh-1", readAt), signer(t, verifytest.NewKey(t)))
	copyRef(t, scratch, repo+":mesh-1")
	d := scratch[strings.Index(scratch, "@")+1:]
	cosign.Sign(t, repo+"@"+d)

	reg, _ := run(addr, t.TempDir())
	if _, err := ociHost("mesh-1", repo, reg, cosign.Pub, "", readAt.Add(time.Minute)).Observe(context.Background()); err != nil {
		t.Fatal(err)
	}
}
