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
//	blobs.pack           manifests and configs, a record each (cache_pack.go)
//	hints                "<repository> <tag> <digest>" lines (cache_hints.go)
//	seen                 "<repository> <tag> <digest> <unix seconds>" lines (cache_seen.go)
//	blobs/sha256/<hex>   a manifest or config an older pin wrote: still read
//
// Content is immutable and verified against its digest on every read: an
// entry that does not match (cut short by a crash, tampered with) is never
// used; it is fetched again and appended, and the later copy wins. A tag
// hint is never trusted: it only tells a Remote that a HEAD (to learn the
// tag's digest now) will probably find the manifest cached, so that it
// HEADs instead of GETting. Tag lists are not cached.
//
// Both files are only appended to, a record or a line with one write, and
// read once per process: no file is created per blob or per hint. Creating
// files was most of a cold run's CPU (on the project's ext4 disk,
// about a millisecond of system time per file under load, 2,500 files for
// 1,100 modules). The cache is best effort: a failure to write it is not
// an error, only a fetch again next time. Nothing is ever removed from it;
// removing the folder empties it.
//
// A nil *Cache is a cache that holds nothing. A Cache is safe for
// concurrent use, by several processes too.
type Cache struct {
	dir  string
	made sync.Map // folders this Cache made or found, so not made again

	packOnce sync.Once
	packIdx  *packIndex

	hintsOnce sync.Once
	hintsMu   sync.Mutex
	hints     map[hintKey]string // read from the hints file, and remembered since

	hintsW    sync.Mutex // held while appending to hintsFile
	hintsFile appender

	seen sightings // cache_seen.go
}

// appender is a file the cache appends to, opened on first use and kept
// open (not opened and closed for every record or line), and opened again
// when the file it holds is no longer the one at its path: the cache
// folder was cleaned, or the hints compacted, under a long-running
// process, and appending to a removed file would keep nothing. Its user
// serialises calls.
type appender struct {
	path string
	f    *os.File
}

// file returns the open file, nil when it cannot be opened; replaced is
// true when it is another file than the one held before.
func (a *appender) file(c *Cache) (f *os.File, replaced bool) {
	if a.f != nil {
		held, err1 := a.f.Stat()
		named, err2 := os.Stat(a.path)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return a.f, false
		}
		a.f.Close()
		a.f, replaced = nil, true
		c.made.Delete(filepath.Dir(a.path))
	}
	dir := filepath.Dir(a.path)
	if !c.mkdir(dir) {
		return nil, replaced
	}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		// The folder went (someone cleaned the cache): make it again.
		c.made.Delete(dir)
		if !c.mkdir(dir) {
			return nil, replaced
		}
		if f, err = os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err != nil {
			return nil, replaced
		}
	}
	a.f = f
	return f, replaced
}

// NewCache returns the cache kept in dir; dir is created when first written.
func NewCache(dir string) *Cache {
	c := &Cache{dir: dir}
	c.hintsFile.path = c.hintsPath()
	return c
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

// get returns the content of digest, verified: from the pack, else from
// a file an older pin wrote. Content that does not match its digest is
// never returned; put appends a good copy, which then wins.
func (c *Cache) get(digest string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	k, ok := keyOf(digest)
	if !ok {
		return nil, false
	}
	if b, ok := c.pack().read(k); ok {
		if verify(b, digest) == nil {
			return b, true
		}
		c.pack().spoilt(k)
	}
	p, _ := c.blobPath(digest)
	b, err := readFile(p)
	if err != nil || verify(b, digest) != nil {
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
// digest, at the end of the pack.
func (c *Cache) putVerified(digest string, b []byte) {
	if c == nil {
		return
	}
	k, ok := keyOf(digest)
	if !ok {
		return
	}
	c.pack().append(c, digest, k, b)
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
