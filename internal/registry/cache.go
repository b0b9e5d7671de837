package registry

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// Cache keeps registry content on disk between runs: manifests and configs
// by digest, and the digest each tag named when last seen.
//
// Layout under the cache folder:
//
//	blobs/sha256/<hex>   a manifest or config, by digest
//	hints                "<repository> <tag> <digest>" lines: the hints
//
// Content is immutable and verified against its digest on every read: an
// entry that does not match is never used; it is fetched again and
// replaced. A tag hint is never trusted: it only tells a Remote that a
// HEAD (to learn the tag's digest now) will probably find the manifest
// cached, so that it HEADs instead of GETting. Tag lists are not cached.
//
// A blob is written straight to its final name, created exclusively: a
// file cut short (a crash, or a reader in another process while it is
// written) fails verification on read, as a tampered one does, and is
// replaced by the next fetch (through a temporary file and a rename,
// so that a whole file is never swapped for a partial one). The hints are
// one file that every run appends its new hints to, a line per write, read
// once per Cache (hints.go). The cache is best effort: a failure to write
// it is not an error, only a fetch again next time.
//
// Creating files is most of what the cache costs (issue 17: on the
// project's ext4 disk, half a millisecond of CPU per file created); a cold
// module creates one file per manifest and config, and none for its hint.
//
// A nil *Cache is a cache that holds nothing. A Cache is safe for
// concurrent use, by several processes too.
type Cache struct {
	dir  string
	made sync.Map // folders this Cache made or found, so not made again

	hintsOnce sync.Once
	hintsMu   sync.Mutex
	hints     map[hintKey]string // read from the hints file, and remembered since
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
	if !validDigest(digest) {
		return "", false
	}
	return filepath.Join(c.dir, "blobs", "sha256", digest[len("sha256:"):]), true
}

// get returns the content of digest, verified. A file that does not match
// is left for put to replace: removing it here could remove a file another
// process is still writing.
func (c *Cache) get(digest string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	p, ok := c.blobPath(digest)
	if !ok {
		return nil, false
	}
	b, err := readFile(p)
	if err != nil {
		return nil, false
	}
	if verify(b, digest) != nil {
		return nil, false
	}
	return b, true
}

// put stores b as the content of digest, once it is verified to be.
func (c *Cache) put(digest string, b []byte) {
	if c == nil || verify(b, digest) != nil {
		return
	}
	c.putVerified(digest, b)
}

// putVerified stores b, which the caller verified to be the content of
// digest: created exclusively under its final name, or, when a file is
// there already and does not hold the content (cut short, tampered),
// replaced through a temporary file and a rename.
func (c *Cache) putVerified(digest string, b []byte) {
	if c == nil {
		return
	}
	p, ok := c.blobPath(digest)
	if !ok {
		return
	}
	if !c.mkdir(filepath.Dir(p)) {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder went (someone cleaned the cache): make it again.
		c.made.Delete(filepath.Dir(p))
		if c.mkdir(filepath.Dir(p)) {
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		}
	}
	switch {
	case err == nil:
		_, werr := f.Write(b)
		if cerr := f.Close(); werr != nil || cerr != nil {
			os.Remove(p)
		}
	case errors.Is(err, fs.ErrExist):
		if old, err := readFile(p); err == nil && verify(old, digest) == nil {
			return // immutable: already there
		}
		c.writeAtomic(p, b)
	}
}

// readFile reads a cache file: os.ReadFile less its fstat, for files that
// are small (a manifest, a config, the hints).
func readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, 4096)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// mkdir makes dir once for this Cache; false when it cannot be made.
func (c *Cache) mkdir(dir string) bool {
	if _, ok := c.made.Load(dir); ok {
		return true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false
	}
	c.made.Store(dir, true)
	return true
}

// writeAtomic writes b to path through a temporary file in the same folder
// and a rename, for what replaces a file: a blob that failed verification,
// the hints when they are compacted. Errors are dropped: the cache is best
// effort. No fsync: a torn file after a crash fails verification on read
// and is fetched again.
//
// A folder is made once per Cache, not checked before every write, and the
// temporary file is created with its final mode (0644, less the umask).
func (c *Cache) writeAtomic(path string, b []byte) {
	dir := filepath.Dir(path)
	if !c.mkdir(dir) {
		return
	}
	f, tmp, err := createTemp(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder went (someone cleaned the cache): make it again.
		c.made.Delete(dir)
		if c.mkdir(dir) {
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
