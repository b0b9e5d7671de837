package admit

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// Certificates serves the webhook's certificate from two PEM files, read
// again whenever either file's modification time changes: rotating the
// certificate is replacing the files (a Secret mounted as a volume is
// updated in place by the kubelet), with no restart. A pair that does not
// load keeps the previous one in service.
type Certificates struct {
	CertFile, KeyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	modCert time.Time
	modKey  time.Time
}

// Load reads the pair once; an error says which file is wrong.
func (c *Certificates) Load() error {
	_, err := c.current()
	return err
}

// GetCertificate is tls.Config.GetCertificate.
func (c *Certificates) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.current()
}

func (c *Certificates) current() (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci, err1 := os.Stat(c.CertFile)
	ki, err2 := os.Stat(c.KeyFile)
	if err1 == nil && err2 == nil && c.cert != nil && ci.ModTime().Equal(c.modCert) && ki.ModTime().Equal(c.modKey) {
		return c.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		if c.cert != nil {
			return c.cert, nil
		}
		return nil, fmt.Errorf("loading the webhook certificate %s and key %s: %w", c.CertFile, c.KeyFile, err)
	}
	c.cert = &cert
	if err1 == nil && err2 == nil {
		c.modCert, c.modKey = ci.ModTime(), ki.ModTime()
	}
	return c.cert, nil
}

// TLSConfig is a server configuration serving c (TLS 1.2 at least, as the
// API server speaks).
func (c *Certificates) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}
