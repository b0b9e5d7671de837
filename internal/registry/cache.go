package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Cache keeps registry content on disk between runs: manifests and configs
// by digest, and the digest each tag named when last seen.
//
// Layout under the cache folder:
//
//	blobs/sha256/<hex>                       a manifest or config, by digest
//	tags/<host>/<repository>/_tags/<tag>     "sha256:<hex>": a hint
//
// Content is immutable and verified against its digest on every read: an
// entry that does not match is deleted and fetched again, never used. A tag
// hint is never trusted: it only tells a Remote that a HEAD (to learn the
// tag's digest now) will probably find the manifest cached, so that it
// HEADs instead of GETting. Tag lists are not cached.
//
// Files are written to a temporary file in the same folder and renamed, so
// that readers, other processes among them, see a whole file or none. The
// cache is best effort: a failure to write it is not an error, only a
// fetch again next time.
//
// A nil *Cache is a cache that holds nothing. A Cache is safe for
// concurrent use, by several processes too.
type Cache struct {
	dir  string
	made sync.Map // folders this Cache made or found, so not made again
}

// NewCache returns the cache kept in dir; dir is created when first written.
func NewCache(dir string) *Cache {
	return &Cache{dir: dir}
}

// DefaultCacheDir is pin's folder in the user cache folder
// ($XDG_CACHE_HOME/pin or ~/.cache/pin on Linux).
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache folder: %w", err)
	}
	return filepath.Join(base, "pin"), nil
}

// blobPath is where content of digest lives; ok is false for a digest that
// is not a well-formed sha256 digest (and so cannot name a file safely).
func (c *Cache) blobPath(digest string) (string, bool) {
	hex, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return "", false
	}
	return filepath.Join(c.dir, "blobs", "sha256", hex), true
}

// get returns the content of digest, verified; a corrupt entry is removed.
func (c *Cache) get(digest string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	p, ok := c.blobPath(digest)
	if !ok {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	if verify(b, digest) != nil {
		os.Remove(p)
		return nil, false
	}
	return b, true
}

// put stores b as the content of digest, once it is verified to be.
func (c *Cache) put(digest string, b []byte) {
	if c == nil || verify(b, digest) != nil {
		return
	}
	p, ok := c.blobPath(digest)
	if !ok {
		return
	}
	if _, err := os.Stat(p); err == nil {
		return // immutable: already there (and verified when read)
	}
	c.writeAtomic(p, b)
}

// hintPath is where the hint for repo:tag lives. repo is a full repository
// name ("127.0.0.1:5000/forge/forgejo"). A repository path component never
// starts with "_", so "_tags" cannot collide with a repository.
func (c *Cache) hintPath(repo, tag string) (string, bool) {
	host, path, ok := strings.Cut(repo, "/")
	if !ok || tag == "" || strings.ContainsAny(tag, `/\`) || strings.HasPrefix(tag, ".") {
		return "", false
	}
	for _, part := range strings.Split(path, "/") {
		if part == "" || part == "." || part == ".." {
			return "", false
		}
	}
	// ":" of a port is not allowed in file names everywhere.
	host = hostInFileName.Replace(host)
	return filepath.Join(c.dir, "tags", host, filepath.FromSlash(path), "_tags", tag), true
}

// hostInFileName makes a registry host a file name; built once (a Replacer
// is safe for concurrent use, and building one per call cost kilobytes).
var hostInFileName = strings.NewReplacer(":", "_", "[", "", "]", "")

// hint returns the digest repo:tag named when last seen.
func (c *Cache) hint(repo, tag string) (string, bool) {
	if c == nil {
		return "", false
	}
	p, ok := c.hintPath(repo, tag)
	if !ok {
		return "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	d := strings.TrimSpace(string(b))
	if _, ok := c.blobPath(d); !ok {
		return "", false
	}
	return d, true
}

// remember records that repo:tag names digest.
func (c *Cache) remember(repo, tag, digest string) {
	if c == nil {
		return
	}
	if old, ok := c.hint(repo, tag); ok && old == digest {
		return
	}
	if p, ok := c.hintPath(repo, tag); ok {
		c.writeAtomic(p, []byte(digest+"\n"))
	}
}

// forget drops the hint for repo:tag (the tag is gone).
func (c *Cache) forget(repo, tag string) {
	if c == nil {
		return
	}
	if p, ok := c.hintPath(repo, tag); ok {
		os.Remove(p)
	}
}

// writeAtomic writes b to path through a temporary file in the same folder
// and a rename. Errors are dropped: the cache is best effort. No fsync: a
// torn file after a crash fails verification on read and is fetched again.
//
// It makes the fewest system calls it can, which were most of a cold run's
// CPU (issue 17): a folder is made once per Cache, not checked before every
// write, and the temporary file is created with its final mode (0644, less
// the umask) rather than changed after.
func (c *Cache) writeAtomic(path string, b []byte) {
	dir := filepath.Dir(path)
	if _, ok := c.made.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return
		}
		c.made.Store(dir, true)
	}
	f, tmp, err := createTemp(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder went (someone cleaned the cache): make it again.
		if os.MkdirAll(dir, 0o755) == nil {
			f, tmp, err = createTemp(dir)
		}
	}
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(tmp, path) != nil {
		os.Remove(tmp)
	}
}

// tmpSeq numbers this process's temporary files; with the process ID it
// names them uniquely among the processes that share a cache.
var tmpSeq atomic.Uint64

// createTemp creates a new file ".tmp-<pid>-<n>" in dir, mode 0644 (less the
// umask). A name left by a killed process of the same ID is skipped.
func createTemp(dir string) (*os.File, string, error) {
	for range 10 {
		name := filepath.Join(dir, ".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(tmpSeq.Add(1), 10))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fs.ErrExist
}
