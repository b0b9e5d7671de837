package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// Registries with a private CA and with client certificates, for real:
// the docker-registry instances of scripts/test serve TLS from a test CA,
// and the second requires a client certificate that CA signed. pin reaches
// them with a registry block's ca_file, client_cert and client_key, or with
// the Docker Engine's certs.d folder; each failure is a TLSError that
// names the registry and says what to do, and is not retried in the run.

// pushTLS pushes a small image to repo on addr over TLS with dir's CA
// and, with cert, its client certificate; it returns the tag and digest.
func pushTLS(t *testing.T, addr, dir, repo string, cert bool) (tag, digest string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(testenv.ReadFile(t, dir, "ca.pem"))
	cfg := &tls.Config{RootCAs: pool}
	if cert {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	img := testimage.Build(t, testimage.Options{Labels: map[string]string{"org.pin-tool.test": t.Name()}})
	ref, err := name.NewTag(addr + "/" + repo + ":1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithTransport(tr)); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return "1.0.0", d.String()
}

// reads checks that opts reach the registry: the tag list and the image.
func reads(t *testing.T, opts RemoteOptions, repo, tag, digest string) {
	t.Helper()
	r := NewRemote(opts)
	tags, err := r.Tags(context.Background(), opts.Host+"/"+repo)
	if err != nil {
		t.Fatalf("Tags: %v", err)
	}
	if len(tags) != 1 || tags[0] != tag {
		t.Errorf("Tags = %v, want [%s]", tags, tag)
	}
	img, err := r.Image(context.Background(), opts.Host+"/"+repo, tag, "")
	if err != nil {
		t.Fatalf("Image: %v", err)
	}
	if img.Digest != digest {
		t.Errorf("Image digest = %s, want %s", img.Digest, digest)
	}
}

// refusesTLS checks that opts fail with a TLSError of kind naming the
// registry, twice, with one handshake's requests at most: the failure
// lasts for the run. (On loopback the plain-http fallback's 400 alone
// would keep it; TestTLSErrorsLast shows that a TLSError lasts anywhere.)
func refusesTLS(t *testing.T, opts RemoteOptions, repo string, kind TLSKind) *Counter {
	t.Helper()
	c := NewCounter(remote.DefaultTransport)
	opts.Transport = c
	r := NewRemote(opts)
	var first []string
	for i := range 2 {
		_, err := r.Tags(context.Background(), opts.Host+"/"+repo)
		var te *TLSError
		if !errors.As(err, &te) || te.Kind != kind {
			t.Fatalf("Tags: error %v, want a TLSError of kind %d", err, kind)
		}
		if !strings.Contains(err.Error(), "registry "+opts.Host+": ") {
			t.Errorf("error %q does not name registry %s", err, opts.Host)
		}
		if i == 0 {
			first = c.Summary()
			t.Logf("%v", err)
		}
	}
	if got := c.Summary(); strings.Join(got, "\n") != strings.Join(first, "\n") {
		t.Errorf("the second call sent requests: %v, then %v", first, got)
	}
	return c
}

func TestRemoteTLSRegistry(t *testing.T) {
	t.Parallel()
	for _, r := range tlsRegistries(t, false) {
		t.Run(r.name, func(t *testing.T) { testTLSRegistry(t, r.addr, r.dir) })
	}
}

func testTLSRegistry(t *testing.T, addr, dir string) {
	repo := "tls/app"
	tag, digest := pushTLS(t, addr, dir, repo, false)
	ca := testenv.ReadFile(t, dir, "ca.pem")

	t.Run("ca_file", func(t *testing.T) {
		reads(t, RemoteOptions{Host: addr, TLS: TLSFiles{CAFile: filepath.Join(dir, "ca.pem")}, CertsDir: t.TempDir()}, repo, tag, digest)
	})
	t.Run("certs.d", func(t *testing.T) {
		certs := t.TempDir()
		testenv.WriteFiles(t, filepath.Join(certs, addr), map[string][]byte{"ca.crt": ca})
		c := NewCounter(remote.DefaultTransport)
		reads(t, RemoteOptions{Host: addr, CertsDir: certs, Transport: c}, repo, tag, digest)
		// The Counter still counts, over the TLS transport made for it.
		if s := strings.Join(c.Summary(), ""); !strings.Contains(s, "ping https 1") || !strings.Contains(s, "tags list 1") {
			t.Errorf("counted %q, want one https ping and one tag list", s)
		}
	})
	t.Run("no CA", func(t *testing.T) {
		refusesTLS(t, RemoteOptions{Host: addr, CertsDir: t.TempDir()}, repo, TLSUnknownCA)
	})
	t.Run("another CA", func(t *testing.T) {
		certs := t.TempDir()
		testenv.WriteFiles(t, filepath.Join(certs, addr), map[string][]byte{"ca.crt": testenv.NewCA(t).PEM})
		refusesTLS(t, RemoteOptions{Host: addr, CertsDir: certs}, repo, TLSUnknownCA)
	})
}

func TestRemoteClientCertRegistry(t *testing.T) {
	t.Parallel()
	for _, r := range tlsRegistries(t, true) {
		t.Run(r.name, func(t *testing.T) { testClientCertRegistry(t, r.addr, r.dir) })
	}
}

func testClientCertRegistry(t *testing.T, addr, dir string) {
	repo := "mtls/app"
	tag, digest := pushTLS(t, addr, dir, repo, true)
	ca := testenv.ReadFile(t, dir, "ca.pem")
	now := time.Now()

	t.Run("ca_file, client_cert and client_key", func(t *testing.T) {
		files := TLSFiles{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem")}
		reads(t, RemoteOptions{Host: addr, TLS: files, CertsDir: t.TempDir()}, repo, tag, digest)
	})
	t.Run("certs.d", func(t *testing.T) {
		certs := t.TempDir()
		testenv.WriteFiles(t, filepath.Join(certs, addr), map[string][]byte{
			"ca.crt": ca, "client.cert": testenv.ReadFile(t, dir, "cert.pem"), "client.key": testenv.ReadFile(t, dir, "key.pem"),
		})
		reads(t, RemoteOptions{Host: addr, CertsDir: certs}, repo, tag, digest)
	})
	t.Run("no client certificate", func(t *testing.T) {
		certs := t.TempDir()
		testenv.WriteFiles(t, filepath.Join(certs, addr), map[string][]byte{"ca.crt": ca})
		refusesTLS(t, RemoteOptions{Host: addr, CertsDir: certs}, repo, TLSClientCertMissing)
	})
	t.Run("client certificate of another CA", func(t *testing.T) {
		cert, key := testenv.NewCA(t).ClientCert(t, now.Add(-time.Hour), now.Add(time.Hour))
		certs := t.TempDir()
		testenv.WriteFiles(t, filepath.Join(certs, addr), map[string][]byte{"ca.crt": ca, "client.cert": cert, "client.key": key})
		refusesTLS(t, RemoteOptions{Host: addr, CertsDir: certs}, repo, TLSClientCertRefused)
	})
	t.Run("expired client certificate", func(t *testing.T) {
		cert, key := testenv.LoadCA(t, dir).ClientCert(t, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
		certs := t.TempDir()
		testenv.WriteFiles(t, filepath.Join(certs, addr), map[string][]byte{"ca.crt": ca, "client.cert": cert, "client.key": key})
		c := refusesTLS(t, RemoteOptions{Host: addr, CertsDir: certs}, repo, TLSClientCertExpired)
		if s := c.Summary(); len(s) != 0 {
			t.Errorf("an expired client certificate sent requests: %v", s)
		}
	})
	t.Run("a key without its certificate", func(t *testing.T) {
		certs := t.TempDir()
		testenv.WriteFiles(t, filepath.Join(certs, addr), map[string][]byte{"ca.crt": ca, "client.key": testenv.ReadFile(t, dir, "key.pem")})
		refusesTLS(t, RemoteOptions{Host: addr, CertsDir: certs}, repo, TLSFilesBad)
	})
}

// TestTLSErrorsLast: a TLS failure pin recognises is kept for the run,
// while the bare x509 error under it (what a registry off loopback, with
// no plain-http fallback, would give alone) would be tried again.
func TestTLSErrorsLast(t *testing.T) {
	t.Parallel()
	bare := &url.Error{Op: "Get", URL: "https://registry.example.org/v2/", Err: x509.UnknownAuthorityError{}}
	if lasting(bare) {
		t.Fatalf("a bare x509 error lasts: the test below shows nothing")
	}
	s := tlsSetup{}
	err := s.explain("registry.example.org", "", bare)
	var te *TLSError
	if !errors.As(err, &te) || te.Kind != TLSUnknownCA {
		t.Fatalf("explain: %v, want a TLSError of unknown CA", err)
	}
	if !lasting(fmt.Errorf("reaching registry.example.org: %w", err)) {
		t.Errorf("a TLSError does not last")
	}
}

// tlsRegistry is a registry served over TLS from a test CA, and the folder
// that holds the CA (ca.pem, ca-key.pem) and a client pair it signed
// (cert.pem, key.pem).
type tlsRegistry struct{ name, addr, dir string }

// tlsRegistries are the registries a TLS scenario runs on: always
// go-containerregistry's in-memory registry behind an httptest TLS server
// (requiring a client certificate when clientCert), and the real
// docker-registry that scripts/test starts when its address is set or CI
// is (testenv skips, or fails under CI, when it is missing), as
// TestRealRegistries does for the other kinds.
func tlsRegistries(t *testing.T, clientCert bool) []tlsRegistry {
	t.Helper()
	out := []tlsRegistry{memoryTLSRegistry(t, clientCert)}
	env := testenv.EnvTLSRegistry
	if clientCert {
		env = testenv.EnvMTLSRegistry
	}
	if os.Getenv(env) != "" || os.Getenv("CI") != "" {
		addr, dir := testenv.TLSRegistry(t)
		if clientCert {
			addr, dir = testenv.MTLSRegistry(t)
		}
		out = append(out, tlsRegistry{"real", addr, dir})
	} else {
		t.Logf("%s unset: the TLS scenarios ran against the in-memory registry only", env)
	}
	return out
}

func memoryTLSRegistry(t *testing.T, clientCert bool) tlsRegistry {
	t.Helper()
	ca := testenv.NewCA(t)
	dir := t.TempDir()
	der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, key := ca.ClientCert(t, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	testenv.WriteFiles(t, dir, map[string][]byte{"ca.pem": ca.PEM, "ca-key.pem": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		"cert.pem": cert, "key.pem": key})
	scert, skey := ca.ServerCert(t)
	pair, err := tls.X509KeyPair(scert, skey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	if clientCert {
		pool := x509.NewCertPool()
		pool.AddCert(ca.Cert)
		srv.TLS.ClientAuth, srv.TLS.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return tlsRegistry{"memory", srv.Listener.Addr().String(), dir}
}
