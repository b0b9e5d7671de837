package registry

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// DefaultCertsDir is where the Docker Engine reads the certificates of
// registries: a folder per registry host, named as in image names
// ("registry.example.org:5000"), holding CA certificates (*.crt) and client
// certificates (*.cert, each with its key *.key of the same name).
const DefaultCertsDir = "/etc/docker/certs.d"

// TLSFiles are a registry's TLS material named in the catalogue, used
// beside what its certs.d folder holds.
type TLSFiles struct {
	// CAFile is a PEM bundle of CA certificates trusted for the registry,
	// beside the system's and certs.d's.
	CAFile string
	// CertFile and KeyFile are a client certificate and its key (PEM),
	// presented to the registry instead of certs.d's.
	CertFile, KeyFile string
}

// TLSKind is a TLS failure pin recognises at a registry.
type TLSKind int

// The TLS failures of a registry that pin names with what to do.
const (
	// TLSUnknownCA: the registry's certificate is signed by no CA pin
	// trusts.
	TLSUnknownCA TLSKind = iota + 1
	// TLSBadServerCert: the registry's certificate expired, or names
	// another host.
	TLSBadServerCert
	// TLSClientCertMissing: the registry asks for a client certificate
	// and none is configured.
	TLSClientCertMissing
	// TLSClientCertRefused: the registry refused the client certificate.
	TLSClientCertRefused
	// TLSClientCertExpired: the configured client certificate is outside
	// its validity; found before any request.
	TLSClientCertExpired
	// TLSFilesBad: the configured files cannot be read or do not match.
	TLSFilesBad
)

// TLSError is a registry's TLS failure, with what to do. It lasts for the
// run: the registry is not asked again.
type TLSError struct {
	Kind TLSKind
	Host string
	Msg  string
	Err  error
}

func (e *TLSError) Error() string {
	if e.Err == nil {
		return "registry " + e.Host + ": " + e.Msg
	}
	return "registry " + e.Host + ": " + e.Msg + ": " + e.Err.Error()
}

func (e *TLSError) Unwrap() error { return e.Err }

// tlsSetup is the TLS material for one registry host, and where it came
// from, for errors.
type tlsSetup struct {
	cfg        *tls.Config // nil: none configured, the defaults apply
	from       []string    // files and folders read
	clientCert bool
}

// loadTLS reads files and certsDir/host as the Docker Engine reads its
// certs.d (moby's registry.ReadCertsDirectory): every *.crt is a CA added
// to the system's; every *.cert is a client certificate whose key is the
// *.key of the same name, and a key without its certificate is an error.
// The catalogue's CA is added too, and its client certificate replaces
// certs.d's. A folder that does not exist is no error.
func loadTLS(host string, files TLSFiles, certsDir string) (tlsSetup, error) {
	var s tlsSetup
	bad := func(format string, args ...any) (tlsSetup, error) {
		return s, &TLSError{Kind: TLSFilesBad, Host: host, Msg: fmt.Sprintf(format, args...)}
	}
	var cas [][]byte
	var certs []tls.Certificate
	var certFiles []string
	if certsDir != "" {
		dir := filepath.Join(certsDir, host)
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return bad("reading %s: %v", dir, err)
		}
		if len(entries) > 0 {
			s.from = append(s.from, dir)
		}
		for _, e := range entries {
			name := e.Name()
			p := filepath.Join(dir, name)
			switch {
			case strings.HasSuffix(name, ".crt"):
				b, err := os.ReadFile(p)
				if err != nil {
					return bad("reading %s: %v", p, err)
				}
				cas = append(cas, b)
			case strings.HasSuffix(name, ".cert"):
				key := strings.TrimSuffix(p, ".cert") + ".key"
				if _, err := os.Stat(key); err != nil {
					return bad("client certificate %s has no key %s (a CA certificate takes the extension .crt)", p, filepath.Base(key))
				}
				certFiles = append(certFiles, p)
			case strings.HasSuffix(name, ".key"):
				cert := strings.TrimSuffix(p, ".key") + ".cert"
				if _, err := os.Stat(cert); err != nil {
					return bad("key %s has no client certificate %s", p, filepath.Base(cert))
				}
			}
		}
	}
	if files.CAFile != "" {
		b, err := os.ReadFile(files.CAFile)
		if err != nil {
			return bad("reading ca_file: %v", err)
		}
		cas = append(cas, b)
		s.from = append(s.from, files.CAFile)
	}
	if (files.CertFile == "") != (files.KeyFile == "") {
		return bad("client_cert and client_key go together; set both or neither")
	}
	if files.CertFile != "" {
		certFiles = []string{files.CertFile}
		s.from = append(s.from, files.CertFile)
	}
	for _, c := range certFiles {
		key := files.KeyFile
		if c != files.CertFile {
			key = strings.TrimSuffix(c, ".cert") + ".key"
		}
		pair, err := tls.LoadX509KeyPair(c, key)
		if err != nil {
			return bad("client certificate %s and key %s: %v", c, key, err)
		}
		if err := checkValidity(pair, c); err != nil {
			return s, &TLSError{Kind: TLSClientCertExpired, Host: host, Msg: err.Error()}
		}
		certs = append(certs, pair)
	}
	if len(cas) == 0 && len(certs) == 0 {
		return s, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: certs}
	if len(cas) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		for i, b := range cas {
			if !pool.AppendCertsFromPEM(b) {
				return bad("no PEM certificate in CA file %d of %s", i+1, strings.Join(s.from, ", "))
			}
		}
		cfg.RootCAs = pool
	}
	s.cfg, s.clientCert = cfg, len(certs) > 0
	return s, nil
}

// checkValidity refuses a client certificate outside its validity: the
// registry would refuse it with a bare "bad certificate".
func checkValidity(pair tls.Certificate, file string) error {
	if len(pair.Certificate) == 0 {
		return nil
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil
	}
	now := time.Now()
	switch {
	case now.After(c.NotAfter):
		return fmt.Errorf("client certificate %s expired on %s; issue a new one from the registry's CA", file, c.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(c.NotBefore):
		return fmt.Errorf("client certificate %s is valid only from %s; check this machine's clock", file, c.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// withTLS returns base sending over cfg, in HTTP/1.1: a clone of an
// *http.Transport (the default one for nil), or a Counter over such a
// clone. Any other transport cannot take TLS settings.
func withTLS(base http.RoundTripper, cfg *tls.Config) (http.RoundTripper, error) {
	switch b := base.(type) {
	case nil:
		return withTLS(remote.DefaultTransport, cfg)
	case *http.Transport:
		t := b.Clone()
		t.TLSClientConfig = cfg
		// HTTP/1.1 only: over HTTP/2 a refused client certificate reads
		// "http2: client conn could not be established", and the TLS
		// alert that says why is lost. Registries serve both.
		t.ForceAttemptHTTP2 = false
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		return t, nil
	case *Counter:
		next, err := withTLS(b.next, cfg)
		if err != nil {
			return nil, err
		}
		return b.over(next), nil
	}
	return nil, fmt.Errorf("the transport %T cannot take TLS settings", base)
}

// explain recognises a TLS failure in err, from reaching host with s,
// and says what to do; other errors are returned as they are.
func (s tlsSetup) explain(host, certsDir string, err error) error {
	if err == nil {
		return nil
	}
	var te *TLSError
	if errors.As(err, &te) {
		return err
	}
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var name x509.HostnameError
	where := "ca_file in its registry block, or " + filepath.Join(cmp.Or(certsDir, DefaultCertsDir), host, "ca.crt")
	msg := err.Error()
	e := func(k TLSKind, m string) error { return &TLSError{Kind: k, Host: host, Msg: m, Err: err} }
	switch {
	case errors.As(err, &unknown):
		return e(TLSUnknownCA, "its certificate is signed by no CA pin trusts; put the CA's certificate in "+where)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return e(TLSBadServerCert, "its certificate has expired (or this machine's clock is wrong)")
	case errors.As(err, &invalid), errors.As(err, &name):
		return e(TLSBadServerCert, "its certificate is not valid for "+host)
	case strings.Contains(msg, "remote error: tls:") && !s.clientCert:
		return e(TLSClientCertMissing, "it requires a client certificate and none is configured; set client_cert and client_key in its registry block, or put client.cert and client.key in "+filepath.Join(cmp.Or(certsDir, DefaultCertsDir), host))
	case strings.Contains(msg, "remote error: tls:"):
		return e(TLSClientCertRefused, "it refused the client certificate ("+strings.Join(s.from, ", ")+"); use one signed by a CA the registry trusts, and not expired")
	}
	return err
}
