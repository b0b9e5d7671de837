package registry

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCacheCorrupt: a cache entry that does not match its digest is
// deleted and fetched again, never used.
func TestCacheCorrupt(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/cache/corrupt"
		p := reg.push(t, repo+":1.0", versioned(t, "1.0", created1))
		cache := NewCache(t.TempDir())
		ctx := context.Background()
		r, c := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		want, err := r.Image(ctx, repo, "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		c.take()

		corrupt := func() {
			t.Helper()
			tamper(t, cache, p.digest)
			tamper(t, cache, p.config)
		}
		intact := func() {
			t.Helper()
			for _, d := range []string{p.digest, p.config} {
				if _, ok := cache.get(d); !ok {
					t.Errorf("cache entry %s not restored", d)
				}
			}
		}

		corrupt()
		got, err := r.Image(ctx, repo, "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after corruption, by tag (-want +got):\n%s", diff)
		}
		// The hint made it HEAD; the cached manifest is corrupt, so it GETs.
		c.expect(t, "corrupt, by tag", map[string]int{"manifest HEAD": 1, "manifest GET": 1, "blob GET": 1})
		intact()

		// By digest, the same Remote remembers what the digest described
		// in this run (verified then) and reads nothing; a later run's
		// Remote reads the cache, finds it corrupt, and fetches.
		corrupt()
		want.Tag = ""
		got, err = r.Image(ctx, repo, p.digest, "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("remembered, by digest (-want +got):\n%s", diff)
		}
		c.expect(t, "remembered, by digest", map[string]int{})
		r2, c2 := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		got, err = r2.Image(ctx, repo, p.digest, "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after corruption, by digest (-want +got):\n%s", diff)
		}
		c2.expect(t, "corrupt, by digest", map[string]int{"ping http": 1, "ping https": 1, "manifest GET": 1, "blob GET": 1})
		intact()
	})
}

func TestCache(t *testing.T) {
	t.Parallel()
	content := []byte(`{"schemaVersion":2}`)
	d := digestOf(content)
	other := "sha256:" + strings.Repeat("1", 64)

	t.Run("nil holds nothing", func(t *testing.T) {
		var c *Cache
		c.put(d, content)
		c.remember("r.example/x", "1", d)
		c.forget("r.example/x", "1")
		if _, ok := c.get(d); ok {
			t.Error("nil cache returned content")
		}
		if _, ok := c.hint("r.example/x", "1"); ok {
			t.Error("nil cache returned a hint")
		}
	})

	t.Run("content", func(t *testing.T) {
		c := NewCache(t.TempDir())
		if _, ok := c.get(d); ok {
			t.Fatal("empty cache returned content")
		}
		c.put(other, content) // not its digest: refused
		if _, ok := c.get(other); ok {
			t.Error("content stored under a wrong digest")
		}
		c.put(d, content)
		if b, ok := c.get(d); !ok || string(b) != string(content) {
			t.Errorf("get = %q, %v", b, ok)
		}
		for _, bad := range []string{"", "sha256:", "sha256:../../x", "sha512:" + strings.Repeat("a", 128), "sha256:" + strings.Repeat("A", 64)} {
			c.put(bad, content)
			if _, ok := c.get(bad); ok {
				t.Errorf("get(%q) found content", bad)
			}
		}
		assertNoTemp(t, c.dir)
	})

	// A blob an older pin wrote as a file is read; one cut short or
	// tampered with is never believed, and put stores a good copy.
	t.Run("files of an older pin", func(t *testing.T) {
		for _, bad := range [][]byte{content, content[:7], {}, []byte(`{"schemaVersion":3}`)} {
			c := NewCache(t.TempDir())
			p, _ := c.blobPath(d)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			b, ok := c.get(d)
			if string(bad) == string(content) {
				if !ok || string(b) != string(content) {
					t.Fatalf("a good file of an older pin: get = %q, %v", b, ok)
				}
				continue
			}
			if ok {
				t.Fatalf("%q believed as %s: %q", bad, d, b)
			}
			c.put(d, content)
			if b, ok := c.get(d); !ok || string(b) != string(content) {
				t.Fatalf("after put over %q: get = %q, %v", bad, b, ok)
			}
		}
	})

	// A record tampered with, or cut short by a crash (at the pack's end,
	// or with another process's record run into it), is never believed,
	// by this process or a later one; put appends a good copy, which wins.
	t.Run("torn and tampered records", func(t *testing.T) {
		dir := t.TempDir()
		c := NewCache(dir)
		c.put(d, content)
		tamper(t, c, d)
		if b, ok := c.get(d); ok {
			t.Fatalf("tampered record believed: %q", b)
		}
		c.put(d, content)
		if b, ok := c.get(d); !ok || string(b) != string(content) {
			t.Fatalf("after put: %q, %v", b, ok)
		}

		// A crash mid-write leaves a header and part of the content; the
		// next run appends after it.
		pack := filepath.Join(dir, packName)
		f, err := os.OpenFile(pack, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		second := []byte(`{"schemaVersion":2,"n":2}`)
		fmt.Fprintf(f, "blob %s %d\n%s", digestOf(second), len(second), second[:9])
		f.Close()
		later := func() *Cache { // another process: its own index
			packIndexes.Delete(pack)
			return NewCache(dir)
		}
		if b, ok := later().get(digestOf(second)); ok {
			t.Fatalf("a record cut short believed: %q", b)
		}
		c2 := later()
		c2.put(digestOf(second), second)
		if b, ok := c2.get(digestOf(second)); !ok || string(b) != string(second) {
			t.Fatalf("after put: %q, %v", b, ok)
		}
		// A later process reads the torn record and the one run into it
		// as garbage, and still finds the first blob; the second is
		// fetched and appended once more, and then found.
		c3 := later()
		if b, ok := c3.get(d); !ok || string(b) != string(content) {
			t.Errorf("first blob after the torn record: %q, %v", b, ok)
		}
		if b, ok := c3.get(digestOf(second)); ok && string(b) != string(second) {
			t.Errorf("second blob read as %q", b)
		} else if !ok {
			c3.put(digestOf(second), second)
			if _, ok := later().get(digestOf(second)); !ok {
				t.Error("second blob not found after it was appended again")
			}
		}
	})

	t.Run("hints", func(t *testing.T) {
		c := NewCache(t.TempDir())
		repo := "127.0.0.1:5000/forge/forgejo"
		if _, ok := c.hint(repo, "latest"); ok {
			t.Fatal("empty cache returned a hint")
		}
		c.remember(repo, "latest", d)
		if h, ok := c.hint(repo, "latest"); !ok || h != d {
			t.Errorf("hint = %q, %v; want %s", h, ok, d)
		}
		// A repository below another, and a tag named like the folder.
		c.remember(repo+"/sub", "_tags", other)
		if h, ok := c.hint(repo+"/sub", "_tags"); !ok || h != other {
			t.Errorf("nested hint = %q, %v", h, ok)
		}
		if h, _ := c.hint(repo, "latest"); h != d {
			t.Errorf("hint changed to %q by a nested repository", h)
		}
		c.remember(repo, "latest", other)
		if h, _ := c.hint(repo, "latest"); h != other {
			t.Errorf("moved hint = %q, want %s", h, other)
		}
		c.forget(repo, "latest")
		if _, ok := c.hint(repo, "latest"); ok {
			t.Error("forgotten hint returned")
		}
		for _, bad := range [][2]string{{repo, ""}, {repo, "../x"}, {repo, "a b"}, {"nohost", "1"}, {"h/../x", "1"}, {"h//x", "1"}, {"h/x y", "1"}} {
			c.remember(bad[0], bad[1], d)
			if h, ok := c.hint(bad[0], bad[1]); ok {
				t.Errorf("hint(%q, %q) = %s, want refused", bad[0], bad[1], h)
			}
		}
		// A new Cache reads what this one wrote: the hints file, a line
		// per change, the last line winning.
		b, err := os.ReadFile(filepath.Join(c.dir, "hints"))
		if err != nil {
			t.Fatal(err)
		}
		want := repo + " latest " + d + "\n" + repo + "/sub _tags " + other + "\n" + repo + " latest " + other + "\n" + repo + " latest -\n"
		if string(b) != want {
			t.Errorf("hints file:\n%s\nwant:\n%s", b, want)
		}
		c2 := NewCache(c.dir)
		if _, ok := c2.hint(repo, "latest"); ok {
			t.Error("a forgotten hint came back in a new Cache")
		}
		if h, ok := c2.hint(repo+"/sub", "_tags"); !ok || h != other {
			t.Errorf("new Cache: nested hint = %q, %v", h, ok)
		}
		assertNoTemp(t, c.dir)
	})

	t.Run("garbage hints", func(t *testing.T) {
		dir := t.TempDir()
		repo := "r.example/x"
		lines := []string{
			repo + " 1 " + d,                    // good
			repo + " 2 not-a-digest",            // bad digest
			repo + " 3 " + d + " extra",         // four fields
			repo + " 4 sha256:" + d[7:20],       // cut short by a crash
			repo + " 5 " + d + repo + " 6 " + d, // two lines run together
			"nohost 7 " + d,                     // no repository path
			repo + " ../8 " + d,                 // a tag with a separator
		}
		if err := os.WriteFile(filepath.Join(dir, "hints"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		c := NewCache(dir)
		if h, ok := c.hint(repo, "1"); !ok || h != d {
			t.Errorf("good line: %q, %v", h, ok)
		}
		for _, tag := range []string{"2", "3", "4", "5", "6", "../8"} {
			if h, ok := c.hint(repo, tag); ok {
				t.Errorf("garbage line for tag %s read as %s", tag, h)
			}
		}
		if h, ok := c.hint("nohost", "7"); ok {
			t.Errorf("garbage line read as %s", h)
		}
	})

	t.Run("hints compacted", func(t *testing.T) {
		dir := t.TempDir()
		c := NewCache(dir)
		for i := range 3 * compactHintsAbove {
			c.remember("r.example/x", "t"+strconv.Itoa(i%10), digestOf([]byte{byte(i)}))
		}
		NewCache(dir).hint("r.example/x", "t0") // reads, so compacts
		b, err := os.ReadFile(filepath.Join(dir, "hints"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n != 10 {
			t.Errorf("%d lines after compaction, want 10", n)
		}
		c3 := NewCache(dir)
		for i := 3*compactHintsAbove - 10; i < 3*compactHintsAbove; i++ {
			if h, _ := c3.hint("r.example/x", "t"+strconv.Itoa(i%10)); h != digestOf([]byte{byte(i)}) {
				t.Errorf("t%d: %s after compaction, want the last remembered", i%10, h)
			}
		}
		assertNoTemp(t, dir)
	})

	t.Run("concurrent writers", func(t *testing.T) {
		dir := t.TempDir()
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				c := NewCache(dir) // as if another process
				c.put(d, content)
				c.remember("r.example/x", "1", d)
				if b, ok := c.get(d); ok && string(b) != string(content) {
					t.Errorf("read a partial entry %q", b)
				}
			})
		}
		wg.Wait()
		if _, ok := NewCache(dir).get(d); !ok {
			t.Error("entry missing")
		}
		assertNoTemp(t, dir)
	})
}

// tamper overwrites the content of digest's record in c's pack, keeping
// its length.
func tamper(t *testing.T, c *Cache, digest string) {
	t.Helper()
	k, _ := keyOf(digest)
	p := c.pack()
	p.mu.Lock()
	s, ok := p.spans[k]
	p.mu.Unlock()
	if !ok {
		t.Fatalf("%s is not in the pack", digest)
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte("x"), int(s.n)), s.off); err != nil {
		t.Fatal(err)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/somewhere/cache")
	got, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	want := "/somewhere/cache/pin"
	if runtime.GOOS != "linux" {
		base, _ := os.UserCacheDir()
		want = filepath.Join(base, "pin")
	}
	if got != want {
		t.Errorf("DefaultCacheDir = %s, want %s", got, want)
	}
}

// TestCacheFolderRemovedMidRun: a Cache remembers the folders it made; when
// one goes while it runs (the cache cleaned by hand), the next write makes
// it again instead of failing for the rest of the run.
func TestCacheFolderRemovedMidRun(t *testing.T) {
	dir := t.TempDir()
	c := NewCache(dir)
	first := []byte(`{"n":1}`)
	second := []byte(`{"n":2}`)
	c.put(digestOf(first), first)
	c.remember("r.example/x", "1", digestOf(first))
	if b, ok := c.get(digestOf(first)); !ok || string(b) != string(first) { // the pack is open for reading
		t.Fatal("the blob just written is missing")
	}
	if err := os.RemoveAll(dir); err != nil { // the blobs and the hints
		t.Fatal(err)
	}
	c.put(digestOf(second), second)
	c.put(digestOf(first), first) // written before, but to the file that went
	c.remember("r.example/x", "2", digestOf(second))
	if b, ok := NewCache(dir).get(digestOf(first)); !ok || string(b) != string(first) {
		t.Error("a blob written before the folder went, and again after, is missing")
	}
	if b, ok := NewCache(dir).get(digestOf(second)); !ok || string(b) != string(second) {
		t.Error("the blob written after the folder went is missing")
	}
	// The Cache that wrote it reads it back too: its open pack (the
	// removed file) and its index of it were let go.
	if b, ok := c.get(digestOf(second)); !ok || string(b) != string(second) {
		t.Error("the Cache that wrote the blob after the folder went does not read it back")
	}
	if d, ok := NewCache(dir).hint("r.example/x", "2"); !ok || d != digestOf(second) {
		t.Error("the hint written after the folder went is missing")
	}
	assertNoTemp(t, dir)
	// The mode is the one the cache always wrote, less the umask.
	p := filepath.Join(dir, packName)
	if fi, err := os.Stat(p); err != nil {
		t.Error(err)
	} else if m := fi.Mode().Perm(); m&^0o644 != 0 || m&0o600 != 0o600 {
		t.Errorf("mode %v", m)
	}
}

// TestRemoteRemembersDigests: with a cache, a digest described once in a
// run is not read again (not even from the cache), and what is returned
// shares nothing with what is remembered; without a cache, every call
// asks the registry.
func TestRemoteRemembersDigests(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repo := reg.host + "/cache/remember"
		p := reg.push(t, repo+":1.0", versioned(t, "1.0", created1))
		ctx := context.Background()
		cache := NewCache(t.TempDir())
		r, c := newTestRemote(t, RemoteOptions{Host: reg.host, Cache: cache})
		byTag, err := r.Image(ctx, repo, "1.0", "")
		if err != nil {
			t.Fatal(err)
		}
		c.take()
		// The cache's files go: only the memory of this run is left.
		if err := os.RemoveAll(cache.dir); err != nil {
			t.Fatal(err)
		}
		byDigest, err := r.Image(ctx, repo, p.digest, "")
		if err != nil {
			t.Fatal(err)
		}
		c.expect(t, "by digest after by tag", map[string]int{})
		want := byTag
		want.Tag = ""
		if diff := cmp.Diff(want, byDigest); diff != "" {
			t.Errorf("by digest (-want +got):\n%s", diff)
		}
		byDigest.Labels["org.opencontainers.image.version"] = "changed by a caller"
		again, err := r.Image(ctx, repo, p.digest, "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("a caller's change reached the memory (-want +got):\n%s", diff)
		}

		r2, c2 := newTestRemote(t, RemoteOptions{Host: reg.host})
		for range 2 {
			if _, err := r2.Image(ctx, repo, p.digest, ""); err != nil {
				t.Fatal(err)
			}
		}
		c2.expect(t, "without a cache", map[string]int{"ping http": 1, "ping https": 1, "manifest GET": 2, "blob GET": 2})
	})
}
