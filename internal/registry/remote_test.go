package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/logs"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/resolve"
)

var _ resolve.Registry = (*Remote)(nil)

// anonymous is a keychain with no credentials: tests against the plain
// registry must not read the Docker config of whoever runs them.
var anonymous = authn.NewMultiKeychain()

// newTestRemote returns a Remote for host that counts its requests.
func newTestRemote(t *testing.T, opts RemoteOptions) (*Remote, *counter) {
	t.Helper()
	c := newCounter(t)
	opts.Transport = c
	if opts.Keychain == nil {
		opts.Keychain = anonymous
	}
	return NewRemote(opts), c
}

// pushed is an image pushed to the test registry.
type pushed struct {
	img    v1.Image
	digest string
	config string
}

func push(t *testing.T, ref string, img v1.Image, auth ...authn.Authenticator) pushed {
	t.Helper()
	d := testimage.Push(t, ref, img, auth...)
	cfg, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return pushed{img: img, digest: d.DigestStr(), config: cfg.String()}
}

var (
	created1 = time.Date(2026, 8, 20, 10, 0, 0, 0, time.UTC)
	created2 = time.Date(2026, 9, 17, 10, 0, 0, 0, time.UTC)
)

func versioned(t *testing.T, version string, created time.Time) v1.Image {
	return testimage.Build(t, testimage.Options{
		Content: "app " + version,
		Created: created,
		Labels:  map[string]string{image.LabelVersion: version, "org.pin-tool.test": t.Name()},
	})
}

func TestRemoteImage(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/remote/image"
		p := reg.push(t, repo+":1.0", versioned(t, "1.0", created1))

		r, c := newTestRemote(t, RemoteOptions{Host: reg.host})
		ctx := context.Background()
		want := image.Image{
			Repository:   repo,
			Tag:          "1.0",
			Digest:       p.digest,
			ConfigDigest: p.config,
			Platform:     "linux/" + runtime.GOARCH,
			Created:      created1,
			// The config's other label (org.pin-tool.test) is not kept.
			Labels: map[string]string{image.LabelVersion: "1.0"},
		}
		got, err := r.Image(ctx, repo, "1.0", "linux/amd64")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Image(1.0) (-want +got):\n%s", diff)
		}
		// Cold, no cache: the ping (https first, refused by the plain-http
		// server, then http), the manifest by tag, the config.
		c.expect(t, "cold tag", map[string]int{"ping https": 1, "ping http": 1, "manifest GET": 1, "blob GET": 1})

		got, err = r.Image(ctx, repo, p.digest, "linux/amd64")
		if err != nil {
			t.Fatal(err)
		}
		want.Tag = ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Image(digest) (-want +got):\n%s", diff)
		}
		// Without a cache everything is fetched again, but the Puller keeps its
		// pinged transport for the repository.
		c.expect(t, "by digest, no cache", map[string]int{"manifest GET": 1, "blob GET": 1})

		tags, err := r.Tags(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"1.0"}, tags); diff != "" {
			t.Errorf("Tags (-want +got):\n%s", diff)
		}
		c.expect(t, "tags", map[string]int{"tags list": 1})
	})
}

func TestRemoteIndex(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/remote/index"
		amd := testimage.Platform{OS: "linux", Architecture: "amd64"}
		arm := testimage.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
		amdImg := testimage.Build(t, testimage.Options{Content: "amd", Platform: amd, Created: created1})
		armImg := testimage.Build(t, testimage.Options{Content: "arm", Platform: arm, Created: created2,
			Labels: map[string]string{image.LabelVersion: "2.0"}})
		idx := testimage.Index(t, map[testimage.Platform]v1.Image{amd: amdImg, arm: armImg})
		d := testimage.Push(t, repo+":2.0", idx)
		digestOfImage := func(img v1.Image) string {
			h, err := img.Digest()
			if err != nil {
				t.Fatal(err)
			}
			return h.String()
		}
		armCfg, err := armImg.ConfigName()
		if err != nil {
			t.Fatal(err)
		}

		cache := NewCache(t.TempDir())
		r, c := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		ctx := context.Background()
		got, err := r.Image(ctx, repo, "2.0", "linux/arm64")
		if err != nil {
			t.Fatal(err)
		}
		want := image.Image{
			Repository:   repo,
			Tag:          "2.0",
			Digest:       d.DigestStr(),
			ConfigDigest: armCfg.String(),
			Platform:     "linux/arm64/v8",
			Platforms: map[string]string{
				"linux/amd64":    digestOfImage(amdImg),
				"linux/arm64/v8": digestOfImage(armImg),
			},
			Manifests: []image.PlatformManifest{
				{Platform: "linux/amd64", Digest: digestOfImage(amdImg)},
				{Platform: "linux/arm64/v8", Digest: digestOfImage(armImg)},
			},
			Created: created2,
			Labels:  map[string]string{image.LabelVersion: "2.0"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Image(2.0, linux/arm64) (-want +got):\n%s", diff)
		}
		c.expect(t, "cold index", map[string]int{"ping https": 1, "ping http": 1, "manifest GET": 2, "blob GET": 1})

		// Warm, another Remote on the same cache: one HEAD (after its ping).
		r2, c2 := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		got, err = r2.Image(ctx, repo, "2.0", "linux/arm64")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("warm Image(2.0, linux/arm64) (-want +got):\n%s", diff)
		}
		c2.expect(t, "warm index", map[string]int{"ping https": 1, "ping http": 1, "manifest HEAD": 1})

		// The other platform: its manifest and config are not cached yet.
		got, err = r2.Image(ctx, repo, "2.0", "linux/amd64")
		if err != nil {
			t.Fatal(err)
		}
		if got.Platform != "linux/amd64" || got.Created != created1 || got.Digest != d.DigestStr() {
			t.Errorf("Image(2.0, linux/amd64) = %+v", got)
		}
		c2.expect(t, "warm index, other platform", map[string]int{"manifest HEAD": 1, "manifest GET": 1, "blob GET": 1})

		// A platform the index does not have.
		_, err = r2.Image(ctx, repo, "2.0", "linux/s390x")
		if !errors.Is(err, image.ErrNotFound) {
			t.Errorf("Image(2.0, linux/s390x) = %v, want ErrNotFound", err)
		}
	})
}

// TestRemoteCost checks the cost model of docs/design.md: cold, a manifest and
// a config; warm, one HEAD; by digest from the cache, nothing.
func TestRemoteCost(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/remote/cost"
		p := reg.push(t, repo+":1.0", versioned(t, "1.0", created1))
		cache := NewCache(t.TempDir())
		ctx := context.Background()

		cold, c := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		want, err := cold.Image(ctx, repo, "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		c.expect(t, "cold", map[string]int{"ping https": 1, "ping http": 1, "manifest GET": 1, "blob GET": 1})

		warm, c := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		got, err := warm.Image(ctx, repo, "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("warm (-cold +warm):\n%s", diff)
		}
		c.expect(t, "warm", map[string]int{"ping https": 1, "ping http": 1, "manifest HEAD": 1})

		// Again on the same Remote: the ping is not repeated.
		if _, err := warm.Image(ctx, repo, "1.0", ""); err != nil {
			t.Fatal(err)
		}
		c.expect(t, "warm again", map[string]int{"manifest HEAD": 1})

		// By digest, everything is cached: not even a ping.
		byDigest, c := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		got, err = byDigest.Image(ctx, repo, p.digest, "")
		if err != nil {
			t.Fatal(err)
		}
		want.Tag = ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("by digest (-want +got):\n%s", diff)
		}
		c.expect(t, "by digest, cached", map[string]int{})

		// Only immutable content and hints are on disk.
		var files []string
		filepath.WalkDir(cache.dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(cache.dir, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		wantFiles := []string{"blobs.pack", "hints"}
		if diff := cmp.Diff(wantFiles, files, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("cache files (-want +got):\n%s", diff)
		}
		// The manifest and the config, each appended once.
		if b, err := os.ReadFile(filepath.Join(cache.dir, "blobs.pack")); err != nil ||
			strings.Count(string(b), "blob sha256:") != 2 || !strings.Contains(string(b), "blob "+p.digest+" ") || !strings.Contains(string(b), "blob "+p.config+" ") {
			t.Errorf("pack:\n%s\n%v", b, err)
		}
		// One hint, written once although the tag was read again.
		if b, err := os.ReadFile(filepath.Join(cache.dir, "hints")); err != nil || string(b) != reg.host+"/remote/cost 1.0 "+p.digest+"\n" {
			t.Errorf("hints file %q, %v", b, err)
		}
	})
}

func TestRemoteFloatingTag(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/remote/floating"
		a := reg.push(t, repo+":latest", versioned(t, "a", created1))
		r, c := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: NewCache(t.TempDir())})
		ctx := context.Background()

		got, err := r.Image(ctx, repo, "latest", "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest != a.digest {
			t.Fatalf("latest = %s, want %s", got.Digest, a.digest)
		}
		c.take()

		b := reg.push(t, repo+":latest", versioned(t, "b", created2))
		got, err = r.Image(ctx, repo, "latest", "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest != b.digest || got.ConfigDigest != b.config || !got.Created.Equal(created2) {
			t.Errorf("moved latest = %s (config %s, created %s), want %s (config %s, created %s)",
				got.Digest, got.ConfigDigest, got.Created, b.digest, b.config, created2)
		}
		// The hint made it HEAD; the new digest is not cached, so it GETs.
		c.expect(t, "moved tag", map[string]int{"manifest HEAD": 1, "manifest GET": 1, "blob GET": 1})

		// The tag goes away: not found, and the hint is forgotten.
		reg.untag(t, repo, "latest", b.digest)
		_, err = r.Image(ctx, repo, "latest", "")
		if !errors.Is(err, image.ErrNotFound) {
			t.Errorf("deleted latest: %v, want ErrNotFound", err)
		}
		c.expect(t, "deleted tag", map[string]int{"manifest HEAD": 1})
		_, err = r.Image(ctx, repo, "latest", "")
		if !errors.Is(err, image.ErrNotFound) {
			t.Errorf("deleted latest again: %v, want ErrNotFound", err)
		}
		c.expect(t, "deleted tag, hint forgotten", map[string]int{"manifest GET": 1})
	})
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestRemoteNotFound(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/remote/notfound"
		reg.push(t, repo+":1.0", versioned(t, "1.0", created1))
		r, _ := newTestRemote(t, RemoteOptions{Host: reg.host})
		ctx := context.Background()
		missing := "sha256:" + strings.Repeat("0", 64)

		for _, tc := range []struct {
			name, ref string
			mention   string
		}{
			{"tag", "nope", repo + ":nope"},
			{"digest", missing, repo + "@" + missing},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := r.Image(ctx, repo, tc.ref, "")
				if !errors.Is(err, image.ErrNotFound) {
					t.Fatalf("Image(%s) = %v, want ErrNotFound", tc.ref, err)
				}
				if !strings.Contains(err.Error(), tc.mention) {
					t.Errorf("error %q does not name %s", err, tc.mention)
				}
			})
		}
		t.Run("repository", func(t *testing.T) {
			_, err := r.Tags(ctx, reg.host+"/remote/no-such-repo")
			if !errors.Is(err, image.ErrNotFound) {
				t.Fatalf("Tags = %v, want ErrNotFound", err)
			}
			if want := "listing tags of " + reg.host + "/remote/no-such-repo: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
		})
		t.Run("config blob", func(t *testing.T) {
			_, err := r.blob(ctx, repo, missing)
			if !errors.Is(err, image.ErrNotFound) {
				t.Fatalf("blob = %v, want ErrNotFound", err)
			}
		})
		t.Run("other registry", func(t *testing.T) {
			_, err := r.Image(ctx, "registry.example.org/x", "1.0", "")
			if err == nil || errors.Is(err, image.ErrNotFound) || !strings.Contains(err.Error(), "not on registry "+reg.host) {
				t.Errorf("Image of another registry's repository = %v", err)
			}
		})
	})
}

// TestRemoteTags lists a repository of 300 tags. distribution 2.8
// (Debian's docker-registry 2.8.2, the real registry) does not page tag
// lists: it ignores n and last, sends no Link header and does not sort, so
// one request brings all 300 whatever the page size. The in-memory
// registry pages (see pageTags): 100 a page is three requests. Paging's
// edge cases are checked in TestRemoteTagsPaged.
func TestRemoteTags(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/remote/many"
		img := testimage.Build(t, testimage.Options{Content: "many"})
		testimage.Push(t, repo+":t000", img)
		want := []string{"t000"}
		pusher, err := remote.NewPusher()
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for i := 1; i < 300; i++ {
			tag := fmt.Sprintf("t%03d", i)
			if err := pusher.Put(ctx, mustRef(t, repo+":"+tag), img); err != nil {
				t.Fatal(err)
			}
			want = append(want, tag)
		}

		for _, pageSize := range []int{100, 0} {
			t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
				r, c := newTestRemote(t, RemoteOptions{Host: reg.host, PageSize: pageSize})
				got, err := r.Tags(ctx, repo)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Tags (-want +got):\n%s", diff)
				}
				pages := 1
				if reg.pages && pageSize > 0 {
					pages = (len(want) + pageSize - 1) / pageSize
				}
				c.expect(t, "tags", map[string]int{"ping https": 1, "ping http": 1, "tags list": pages})
			})
		}
	})
}

// pagingTags serves /v2/ and the tag list of one repository the way the
// distribution spec pages it: at most n tags after last, sorted, and a
// Link header to the next page. With linkOnFullPage, a full page always
// has a Link, even when nothing follows (some registries do this).
func pagingTags(t *testing.T, tags []string, linkOnFullPage bool) string {
	t.Helper()
	srv := httptest.NewServer(pagingHandler(tags, linkOnFullPage))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// pagingHandler serves the tag list of remote/paged, as pagingTags says.
func pagingHandler(tags []string, linkOnFullPage bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v2/":
			return
		case r.URL.Path == "/v2/remote/paged/tags/list":
		default:
			http.NotFound(w, r)
			return
		}
		page := slices.Clone(tags)
		if last := r.URL.Query().Get("last"); last != "" {
			i, _ := slices.BinarySearch(page, last)
			if i < len(page) && page[i] == last {
				i++
			}
			page = page[i:]
		}
		more := false
		if n, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil && n < len(page) {
			page, more = page[:n], true
		} else if err == nil && n == len(page) && linkOnFullPage {
			more = true
		}
		if more && len(page) > 0 {
			w.Header().Set("Link", fmt.Sprintf(`</v2/remote/paged/tags/list?last=%s&n=%d>; rel="next"`, page[len(page)-1], len(page)))
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"name": "remote/paged", "tags": page})
	})
}

// TestRemoteTagsPagedHTTPS: a loopback registry that speaks https (the
// ping finds it so; go-containerregistry would use plain http there) is
// asked over https, every page of its tag list included.
func TestRemoteTagsPagedHTTPS(t *testing.T) {
	t.Parallel()
	var want []string
	for i := range 250 {
		want = append(want, fmt.Sprintf("t%03d", i))
	}
	srv := httptest.NewTLSServer(pagingHandler(want, false))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "https://")
	c := &counter{next: srv.Client().Transport, n: map[string]int{}}
	r := NewRemote(RemoteOptions{Host: host, PageSize: 100, Transport: c, Keychain: anonymous})
	got, err := r.Tags(context.Background(), host+"/remote/paged")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tags (-want +got):\n%s", diff)
	}
	sent := slices.Clone(c.log)
	c.expect(t, "tags over https", map[string]int{"ping https": 1, "tags list": 3})
	for _, l := range sent {
		if !strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(l, "GET "), "HEAD "), "https://") {
			t.Errorf("sent over plain http: %s", l)
		}
	}
}

func TestRemoteTagsPaged(t *testing.T) {
	t.Parallel()
	var want []string
	for i := range 300 {
		want = append(want, fmt.Sprintf("t%03d", i))
	}
	for _, tc := range []struct {
		name           string
		linkOnFullPage bool
		pageSize       int
		requests       int
	}{
		{"by 100", false, 100, 3},
		{"by 100, Link on the last full page", true, 100, 4},
		{"by 250", false, 250, 2},
		{"by 300", false, 300, 1},
		{"default", false, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			host := pagingTags(t, want, tc.linkOnFullPage)
			r, c := newTestRemote(t, RemoteOptions{Host: host, PageSize: tc.pageSize})
			got, err := r.Tags(context.Background(), host+"/remote/paged")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Tags (-want +got):\n%s", diff)
			}
			c.expect(t, "tags", map[string]int{"ping https": 1, "ping http": 1, "tags list": tc.requests})
		})
	}
}

func TestRemoteMirror(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		p := reg.push(t, reg.host+"/remote/mirrored:1.0", versioned(t, "1.0", created1))
		r, c := newTestRemote(t, RemoteOptions{Host: "registry.example.org", Mirror: reg.host})
		ctx := context.Background()
		img, err := r.Image(ctx, "registry.example.org/remote/mirrored", "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		if img.Repository != "registry.example.org/remote/mirrored" || img.Digest != p.digest {
			t.Errorf("Image = %s@%s, want registry.example.org/remote/mirrored@%s", img.Repository, img.Digest, p.digest)
		}
		tags, err := r.Tags(ctx, "registry.example.org/remote/mirrored")
		if err != nil || len(tags) != 1 || tags[0] != "1.0" {
			t.Errorf("Tags = %v, %v", tags, err)
		}
		c.mu.Lock()
		for _, l := range c.log {
			if !strings.Contains(l, "://"+reg.host+"/") {
				t.Errorf("request not to the mirror: %s", l)
			}
		}
		c.mu.Unlock()

		_, err = r.Image(ctx, "registry.example.org/remote/mirrored", "2.0", "")
		if !errors.Is(err, image.ErrNotFound) {
			t.Fatalf("missing tag: %v, want ErrNotFound", err)
		}
		if want := "registry.example.org/remote/mirrored:2.0 (mirror " + reg.host + ")"; !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	})
}

// TestRemoteAuth reads from the registry that wants basic auth, with the
// credentials in a Docker config file, and checks that the password shows
// in no error and no log.
func TestRemoteAuth(t *testing.T) {
	onRegistriesSerial(t, basicRegistry, func(t *testing.T, reg *testRegistry) {
		user, password := reg.user, reg.password
		repo := reg.host + "/remote/auth"
		basic := &authn.Basic{Username: user, Password: password}
		img := versioned(t, "1.0", created1)
		d := testimage.Push(t, repo+":1.0", img, basic)

		// go-containerregistry's logs, all of them, with request dumps.
		var logged syncBuffer
		for _, l := range []**log.Logger{&logs.Warn, &logs.Progress, &logs.Debug} {
			old := *l
			*l = log.New(&logged, "", 0)
			t.Cleanup(func() { *l = old })
		}
		secrets := []string{password, base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
		noSecret := func(what, s string) {
			t.Helper()
			for _, secret := range secrets {
				if strings.Contains(s, secret) {
					t.Errorf("%s contains the password:\n%s", what, s)
				}
			}
		}

		dir := t.TempDir()
		conf := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, reg.host, secrets[1])
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", dir)
		ctx := context.Background()

		c := newCounter(t)
		r := NewRemote(RemoteOptions{Host: reg.host, Transport: c}) // authn.DefaultKeychain
		tags, err := r.Tags(ctx, repo)
		if err != nil || len(tags) != 1 || tags[0] != "1.0" {
			t.Errorf("Tags = %v, %v", tags, err)
		}
		got, err := r.Image(ctx, repo, "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest != d.DigestStr() || !got.Created.Equal(created1) {
			t.Errorf("Image = %+v, want digest %s", got, d.DigestStr())
		}
		// Basic auth: no token requests; the credentials go with every request.
		c.expect(t, "authenticated", map[string]int{"ping https": 1, "ping http": 1, "tags list": 1, "manifest GET": 1, "blob GET": 1})

		// Anonymous: a Docker config without credentials.
		t.Setenv("DOCKER_CONFIG", t.TempDir())
		anon := NewRemote(RemoteOptions{Host: reg.host, Transport: c})
		_, err = anon.Tags(ctx, repo)
		if err == nil {
			t.Fatal("anonymous Tags succeeded")
		}
		if errors.Is(err, image.ErrNotFound) || !strings.Contains(err.Error(), "listing tags of "+repo) {
			t.Errorf("anonymous Tags: %v", err)
		}
		noSecret("anonymous Tags error", err.Error())
		_, err = anon.Image(ctx, repo, "1.0", "")
		if err == nil {
			t.Fatal("anonymous Image succeeded")
		}
		noSecret("anonymous Image error", err.Error())
		t.Logf("anonymous: %v", err)

		// Wrong credentials fail the same way, and do not show either.
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, reg.host,
			base64.StdEncoding.EncodeToString([]byte(user+":wrong-"+password)))), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", dir)
		_, err = NewRemote(RemoteOptions{Host: reg.host, Transport: c}).Image(ctx, repo, "1.0", "")
		if err == nil {
			t.Fatal("Image with a wrong password succeeded")
		}
		noSecret("wrong-password error", err.Error())

		if logged.Len() == 0 {
			t.Error("nothing logged: the log check checked nothing")
		}
		noSecret("go-containerregistry's log", logged.String())
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// inProcess serves go-containerregistry's in-memory registry through
// wrap, for edge cases the real registry cannot be made to show.
func inProcess(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	h := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(wrap(h))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestRemoteRetryAfter: a 429 or 503 with Retry-After is waited out and
// retried; a wait longer than a minute is not waited for.
func TestRemoteRetryAfter(t *testing.T) {
	t.Parallel()
	var refuse atomic.Int32 // manifest requests left to refuse
	var status atomic.Int32
	var after atomic.Value
	host := inProcess(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet && refuse.Add(-1) >= 0 {
				w.Header().Set("Retry-After", after.Load().(string))
				w.WriteHeader(int(status.Load()))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	repo := host + "/remote/retry"
	p := push(t, repo+":1.0", versioned(t, "1.0", created1))
	ctx := context.Background()

	for _, tc := range []struct {
		name   string
		status int
		after  func() string
		wait   time.Duration
	}{
		{"429 seconds", http.StatusTooManyRequests, func() string { return "1" }, time.Second},
		{"503 date", http.StatusServiceUnavailable, func() string {
			// Whole seconds: 1 to 2s from now.
			return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
		}, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status.Store(int32(tc.status))
			after.Store(tc.after())
			refuse.Store(1)
			r, c := newTestRemote(t, RemoteOptions{Host: host})
			start := time.Now()
			got, err := r.Image(ctx, repo, "1.0", "")
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < tc.wait {
				t.Errorf("took %v, want at least the %v Retry-After asked for", d, tc.wait)
			}
			if got.Digest != p.digest {
				t.Errorf("digest %s, want %s", got.Digest, p.digest)
			}
			// The in-process server is plain http on 127.0.0.1 too.
			c.expect(t, "retried", map[string]int{"ping https": 1, "ping http": 1, "manifest GET": 2, "blob GET": 1})
		})
	}

	t.Run("too long", func(t *testing.T) {
		status.Store(http.StatusTooManyRequests)
		after.Store("3600")
		refuse.Store(1)
		r, c := newTestRemote(t, RemoteOptions{Host: host})
		start := time.Now()
		_, err := r.Image(ctx, repo, "1.0", "")
		if err == nil || !strings.Contains(err.Error(), "429") {
			t.Errorf("Image = %v, want the 429", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v: waited for an hour's Retry-After?", d)
		}
		c.expect(t, "not retried", map[string]int{"ping https": 1, "ping http": 1, "manifest GET": 1})
	})
}

// TestRemoteConcurrency checks the bound on requests in flight.
func TestRemoteConcurrency(t *testing.T) {
	t.Parallel()
	var inFlight, most atomic.Int32
	host := inProcess(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			if r.URL.Path != "/v2/" {
				time.Sleep(50 * time.Millisecond)
			}
			h.ServeHTTP(w, r)
		})
	})
	repo := host + "/remote/concurrency"
	push(t, repo+":1.0", versioned(t, "1.0", created1))
	most.Store(0)

	r, c := newTestRemote(t, RemoteOptions{Host: host, Concurrency: 2})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = r.Image(ctx, repo, "1.0", "") })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d requests in flight, want 2 (%s)", m, c)
	}
}

// TestRemoteTimeout: a registry that does not answer fails the request
// after Timeout.
func TestRemoteTimeout(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	host := inProcess(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") {
				select {
				case <-stop:
				case <-r.Context().Done():
				}
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	t.Cleanup(func() { close(stop) })
	r, c := newTestRemote(t, RemoteOptions{Host: host, Timeout: time.Second})
	start := time.Now()
	_, err := r.Image(context.Background(), host+"/remote/slow", "1.0", "")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Image = %v, want a deadline exceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	// A timeout is not retried: the registry may be slow, not flaky.
	c.expect(t, "timed out", map[string]int{"ping https": 1, "ping http": 1, "manifest GET": 1})
}

func TestNewRemoteBadHost(t *testing.T) {
	t.Parallel()
	r := NewRemote(RemoteOptions{Host: "Bad Host!"})
	if _, err := r.Tags(context.Background(), "x/y"); err == nil || !strings.Contains(err.Error(), "Bad Host!") {
		t.Errorf("Tags on a bad host = %v", err)
	}
	if _, err := r.Image(context.Background(), "x/y", "1", ""); err == nil {
		t.Error("Image on a bad host succeeded")
	}
}

// dropDigest hides Docker-Content-Digest from HEAD answers, as some
// proxies do.
type dropDigest struct{ http.ResponseWriter }

func (d dropDigest) WriteHeader(code int) {
	d.Header().Del("Docker-Content-Digest")
	d.ResponseWriter.WriteHeader(code)
}

// TestRemoteHeadWithoutDigest: a HEAD that does not say the digest costs
// a GET, not a failure.
func TestRemoteHeadWithoutDigest(t *testing.T) {
	t.Parallel()
	host := inProcess(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				w = dropDigest{w}
			}
			h.ServeHTTP(w, r)
		})
	})
	repo := host + "/remote/nodigest"
	p := push(t, repo+":1.0", versioned(t, "1.0", created1))
	cache := NewCache(t.TempDir())
	ctx := context.Background()
	cold, _ := newTestRemote(t, RemoteOptions{Host: host, Cache: cache})
	if _, err := cold.Image(ctx, repo, "1.0", ""); err != nil {
		t.Fatal(err)
	}
	warm, c := newTestRemote(t, RemoteOptions{Host: host, Cache: cache})
	got, err := warm.Image(ctx, repo, "1.0", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != p.digest {
		t.Errorf("digest %s, want %s", got.Digest, p.digest)
	}
	c.expect(t, "warm, HEAD without digest", map[string]int{"ping https": 1, "ping http": 1, "manifest HEAD": 1, "manifest GET": 1})
}
