package registry

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/pin-tool/pin/internal/image"
)

// TestRecentIsBounded: the memory of described digests holds what was
// stored until it has recentDigests, then starts again empty; it never
// holds more.
func TestRecentIsBounded(t *testing.T) {
	c := recent[describedKey, image.Image]{max: recentDigests}
	key := func(i int) describedKey { return describedKey{"r.example/x", fmt.Sprintf("sha256:%064d", i), ""} }
	for i := range recentDigests {
		c.store(key(i), image.Image{Digest: key(i).digest})
	}
	for i := range recentDigests {
		if img, ok := c.load(key(i)); !ok || img.Digest != key(i).digest {
			t.Fatalf("digest %d forgotten while there was room", i)
		}
	}
	c.store(key(recentDigests), image.Image{Digest: key(recentDigests).digest})
	if _, ok := c.load(key(0)); ok {
		t.Error("full, and the oldest is still held")
	}
	if _, ok := c.load(key(recentDigests)); !ok {
		t.Error("the digest stored when full is not held")
	}
	for i := range 3 * recentDigests {
		c.store(key(i), image.Image{})
		if len(c.m) > recentDigests {
			t.Fatalf("%d images held, at most %d", len(c.m), recentDigests)
		}
	}
}

// TestRepositoriesAreBounded: a Remote remembers at most
// recentRepositories repository names, and go-containerregistry's
// per-repository state with them: when full, the memo starts again empty
// with a new Puller, and reading goes on as before.
func TestRepositoriesAreBounded(t *testing.T) {
	t.Parallel()
	host := inProcess(t, func(h http.Handler) http.Handler { return h })
	repo := host + "/bounded/app"
	p := push(t, repo+":1.0", versioned(t, "1.0", created1))
	r, _ := newTestRemote(t, RemoteOptions{Host: host})
	ctx := context.Background()
	read := func(when string) {
		t.Helper()
		tags, err := r.Tags(ctx, repo)
		if err != nil || !slices.Equal(tags, []string{"1.0"}) {
			t.Fatalf("%s: tags %v, %v", when, tags, err)
		}
		img, err := r.Image(ctx, repo, "1.0", "")
		if err != nil || img.Digest != p.digest {
			t.Fatalf("%s: image %s, %v; want %s", when, img.Digest, err, p.digest)
		}
	}
	read("first")
	first := r.puller()
	for i := range recentRepositories - 1 {
		if _, err := r.repository(fmt.Sprintf("%s/bounded/other%d", host, i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.named.names.m); n != recentRepositories {
		t.Fatalf("%d repositories remembered, want %d", n, recentRepositories)
	}
	if r.puller() != first {
		t.Fatal("a new Puller while there was room")
	}
	read("after the memo filled") // still remembered: no new Puller
	if _, err := r.repository(host + "/bounded/one-more"); err != nil {
		t.Fatal(err)
	}
	if n := len(r.named.names.m); n != 1 {
		t.Fatalf("full, then one more: %d repositories remembered, want 1", n)
	}
	if r.puller() == first || r.puller() == nil {
		t.Fatal("the memo started again without a new Puller")
	}
	read("after the memo started again")
	for i := range 3 * recentRepositories {
		if _, err := r.repository(fmt.Sprintf("%s/bounded/more%d", host, i)); err != nil {
			t.Fatal(err)
		}
		if n := len(r.named.names.m); n > recentRepositories {
			t.Fatalf("%d repositories remembered, at most %d", n, recentRepositories)
		}
	}
}
