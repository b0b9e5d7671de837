package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Names of the environment variables set by scripts/test.
const (
	EnvRegistry         = "PIN_TEST_REGISTRY"
	EnvAuthRegistry     = "PIN_TEST_REGISTRY_AUTH"
	EnvTokenRegistry    = "PIN_TEST_REGISTRY_TOKEN"
	EnvRegistryUser     = "PIN_TEST_REGISTRY_USER"
	EnvRegistryPassword = "PIN_TEST_REGISTRY_PASSWORD"
	EnvDockerHost       = "PIN_TEST_DOCKER_HOST"
)

// probeTimeout bounds each liveness check of a server.
const probeTimeout = 5 * time.Second

// Registry returns the host:port of the plain (no auth) test registry.
func Registry(t testing.TB) string {
	t.Helper()
	return registryAt(t, "registry", EnvRegistry, http.StatusOK)
}

// AuthRegistry returns the host:port of the test registry that requires
// basic auth, and the credentials it accepts.
func AuthRegistry(t testing.TB) (addr, user, password string) {
	t.Helper()
	user = lookup(t, "auth registry", runHint, EnvRegistryUser)
	password = lookup(t, "auth registry", runHint, EnvRegistryPassword)
	return registryAt(t, "auth registry", EnvAuthRegistry, http.StatusUnauthorized), user, password
}

// TokenRegistry returns the host:port of the test registry that requires
// bearer tokens, as Docker Hub does. Its token realm is on the same
// host:port (http://ADDR/token) and grants pull and push on any repository
// asked, to anyone: no credentials are needed, but the registry verifies
// each token and the repositories it names.
func TokenRegistry(t testing.TB) string {
	t.Helper()
	return registryAt(t, "token registry", EnvTokenRegistry, http.StatusUnauthorized)
}

// registryAt returns the address in env once /v2/ answers it with status.
func registryAt(t testing.TB, what, env string, status int) string {
	t.Helper()
	addr := lookup(t, what, runHint, env)
	if err := probeRegistry(addr, status); err != nil {
		unavailable(t, what, runHint, "%s=%s does not answer: %v", env, addr, err)
	}
	return addr
}

// DockerHost returns the Docker Engine endpoint (unix:///…/docker.sock), in
// the form accepted by `docker -H` and by DOCKER_HOST.
func DockerHost(t testing.TB) string {
	t.Helper()
	host := lookup(t, "docker engine", runAsRootHint, EnvDockerHost)
	if err := probeDocker(host); err != nil {
		unavailable(t, "docker engine", runAsRootHint, "%s=%s does not answer: %v", EnvDockerHost, host, err)
	}
	return host
}

// How to get the servers: dockerd needs root, the registries do not.
const (
	runHint       = "run ./scripts/test"
	runAsRootHint = "run ./scripts/test as root"
)

// lookup returns the value of env, or stops the test when it is unset.
func lookup(t testing.TB, what, hint, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		unavailable(t, what, hint, "%s unset", env)
	}
	return v
}

// unavailable fails the test under CI and skips it elsewhere; what names the
// missing server, format explains why it is missing, hint how to get it.
func unavailable(t testing.TB, what, hint, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s required in CI: %s; %s", what, why, hint)
	}
	t.Skipf("skipping: %s not available: %s; %s to start it", what, why, hint)
}

// probeRegistry checks that GET /v2/ on addr answers with the wanted status.
func probeRegistry(addr string, want int) error {
	c := &http.Client{Timeout: probeTimeout}
	return probe(c, "http://"+addr+"/v2/", want)
}

// probeDocker pings the engine at host (unix:// or tcp://).
func probeDocker(host string) error {
	c := &http.Client{Timeout: probeTimeout}
	base := ""
	switch {
	case strings.HasPrefix(host, "unix://"):
		sock := strings.TrimPrefix(host, "unix://")
		var d net.Dialer
		c.Transport = &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", sock)
			},
		}
		base = "http://docker"
	case strings.HasPrefix(host, "tcp://"):
		base = "http://" + strings.TrimPrefix(host, "tcp://")
	default:
		return fmt.Errorf("unsupported docker host %q: want unix:// or tcp://", host)
	}
	return probe(c, base+"/_ping", http.StatusOK)
}

func probe(c *http.Client, url string, want int) error {
	defer c.CloseIdleConnections() // each probe has its own client
	resp, err := c.Get(url)
	if err != nil {
		return err // names the method and url already
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("get %s: status %d, want %d", url, resp.StatusCode, want)
	}
	return nil
}
