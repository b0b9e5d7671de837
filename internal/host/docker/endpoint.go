package docker

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/docker/cli/cli/config"
	dcontext "github.com/docker/cli/cli/context"
	"github.com/docker/cli/cli/context/store"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/tlsconfig"
)

// DefaultContext is the Docker CLI's context that stands for the
// environment (DOCKER_HOST, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY) and the
// default socket; it is never in the context store.
const DefaultContext = "default"

// Names of the environment variables read as the Docker CLI reads them.
const (
	envContext = "DOCKER_CONTEXT"
	envConfig  = "DOCKER_CONFIG"
)

// endpoint is where and how a Host is reached, once resolved.
type endpoint struct {
	addr string
	// context is the Docker CLI context the endpoint came from; "" when
	// none (an address, or the environment).
	context string
	// tls is the TLS configuration of a tcp:// endpoint; nil for none.
	tls *tls.Config
	// certFrom says where the TLS material came from, for errors: a
	// folder, or "context NAME".
	certFrom string
	// clientCert tells whether a client certificate is presented.
	clientCert bool
}

// describe names the endpoint in errors: its address, and the context it
// came from.
func (e endpoint) describe() string {
	if e.context != "" {
		return "context " + e.context + ": " + e.addr
	}
	return e.addr
}

// resolve finds the endpoint of h as the Docker CLI would for the same
// settings:
//
//  1. Addr, with CertPath and TLSVerify;
//  2. else Context, a context of the Docker CLI's store;
//  3. else DOCKER_HOST, with DOCKER_CERT_PATH and DOCKER_TLS_VERIFY;
//  4. else DOCKER_CONTEXT;
//  5. else the current context of the Docker config (config.json's
//     currentContext, in $DOCKER_CONFIG or ~/.docker);
//  6. else the default socket.
//
// The context "default" is the environment and the default socket (3, 6),
// as in the Docker CLI. A context's TLS material (ca.pem, cert.pem,
// key.pem under contexts/tls) and its SkipTLSVerify are used for its
// tcp:// host as the Docker CLI uses them.
//
// An npipe:// address (Docker Desktop's engine on Windows,
// npipe:////./pipe/docker_engine, the default there) is a Windows named
// pipe, which the Moby client dials with go-winio; anywhere else it is
// refused with ErrNamedPipe before any connection.
func (h Host) resolve() (endpoint, error) {
	e, err := h.find()
	if err == nil && strings.HasPrefix(e.addr, "npipe://") && runtime.GOOS != "windows" {
		err = fmt.Errorf("%w: %s is reached only by pin running on that Windows machine; from here, give the engine a tcp:// (with TLS) or ssh:// address", ErrNamedPipe, e.addr)
	}
	return e, err
}

// ErrNamedPipe is an npipe:// endpoint outside Windows.
var ErrNamedPipe = errors.New("npipe:// names a Windows named pipe")

// find is resolve's search, on any platform.
func (h Host) find() (endpoint, error) {
	switch {
	case h.Addr != "":
		return h.direct(h.Addr, h.CertPath, h.TLSVerify)
	case h.Context != "":
		return fromContext(h.Context)
	case os.Getenv(client.EnvOverrideHost) != "":
		return h.fromEnv()
	case os.Getenv(envContext) != "":
		return fromContext(os.Getenv(envContext))
	}
	dir, err := configDir()
	if err != nil {
		return endpoint{}, err
	}
	cf, err := config.Load(dir)
	if err != nil {
		return endpoint{}, fmt.Errorf("reading the Docker config in %s: %w", dir, err)
	}
	if cf.CurrentContext != "" {
		return fromContext(cf.CurrentContext)
	}
	return h.fromEnv()
}

// fromEnv is the default context: DOCKER_HOST (else the default socket),
// with DOCKER_CERT_PATH and DOCKER_TLS_VERIFY, and CertPath and TLSVerify
// when set on h.
func (h Host) fromEnv() (endpoint, error) {
	return h.direct(cmp.Or(os.Getenv(client.EnvOverrideHost), client.DefaultDockerHost),
		cmp.Or(h.CertPath, os.Getenv(client.EnvOverrideCertPath)),
		h.TLSVerify || os.Getenv(client.EnvTLSVerify) != "")
}

// direct is an address with the Docker CLI's --tlsverify and cert path.
func (h Host) direct(addr, certPath string, verify bool) (endpoint, error) {
	e := endpoint{addr: addr}
	if !strings.HasPrefix(addr, "tcp://") || (certPath == "" && !verify) {
		return e, nil
	}
	dir := certPath
	if dir == "" {
		d, err := configDir()
		if err != nil {
			return e, fmt.Errorf("finding the TLS certificates: %w", err)
		}
		dir = d
	}
	opts := tlsconfig.Options{InsecureSkipVerify: !verify, ExclusiveRootPools: true}
	for file, dst := range map[string]*string{"ca.pem": &opts.CAFile, "cert.pem": &opts.CertFile, "key.pem": &opts.KeyFile} {
		if p := filepath.Join(dir, file); fileExists(p) {
			*dst = p
		}
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return e, fmt.Errorf("tls from %s: cert.pem and key.pem go together, and only one of them is there", dir)
	}
	if opts.CertFile != "" {
		b, err := os.ReadFile(opts.CertFile)
		if err != nil {
			return e, fmt.Errorf("tls from %s: %w", dir, err)
		}
		if err := checkValidity(b, opts.CertFile); err != nil {
			return e, err
		}
	}
	cfg, err := tlsconfig.Client(opts)
	if err != nil {
		return e, fmt.Errorf("tls from %s: %w", dir, err)
	}
	e.tls, e.certFrom, e.clientCert = cfg, dir, opts.CertFile != ""
	return e, nil
}

// fromContext loads the named context from the Docker CLI's store, in
// $DOCKER_CONFIG/contexts or ~/.docker/contexts.
func fromContext(name string) (endpoint, error) {
	if name == DefaultContext {
		return Host{}.fromEnv()
	}
	dir, err := configDir()
	if err != nil {
		return endpoint{}, err
	}
	s := store.New(filepath.Join(dir, "contexts"), store.NewConfig(
		func() any { return &map[string]any{} },
		store.EndpointTypeGetter("docker", func() any { return &dcontext.EndpointMetaBase{} }),
	))
	meta, err := s.GetMetadata(name)
	if err != nil {
		return endpoint{}, fmt.Errorf("docker context %q (in %s): %w; list the contexts with docker context ls", name, filepath.Join(dir, "contexts"), err)
	}
	var ep dcontext.EndpointMetaBase
	switch v := meta.Endpoints["docker"].(type) {
	case dcontext.EndpointMetaBase:
		ep = v
	case *dcontext.EndpointMetaBase:
		ep = *v
	default:
		return endpoint{}, fmt.Errorf("docker context %q has no docker endpoint (found %v)", name, reflect.TypeOf(v))
	}
	if ep.Host == "" {
		return endpoint{}, fmt.Errorf("docker context %q names no host", name)
	}
	e := endpoint{addr: ep.Host, context: name}
	if !strings.HasPrefix(ep.Host, "tcp://") {
		return e, nil // a socket, a named pipe or ssh: no TLS, as in the Docker CLI
	}
	data, err := dcontext.LoadTLSData(s, name, "docker")
	if err != nil {
		return e, fmt.Errorf("docker context %q: %w", name, err)
	}
	if data == nil && !ep.SkipTLSVerify {
		return e, nil // plain tcp
	}
	cfg := tlsconfig.ClientDefault()
	e.tls, e.certFrom = cfg, "context "+name
	cfg.InsecureSkipVerify = ep.SkipTLSVerify
	if data == nil {
		return e, nil
	}
	if data.CA != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data.CA) {
			return e, fmt.Errorf("docker context %q: its ca.pem holds no certificate", name)
		}
		cfg.RootCAs = pool
	}
	if data.Cert != nil && data.Key != nil {
		if err := checkValidity(data.Cert, "the cert.pem of context "+name); err != nil {
			return e, err
		}
		pair, err := tls.X509KeyPair(data.Cert, data.Key)
		if err != nil {
			return e, fmt.Errorf("docker context %q: its client certificate: %w", name, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
		e.clientCert = true
	}
	return e, nil
}

// configDir is the Docker CLI's config folder: $DOCKER_CONFIG, else
// ~/.docker. (The Docker CLI's own config.Dir reads the environment once
// per process; pin reads it each time.)
func configDir() (string, error) {
	if d := os.Getenv(envConfig); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the Docker config folder: %w", err)
	}
	return filepath.Join(home, ".docker"), nil
}

// ErrClientCertExpired is returned, before any connection, when the client
// certificate pin would present has expired or is not valid yet: the
// engine would refuse it with a bare "bad certificate".
var ErrClientCertExpired = errors.New("client certificate not valid now")

// checkValidity refuses a client certificate (PEM) outside its validity.
func checkValidity(certPEM []byte, what string) error {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return nil // tls.X509KeyPair says what is wrong
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil
	}
	now := time.Now()
	switch {
	case now.After(c.NotAfter):
		return fmt.Errorf("%w: %s expired on %s; issue a new one from the engine's CA", ErrClientCertExpired, what, c.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(c.NotBefore):
		return fmt.Errorf("%w: %s is valid only from %s; check this machine's clock", ErrClientCertExpired, what, c.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// sshFlags are the ssh options pin adds: never prompt (pin runs
// unattended: a passphrase, a password or an unknown host key fails at
// once instead), and give up connecting after the host's timeout.
func sshFlags(timeout time.Duration) []string {
	secs := int(math.Ceil(timeout.Seconds()))
	return []string{"-o", "BatchMode=yes", "-o", "ConnectTimeout=" + strconv.Itoa(max(secs, 1))}
}
