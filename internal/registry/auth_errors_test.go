package registry

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// A registry that refuses pin (401, 403), or whose token server does,
// says which of them refused, what pin sent (no credentials, or the
// Docker config's), the URL as it was asked (https when it was), and
// what to run: docker login REGISTRY, or a credential helper. The
// suggestion is then run: the real `docker login` (through the test
// Engine, which writes the Docker config pin reads) where the Engine is,
// else the config it writes; pin then reads.

// tlsAuthRegistry is a registry over TLS that wants basic auth.
type tlsAuthRegistry struct {
	name, addr, dir string // dir holds the CA (ca.pem)
	user, password  string
}

func tlsAuthRegistries(t *testing.T) []tlsAuthRegistry {
	t.Helper()
	mem := memoryTLSRegistry(t, false) // for its CA
	reg := tlsAuthRegistry{name: "memory", dir: mem.dir, user: "pin", password: "pw-" + t.Name()}
	ca := testenv.LoadCA(t, mem.dir)
	scert, skey := ca.ServerCert(t)
	pair, err := tls.X509KeyPair(scert, skey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(basicAuth(reg.user, reg.password, ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)))))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	reg.addr = srv.Listener.Addr().String()
	out := []tlsAuthRegistry{reg}
	if os.Getenv(testenv.EnvTLSAuthRegistry) != "" || os.Getenv("CI") != "" {
		addr, dir, user, password := testenv.TLSAuthRegistry(t)
		out = append(out, tlsAuthRegistry{"real", addr, dir, user, password})
	} else {
		t.Logf("%s unset: the TLS auth scenarios ran against the in-memory registry only", testenv.EnvTLSAuthRegistry)
	}
	return out
}

// dockerConfig writes a Docker config with auths for host (none when
// user is "") and points DOCKER_CONFIG at it.
func dockerConfig(t *testing.T, host, user, password string) string {
	t.Helper()
	dir := t.TempDir()
	conf := `{"auths": {}}`
	if user != "" {
		conf = fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, host, base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	return dir
}

// authErrorOf asks for repo's tags and returns the AuthError it fails with.
func authErrorOf(t *testing.T, opts RemoteOptions, repo string) (*AuthError, string) {
	t.Helper()
	_, err := NewRemote(opts).Tags(context.Background(), repo)
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("Tags(%s): %v, want an *AuthError", repo, err)
	}
	return ae, err.Error()
}

// says checks that msg holds each of want and none of never.
func says(t *testing.T, msg string, want []string, never ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("the message lacks %q:\n%s", w, msg)
		}
	}
	for _, n := range never {
		if strings.Contains(msg, n) {
			t.Errorf("the message holds %q:\n%s", n, msg)
		}
	}
}

func TestAuthErrorsTLSBasic(t *testing.T) {
	for _, reg := range tlsAuthRegistries(t) {
		t.Run(reg.name, func(t *testing.T) {
			repo := reg.addr + "/auth/app"
			tr := testenv.TLSTransport(t, reg.dir, false)
			ref, err := name.NewTag(repo + ":1.0")
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(ref, versioned(t, "1.0", created1), remote.WithTransport(tr),
				remote.WithAuth(&authn.Basic{Username: reg.user, Password: reg.password})); err != nil {
				t.Fatal(err)
			}
			opts := RemoteOptions{Host: reg.addr, TLS: TLSFiles{CAFile: filepath.Join(reg.dir, "ca.pem")}, CertsDir: t.TempDir()}
			login := "run docker login " + reg.addr + ","

			dockerConfig(t, reg.addr, "", "")
			ae, msg := authErrorOf(t, opts, repo)
			if ae.Status != http.StatusUnauthorized || ae.Registry != reg.addr || ae.TokenServer != "" || ae.Repository != "auth/app" {
				t.Errorf("no credentials: %+v", ae)
			}
			says(t, msg, []string{"registry " + reg.addr + " asks for credentials to read auth/app, and the Docker config has none for " + reg.addr,
				login, `"credHelpers"`, "GET https://" + reg.addr + "/v2/auth/app/tags/list", "HTTP 401 Unauthorized"}, "http://")

			dockerConfig(t, reg.addr, reg.user, "wrong-"+reg.password)
			_, msg = authErrorOf(t, opts, repo)
			says(t, msg, []string{"registry " + reg.addr + " refused the credentials the Docker config has for " + reg.addr,
				"run docker login " + reg.addr + " again", "https://" + reg.addr}, "http://", "wrong-"+reg.password)

			// The suggestion, run: docker login, then pin reads.
			dir := dockerConfig(t, reg.addr, "", "")
			dockerLogin(t, dir, reg.addr, reg.user, reg.password)
			tags, err := NewRemote(opts).Tags(context.Background(), repo)
			if err != nil || len(tags) != 1 || tags[0] != "1.0" {
				t.Errorf("after docker login: %v, %v", tags, err)
			}
		})
	}
}

// dockerLogin runs `docker login` as the message says, against the test
// Engine, writing to the Docker config in dir; without an Engine (and
// outside CI), it writes what docker login writes.
func dockerLogin(t *testing.T, dir, addr, user, password string) {
	t.Helper()
	_, noCLI := exec.LookPath("docker")
	if os.Getenv("CI") == "" && (os.Getenv(testenv.EnvDockerHost) == "" || noCLI != nil) {
		t.Logf("no Docker Engine: writing the config docker login writes")
		conf := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, addr, base64.StdEncoding.EncodeToString([]byte(user+":"+password)))
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	host := testenv.DockerHost(t)
	cmd := exec.Command("docker", "-H", host, "--config", dir, "login", addr, "--username", user, "--password-stdin")
	cmd.Stdin = strings.NewReader(password)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("docker login %s: %v\n%s", addr, err, out.String())
	}
}

// TestAuthErrorsBearer: the same for a registry that hands out tokens: a
// token server that wants credentials, refuses them or refuses the
// scope, and a registry that does not let a token read a repository.
func TestAuthErrorsBearer(t *testing.T) {
	tr := newTokenRegistry(t)
	repo := tr.host + "/team/app"
	push(t, repo+":1.0", versioned(t, "1.0", created1))
	tr.set(func(tr *tokenRegistry) { tr.open = false })
	opts := RemoteOptions{Host: tr.host}
	realm := "the token server http://" + tr.host + "/token of registry " + tr.host

	tr.set(func(tr *tokenRegistry) { tr.tokenStatus = http.StatusUnauthorized })
	dockerConfig(t, tr.host, "", "")
	ae, msg := authErrorOf(t, opts, repo)
	if ae.TokenServer != "http://"+tr.host+"/token" || ae.Status != http.StatusUnauthorized {
		t.Errorf("token server, no credentials: %+v", ae)
	}
	says(t, msg, []string{realm + " asks for credentials to read team/app, and the Docker config has none for " + tr.host,
		"run docker login " + tr.host + ","})

	dockerConfig(t, tr.host, "pin", "a-password")
	_, msg = authErrorOf(t, opts, repo)
	says(t, msg, []string{realm + " refused the credentials the Docker config has for " + tr.host, "run docker login " + tr.host + " again"}, "a-password")

	tr.set(func(tr *tokenRegistry) { tr.tokenStatus = http.StatusForbidden })
	_, msg = authErrorOf(t, opts, repo)
	says(t, msg, []string{realm + " does not let the credentials the Docker config has for " + tr.host + " read team/app",
		"as a user who may read it", "HTTP 403 Forbidden"})

	// The token is given; the registry still refuses the repository, as
	// Docker Hub does a private one.
	tr.set(func(tr *tokenRegistry) { tr.tokenStatus = 0; tr.realm = "" })
	private := privateRepo(t, tr, "team/private")
	dockerConfig(t, tr.host, "", "")
	ae, msg = authErrorOf(t, RemoteOptions{Host: private}, private+"/team/private")
	if ae.TokenServer != "" {
		t.Errorf("the registry refused, not the token server: %+v", ae)
	}
	says(t, msg, []string{"registry " + private + " asks for credentials to read team/private, and the Docker config has none for " + private})
	dockerConfig(t, private, "pin", "a-password")
	_, msg = authErrorOf(t, RemoteOptions{Host: private}, private+"/team/private")
	says(t, msg, []string{"registry " + private + " does not let the credentials the Docker config has for " + private + " read team/private",
		"run docker login " + private + " as a user who may read it"}, "a-password")
}

// privateRepo serves tr behind a front that challenges every request for
// repo, whatever token it carries, and hands out tr's tokens from its own
// /token; it returns the front's host.
func privateRepo(t *testing.T, tr *tokenRegistry, repo string) string {
	t.Helper()
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: tr.host})
	var host string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if repoOfPath(r.URL.Path) == repo {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="test",scope="repository:%s:pull"`, host, repo))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "http://")
	tr.set(func(tr *tokenRegistry) { tr.realm = "http://" + host + "/token" })
	return host
}
