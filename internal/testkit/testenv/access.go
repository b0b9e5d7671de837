package testenv

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Names of the environment variables scripts/test sets for the servers
// reached over TLS, ssh and Podman.
const (
	// EnvTLSDir is a folder holding the test CA (ca.pem, ca-key.pem), a
	// client certificate it signed (cert.pem, key.pem) and the servers'
	// certificate (server-cert.pem, for 127.0.0.1).
	EnvTLSDir = "PIN_TEST_TLS_DIR"
	// EnvDockerTLSHost is the test engine on a loopback port with
	// --tlsverify: tcp://127.0.0.1:PORT.
	EnvDockerTLSHost = "PIN_TEST_DOCKER_TLS_HOST"
	// EnvSSHHost is ssh://root@127.0.0.1:PORT: an sshd whose `docker
	// system dial-stdio` reaches the test engine.
	EnvSSHHost = "PIN_TEST_SSH_HOST"
	// EnvSSHDir holds the sshd's keys (host_key.pub, client_key), the
	// known_hosts and ssh_config the client uses, and bin/ssh, a wrapper
	// that runs /usr/bin/ssh -F $PIN_TEST_SSH_CONFIG (else ssh_config).
	EnvSSHDir = "PIN_TEST_SSH_DIR"
	// EnvSSHConfig, when set, is the ssh_config the wrapper passes to ssh.
	EnvSSHConfig = "PIN_TEST_SSH_CONFIG"
	// EnvPodmanHost is Podman's Docker-compatible API socket:
	// unix:///…/podman.sock.
	EnvPodmanHost = "PIN_TEST_PODMAN_HOST"
	// EnvTLSRegistry is a registry over TLS from the test CA.
	EnvTLSRegistry = "PIN_TEST_REGISTRY_TLS"
	// EnvMTLSRegistry is a registry over TLS from the test CA that
	// requires a client certificate the CA signed.
	EnvMTLSRegistry = "PIN_TEST_REGISTRY_MTLS"
	// EnvTLSAuthRegistry is a registry over TLS from the test CA that
	// requires basic auth (EnvRegistryUser, EnvRegistryPassword).
	EnvTLSAuthRegistry = "PIN_TEST_REGISTRY_TLS_AUTH"
)

// TLSDir returns the folder of the test CA and certificates (see
// EnvTLSDir), once each file is there.
func TLSDir(t testing.TB) string {
	t.Helper()
	dir := lookup(t, "test certificates", runHint, EnvTLSDir)
	for _, f := range []string{"ca.pem", "ca-key.pem", "cert.pem", "key.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			unavailable(t, "test certificates", runHint, "%s=%s: %v", EnvTLSDir, dir, err)
		}
	}
	return dir
}

// DockerTLSHost returns the test engine's tcp://127.0.0.1:PORT endpoint,
// which requires TLS with a client certificate of the test CA, and the
// folder of that CA and certificate (ca.pem, cert.pem, key.pem: a
// DOCKER_CERT_PATH).
func DockerTLSHost(t testing.TB) (addr, certDir string) {
	t.Helper()
	certDir = TLSDir(t)
	addr = lookup(t, "docker engine over TLS", runAsRootHint, EnvDockerTLSHost)
	c, err := tlsClient(certDir, true)
	if err == nil {
		err = probe(c, "https://"+strings.TrimPrefix(addr, "tcp://")+"/_ping", http.StatusOK)
	}
	if err != nil {
		unavailable(t, "docker engine over TLS", runAsRootHint, "%s=%s does not answer: %v", EnvDockerTLSHost, addr, err)
	}
	return addr, certDir
}

// SSHHost returns the ssh:// endpoint of the test sshd in front of the
// test engine, and the folder of its keys (see EnvSSHDir). It puts the
// folder's ssh wrapper first in PATH for the rest of the test (so the test
// cannot be parallel): the Docker CLI's connection helper runs `ssh` from
// PATH, and the wrapper gives it the test's ssh_config.
func SSHHost(t testing.TB) (addr, dir string) {
	t.Helper()
	addr = lookup(t, "sshd", runAsRootHint, EnvSSHHost)
	dir = lookup(t, "sshd", runAsRootHint, EnvSSHDir)
	hostport := addr[strings.LastIndex(addr, "@")+1:]
	conn, err := net.DialTimeout("tcp", hostport, probeTimeout)
	if err == nil {
		conn.Close()
	}
	if err != nil {
		unavailable(t, "sshd", runAsRootHint, "%s=%s does not answer: %v", EnvSSHHost, addr, err)
	}
	t.Setenv("PATH", filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	return addr, dir
}

// PodmanHost returns the unix:// endpoint of Podman's Docker-compatible
// API, rootful, whose storage and run folders are scripts/test's own. It
// pulls over plain http from the plain test registry (Registry).
func PodmanHost(t testing.TB) string {
	t.Helper()
	addr := lookup(t, "podman service", runAsRootHint, EnvPodmanHost)
	if err := probeDocker(addr); err != nil {
		unavailable(t, "podman service", runAsRootHint, "%s=%s does not answer: %v", EnvPodmanHost, addr, err)
	}
	return addr
}

// TLSRegistry returns the host:port of the test registry served over TLS
// from the test CA (TLSDir's ca.pem), and that folder.
func TLSRegistry(t testing.TB) (addr, certDir string) {
	t.Helper()
	return tlsRegistry(t, "TLS registry", EnvTLSRegistry, false)
}

// MTLSRegistry returns the host:port of the test registry served over TLS
// from the test CA that requires a client certificate the CA signed (such
// as TLSDir's cert.pem and key.pem), and that folder.
func MTLSRegistry(t testing.TB) (addr, certDir string) {
	t.Helper()
	return tlsRegistry(t, "client-certificate registry", EnvMTLSRegistry, true)
}

// TLSAuthRegistry returns the host:port of the test registry served over
// TLS from the test CA that requires basic auth, that folder, and the
// credentials it accepts.
func TLSAuthRegistry(t testing.TB) (addr, certDir, user, password string) {
	t.Helper()
	user = lookup(t, "TLS auth registry", runHint, EnvRegistryUser)
	password = lookup(t, "TLS auth registry", runHint, EnvRegistryPassword)
	addr, certDir = tlsRegistryAt(t, "TLS auth registry", EnvTLSAuthRegistry, false, http.StatusUnauthorized)
	return addr, certDir, user, password
}

func tlsRegistry(t testing.TB, what, env string, clientCert bool) (string, string) {
	t.Helper()
	return tlsRegistryAt(t, what, env, clientCert, http.StatusOK)
}

// tlsRegistryAt returns the address in env and the TLS folder once /v2/
// answers it over TLS with status.
func tlsRegistryAt(t testing.TB, what, env string, clientCert bool, status int) (string, string) {
	t.Helper()
	dir := TLSDir(t)
	addr := lookup(t, what, runHint, env)
	c, err := tlsClient(dir, clientCert)
	if err == nil {
		err = probe(c, "https://"+addr+"/v2/", status)
	}
	if err != nil {
		unavailable(t, what, runHint, "%s=%s does not answer: %v", env, addr, err)
	}
	return addr, dir
}

// tlsClient trusts dir's ca.pem alone and, with cert, presents dir's
// client certificate.
func tlsClient(dir string, cert bool) (*http.Client, error) {
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", filepath.Join(dir, "ca.pem"))
	}
	cfg := &tls.Config{RootCAs: pool}
	if cert {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: probeTimeout, Transport: &http.Transport{TLSClientConfig: cfg}}, nil
}

// TLSTransport trusts dir's ca.pem (TLSDir) alone and, with clientCert,
// presents dir's client certificate: what a test pushes to TLSRegistry or
// MTLSRegistry with.
func TLSTransport(t testing.TB, dir string, clientCert bool) *http.Transport {
	t.Helper()
	c, err := tlsClient(dir, clientCert)
	if err != nil {
		t.Fatalf("testenv: TLS client of %s: %v", dir, err)
	}
	return c.Transport.(*http.Transport)
}
