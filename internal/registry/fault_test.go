package registry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/pin-tool/pin/internal/testkit/faultproxy"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// The tests of this file put internal/testkit/faultproxy in front of a registry
// (the in-memory one, and the real one; see onRegistries) and check, for
// each fault, what a Remote answers, what reached the wire and what was
// cached.

var faultSeq atomic.Int64

// faulty pushes version 1.0 of a new repository to reg and returns a
// proxy in front of it, the repository named on the proxy, and the image
// pushed.
func faulty(t *testing.T, reg *testRegistry) (*faultproxy.Proxy, string, pushed) {
	t.Helper()
	path := fmt.Sprintf("fault/%s-%d-%d", strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(t.Name()), "-"), "-"), time.Now().UnixNano(), faultSeq.Add(1))
	p := reg.push(t, reg.host+"/"+path+":1.0", versioned(t, "1.0", created1))
	px := faultproxy.New(t, reg.host)
	return px, px.Host + "/" + path, p
}

// cached lists the blobs a cache holds.
func cached(t *testing.T, c *Cache) []string {
	t.Helper()
	var out []string
	entries, _ := os.ReadDir(filepath.Join(c.dir, "blobs", "sha256"))
	for _, e := range entries {
		out = append(out, "sha256:"+e.Name())
	}
	return out
}

func TestFaultRetryAfter(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		px, repo, p := faulty(t, reg)
		px.Inject(faultproxy.Manifest(http.MethodGet), 1, faultproxy.Status(http.StatusTooManyRequests, "Retry-After", "1"))
		r, _ := newTestRemote(t, RemoteOptions{Host: px.Host})
		start := time.Now()
		img, err := r.Image(context.Background(), repo, "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < time.Second {
			t.Errorf("took %v: the Retry-After of 1s was not waited out", d)
		}
		if img.Digest != p.digest {
			t.Errorf("digest %s, want %s", img.Digest, p.digest)
		}
		if n := px.Count(faultproxy.Manifest(http.MethodGet)); n != 2 {
			t.Errorf("%d manifest GETs, want 2 (the 429, then the answer)", n)
		}
	})
}

func TestFault5xx(t *testing.T) {
	t.Parallel()
	t.Run("burst within the bound", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, p := faulty(t, reg)
			px.Inject(faultproxy.Manifest(http.MethodGet), 2, faultproxy.Status(http.StatusServiceUnavailable))
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host})
			img, err := r.Image(context.Background(), repo, "1.0", "")
			if err != nil {
				t.Fatal(err)
			}
			if img.Digest != p.digest {
				t.Errorf("digest %s, want %s", img.Digest, p.digest)
			}
			if n := px.Count(faultproxy.Manifest(http.MethodGet)); n != 3 {
				t.Errorf("%d manifest GETs, want 3", n)
			}
		})
	})
	t.Run("longer than the bound", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, _ := faulty(t, reg)
			px.Inject(faultproxy.TagList, 0, faultproxy.Status(http.StatusBadGateway))
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host})
			start := time.Now()
			_, err := r.Tags(context.Background(), repo)
			if err == nil || !strings.Contains(err.Error(), "listing tags of "+repo) || !strings.Contains(err.Error(), "502") {
				t.Fatalf("Tags = %v, want the 502, naming the repository", err)
			}
			if n := px.Count(faultproxy.TagList); n != 3 {
				t.Errorf("%d tag list requests, want 3 attempts", n)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v, want about 4s of backoff", d)
			}
		})
	})
}

func TestFaultReset(t *testing.T) {
	t.Parallel()
	t.Run("once", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, p := faulty(t, reg)
			px.Inject(faultproxy.Manifest(http.MethodGet), 1, faultproxy.Reset())
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host})
			img, err := r.Image(context.Background(), repo, "1.0", "")
			if err != nil {
				t.Fatal(err)
			}
			if img.Digest != p.digest {
				t.Errorf("digest %s, want %s", img.Digest, p.digest)
			}
		})
	})
	t.Run("always", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, _ := faulty(t, reg)
			px.Inject(faultproxy.Manifest(http.MethodGet), 0, faultproxy.Reset())
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host})
			_, err := r.Image(context.Background(), repo, "1.0", "")
			if !errors.Is(err, syscall.ECONNRESET) && !strings.Contains(err.Error(), "EOF") {
				t.Fatalf("Image = %v, want the reset", err)
			}
			if !strings.Contains(err.Error(), "manifest of "+repo+":1.0") {
				t.Errorf("error %q does not name the manifest", err)
			}
			// Three attempts of pin's; Go's transport may retry a request on a
			// reused connection once more on its own.
			if n := px.Count(faultproxy.Manifest(http.MethodGet)); n < 3 || n > 6 {
				t.Errorf("%d manifest GETs, want 3 attempts (at most 6)", n)
			}
		})
	})
}

// TestFaultStall: a registry that accepts the request and never answers
// fails it after Timeout, and is not retried. The CLI has no flag for the
// timeout, so the short one is set here.
func TestFaultStall(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		px, repo, _ := faulty(t, reg)
		px.Inject(faultproxy.Blob(http.MethodGet), 0, faultproxy.Stall())
		r, _ := newTestRemote(t, RemoteOptions{Host: px.Host, Timeout: 300 * time.Millisecond})
		start := time.Now()
		_, err := r.Image(context.Background(), repo, "1.0", "")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Image = %v, want a deadline exceeded", err)
		}
		if !strings.Contains(err.Error(), "config of "+repo) {
			t.Errorf("error %q does not say what timed out", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v for a 300ms timeout", d)
		}
		if n := px.Count(faultproxy.Blob(http.MethodGet)); n != 1 {
			t.Errorf("%d blob GETs, want 1: a timeout is not retried", n)
		}
	})
}

func TestFaultTruncated(t *testing.T) {
	t.Parallel()
	t.Run("once", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, p := faulty(t, reg)
			px.Inject(faultproxy.Manifest(http.MethodGet), 1, faultproxy.Truncate(20))
			cache := NewCache(t.TempDir())
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host, Cache: cache})
			img, err := r.Image(context.Background(), repo, "1.0", "")
			if err != nil {
				t.Fatal(err)
			}
			if img.Digest != p.digest {
				t.Errorf("digest %s, want %s", img.Digest, p.digest)
			}
			if n := px.Count(faultproxy.Manifest(http.MethodGet)); n != 2 {
				t.Errorf("%d manifest GETs, want 2: a body cut short is retried", n)
			}
		})
	})
	t.Run("always", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, p := faulty(t, reg)
			px.Inject(faultproxy.Blob(http.MethodGet), 0, faultproxy.Truncate(20))
			cache := NewCache(t.TempDir())
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host, Cache: cache})
			_, err := r.Image(context.Background(), repo, "1.0", "")
			if err == nil || !strings.Contains(err.Error(), "unexpected EOF") || !strings.Contains(err.Error(), p.config) {
				t.Fatalf("Image = %v, want an unexpected EOF naming the config", err)
			}
			if n := px.Count(faultproxy.Blob(http.MethodGet)); n != 3 {
				t.Errorf("%d blob GETs, want 3", n)
			}
			for _, d := range cached(t, cache) {
				if d == p.config {
					t.Errorf("the config was cached from a truncated body")
				}
			}
		})
	})
}

// TestFaultCorrupt: content that does not match its digest is refused,
// never cached, never retried into acceptance.
func TestFaultCorrupt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		match func(p pushed) faultproxy.Match
		ref   func(p pushed) string
	}{
		{"manifest by tag", func(pushed) faultproxy.Match { return faultproxy.Manifest(http.MethodGet) }, func(pushed) string { return "1.0" }},
		{"manifest by digest", func(pushed) faultproxy.Match { return faultproxy.Manifest(http.MethodGet) }, func(p pushed) string { return p.digest }},
		{"config", func(p pushed) faultproxy.Match { return faultproxy.Blob(http.MethodGet, p.config) }, func(pushed) string { return "1.0" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
				px, repo, p := faulty(t, reg)
				px.Inject(tc.match(p), 0, faultproxy.Corrupt())
				cache := NewCache(t.TempDir())
				r, _ := newTestRemote(t, RemoteOptions{Host: px.Host, Cache: cache})
				_, err := r.Image(context.Background(), repo, tc.ref(p), "")
				if !errors.Is(err, ErrDigestMismatch) {
					t.Fatalf("Image = %v, want ErrDigestMismatch", err)
				}
				if px.Faulted() == 0 {
					t.Fatal("no request met the fault")
				}
				for _, d := range cached(t, cache) {
					if d != p.digest && d != p.config {
						t.Errorf("cached %s, content that is not the image's", d)
					}
				}
				// Once the fault is gone, the same Remote and cache answer right.
				px.Clear()
				img, err := r.Image(context.Background(), repo, tc.ref(p), "")
				if err != nil || img.Digest != p.digest || img.ConfigDigest != p.config {
					t.Errorf("after the fault: %+v, %v", img, err)
				}
			})
		})
	}
}

// TestFaultOversize: a manifest or config over its bound is refused
// without reading it all, whether its size is announced or not.
func TestFaultOversize(t *testing.T) {
	t.Parallel()
	const huge = 256 << 20
	for _, tc := range []struct {
		name       string
		blob       bool
		size       int64
		withLength bool
		// most is the most the proxy may have written before pin hung up:
		// with a Content-Length, nothing needs reading (the kernel's
		// socket buffers take a few MiB regardless).
		most int64
	}{
		{"manifest with length", false, huge, true, 32 << 20},
		{"manifest chunked", false, huge, false, 32 << 20},
		{"manifest just over", false, maxManifestSize + 1, true, maxManifestSize + 1},
		{"config with length", true, huge, true, 32 << 20},
		{"config chunked", true, huge, false, 32 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
				px, repo, p := faulty(t, reg)
				match := faultproxy.Manifest(http.MethodGet)
				if tc.blob {
					match = faultproxy.Blob(http.MethodGet)
				}
				px.Inject(match, 0, faultproxy.Oversize(tc.size, tc.withLength))
				cache := NewCache(t.TempDir())
				r, _ := newTestRemote(t, RemoteOptions{Host: px.Host, Cache: cache})
				_, err := r.Image(context.Background(), repo, "1.0", "")
				if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "4 MiB") {
					t.Fatalf("Image = %v, want ErrTooLarge naming the bound", err)
				}
				if tc.blob && !strings.Contains(err.Error(), p.config) {
					t.Errorf("error %q does not name the config", err)
				}
				px.Idle()
				for _, r := range px.Requests() {
					if r.Fault != "" && r.Written > tc.most {
						t.Errorf("%s %s: %d bytes written before pin gave up, want at most %d", r.Method, r.Path, r.Written, tc.most)
					}
					if r.Fault != "" {
						t.Logf("%s: %d of %d bytes written before pin hung up", r.Path, r.Written, tc.size)
					}
				}
				if n := px.Faulted(); n != 1 {
					t.Errorf("%d oversized answers, want 1: too large is not retried", n)
				}
				if len(cached(t, cache)) > 1 {
					t.Errorf("cache holds %v", cached(t, cache))
				}
			})
		})
	}
}

func TestFaultLink(t *testing.T) {
	t.Parallel()
	t.Run("loop", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, _ := faulty(t, reg)
			px.Inject(faultproxy.TagList, 0, faultproxy.Headers(func(r *http.Request, h http.Header) {
				h.Set("Link", fmt.Sprintf(`<%s?last=1.0&n=1000>; rel="next"`, r.URL.Path))
			}))
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host})
			_, err := r.Tags(context.Background(), repo)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "loops") {
				t.Fatalf("Tags = %v, want the loop refused", err)
			}
			if n := px.Count(faultproxy.TagList); n != 2 {
				t.Errorf("%d tag list requests, want 2", n)
			}
		})
	})
	t.Run("another host", func(t *testing.T) {
		t.Parallel()
		onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
			px, repo, _ := faulty(t, reg)
			other := faultproxy.NewRecorder(t)
			px.Inject(faultproxy.TagList, 0, faultproxy.Headers(func(r *http.Request, h http.Header) {
				h.Set("Link", fmt.Sprintf(`<http://%s%s?last=1.0&n=1000>; rel="next"`, other.Host, r.URL.Path))
			}))
			r, _ := newTestRemote(t, RemoteOptions{Host: px.Host})
			_, err := r.Tags(context.Background(), repo)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "another host") || !strings.Contains(err.Error(), other.Host) {
				t.Fatalf("Tags = %v, want the Link to %s refused", err, other.Host)
			}
			if got := other.Requests(); len(got) != 0 {
				t.Errorf("the other host was asked: %+v", got)
			}
		})
	})
}

// keychain gives the same credentials for every registry.
type keychain struct{ user, password string }

func (k keychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return &authn.Basic{Username: k.user, Password: k.password}, nil
}

// TestFaultRealm: the registry (one behind basic auth, through
// the proxy) challenges with a token server on another host. No request
// reaches it, so the credentials are not sent; go-containerregistry alone
// would send them to any https realm that is not a private address.
func TestFaultRealm(t *testing.T) {
	t.Parallel()
	onRegistries(t, basicRegistry, func(t *testing.T, reg *testRegistry) {
		user, password := reg.user, reg.password
		repo := fmt.Sprintf("fault/realm-%d", time.Now().UnixNano())
		testimage.Push(t, reg.host+"/"+repo+":1.0", versioned(t, "1.0", created1), &authn.Basic{Username: user, Password: password})
		secrets := []string{password, base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}

		thief := faultproxy.NewRecorder(t)
		for _, realm := range []string{
			"http://" + thief.Host + "/token",
			"https://thief.example/token",
			"https://" + thief.Host + "/token",
		} {
			t.Run(realm, func(t *testing.T) {
				px := faultproxy.New(t, reg.host)
				px.Inject(faultproxy.Any, 0, faultproxy.Headers(func(_ *http.Request, h http.Header) {
					if h.Get("WWW-Authenticate") != "" {
						h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q,service="registry",scope="repository:x:pull"`, realm))
					}
				}))
				r, c := newTestRemote(t, RemoteOptions{Host: px.Host, Keychain: keychain{user, password}})
				_, err := r.Tags(context.Background(), px.Host+"/"+repo)
				if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "not on its host") {
					t.Fatalf("Tags = %v, want the realm refused", err)
				}
				t.Logf("refused: %v", err)
				u, _ := url.Parse(realm)
				c.mu.Lock()
				for _, l := range c.log {
					if strings.Contains(l, u.Host) {
						t.Errorf("sent to the realm: %s", l)
					}
				}
				c.mu.Unlock()
				for _, s := range secrets {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error shows a secret: %v", err)
					}
				}
			})
		}
		if got := thief.Requests(); len(got) != 0 {
			t.Errorf("the token server on another host was asked: %+v", got)
		}
	})
}

// TestFaultEchoedCredentials: a registry whose error message repeats the
// Authorization header it was sent does not get the credentials printed.
func TestFaultEchoedCredentials(t *testing.T) {
	t.Parallel()
	onRegistries(t, basicRegistry, func(t *testing.T, reg *testRegistry) {
		user, password := reg.user, reg.password
		repo := fmt.Sprintf("fault/echo-%d", time.Now().UnixNano())
		testimage.Push(t, reg.host+"/"+repo+":1.0", versioned(t, "1.0", created1), &authn.Basic{Username: user, Password: password})
		px := faultproxy.New(t, reg.host)
		px.Inject(faultproxy.Manifest(""), 0, faultproxy.EchoAuth(http.StatusForbidden))
		r, _ := newTestRemote(t, RemoteOptions{Host: px.Host, Keychain: keychain{user, password}})
		_, err := r.Image(context.Background(), px.Host+"/"+repo, "1.0", "")
		if err == nil || !strings.Contains(err.Error(), "<redacted>") {
			t.Fatalf("Image = %v, want the echoed credentials redacted", err)
		}
		for _, s := range []string{password, base64.StdEncoding.EncodeToString([]byte(user + ":" + password)), user + ":" + password} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error shows the secret %q: %v", s, err)
			}
		}
		// The credentials did go to the registry: the proxy is its host.
		sent := false
		for _, r := range px.Requests() {
			sent = sent || strings.HasPrefix(r.Authorization, "Basic ")
		}
		if !sent {
			t.Error("no request carried the credentials: the test checked nothing")
		}
	})
}
