package published

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

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
	atomicfile.Write(c.path(trust, repo, digest), []byte(sigDigest+"\n"), atomicfile.Options{Force: true})
}
