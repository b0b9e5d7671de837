package published

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/atomicfile"
)

// Cache remembers, on disk, which signature verified an observation's
// digest under a trust policy, so that an unchanged observation is not
// verified again from the registry. It lives beside the registry
// client's cache, in DIR/observations (pin's --cache-dir): one small file
// per digest and policy, holding the signature manifest's digest, which
// the registry cache holds by digest. A nil *Cache remembers nothing.
type Cache struct {
	dir string
}

// NewCache keeps its files under dir/observations.
func NewCache(dir string) *Cache {
	return &Cache{dir: filepath.Join(dir, "observations")}
}

func (c *Cache) path(trust, repo, digest string) string {
	sum := sha256.Sum256([]byte(trust + "\n" + repo + "\n" + digest))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:]))
}

func (c *Cache) verified(trust, repo, digest string) (string, bool) {
	if c == nil {
		return "", false
	}
	b, err := os.ReadFile(c.path(trust, repo, digest))
	if err != nil {
		return "", false
	}
	return digestLine(b)
}

// digestLine reads a file remember wrote: one digest.
func digestLine(b []byte) (string, bool) {
	s := strings.TrimSpace(string(b))
	return s, strings.HasPrefix(s, "sha256:")
}

// remember records sigDigest; a cache that cannot be written costs the
// next run a verification, nothing else.
func (c *Cache) remember(trust, repo, digest, sigDigest string) {
	if c == nil || sigDigest == "" {
		return
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	atomicfile.Write(c.path(trust, repo, digest), []byte(sigDigest+"\n"), atomicfile.Options{Owned: func(b []byte) bool {
		_, ok := digestLine(b)
		return ok
	}})
}

// The newest observation read of each host, by where it is published:
// a publication older than one this client verified before is a roll
// back (a stale mirror, a pull-through cache, a replay), refused.

func (c *Cache) newestPath(location, host string) string {
	sum := sha256.Sum256([]byte("newest\n" + location + "\n" + host))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:]))
}

// newest is the read time of the newest observation of host at location
// that this cache saw verified; false when none (or no cache).
func (c *Cache) newest(location, host string) (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	b, err := os.ReadFile(c.newestPath(location, host))
	if err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	return t, err == nil
}

// saw records at as host's newest read time at location, when it is
// newer than last, the one newest found (ok: there was one). Two runs at
// once may each record theirs: the older then stands, and the newer is
// recorded by the next read.
func (c *Cache) saw(location, host string, at, last time.Time, ok bool) {
	if c == nil || ok && !at.After(last) {
		return
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return
	}
	atomicfile.Write(c.newestPath(location, host), []byte(at.UTC().Format(time.RFC3339Nano)+"\n"), atomicfile.Options{Owned: func(b []byte) bool {
		_, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
		return err == nil
	}})
}
