package registry

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// The scenario tests of this package (TestRemote*, TestFault*,
// TestSession*Once, TestCacheCorrupt, …) run each case against two
// registries, as subtests named after them:
//
//   - "memory": go-containerregistry's in-memory registry under httptest,
//     always, so that `go test ./internal/registry` covers the client
//     without any server;
//   - "real": the CNCF distribution registry that scripts/test starts, when
//     its variable (PIN_TEST_REGISTRY, …) is set or under CI. There, as
//     before, a server that does not answer skips the case, or fails it
//     under CI.
//
// Without the variables and without CI the real variants are not run at
// all; TestRealRegistries then skips once per server and says so, rather
// than every case skipping on its own.

// testRegistry is a registry a scenario runs against.
type testRegistry struct {
	name string // the subtest's: "memory" or "real"
	host string // host:port, plain http on loopback
	// pages is whether tag lists come in pages (n, last, a Link header to
	// the next): the in-memory registry's do, through pageTags; Debian's
	// distribution 2.8 ignores n and sends every tag at once.
	pages bool
	// user and password are what a registry behind basic auth accepts.
	user, password string
	// tokens is the in-memory Bearer registry, opened while a test pushes.
	tokens *tokenRegistry
}

// basic is the registry's credentials, or nil when it wants none.
func (reg *testRegistry) basic() *authn.Basic {
	if reg.user == "" {
		return nil
	}
	return &authn.Basic{Username: reg.user, Password: reg.password}
}

// pushAuth is what testimage.Push needs to write to the registry.
func (reg *testRegistry) pushAuth() []authn.Authenticator {
	if b := reg.basic(); b != nil {
		return []authn.Authenticator{b}
	}
	return nil
}

// write runs a write to the registry: the in-memory Bearer registry takes
// writes without a token while it runs.
func (reg *testRegistry) write(f func()) {
	if reg.tokens != nil {
		reg.tokens.set(func(tr *tokenRegistry) { tr.open = true })
		defer reg.tokens.set(func(tr *tokenRegistry) { tr.open = false })
	}
	f()
}

// push writes img to ref (on this registry).
func (reg *testRegistry) push(t *testing.T, ref string, img v1.Image) pushed {
	t.Helper()
	var p pushed
	reg.write(func() { p = push(t, ref, img, reg.pushAuth()...) })
	return p
}

// fleet pushes n repositories as fleet does.
func (reg *testRegistry) fleet(t *testing.T, prefix string, n int) []string {
	t.Helper()
	var repos []string
	reg.write(func() { repos = fleet(t, reg.host, prefix, n, reg.pushAuth()...) })
	return repos
}

// untag removes tag, which names digest, from repo. distribution deletes
// manifests by digest only, and the tag with it; go-containerregistry's
// registry keeps a manifest under each name it was put by, so both go.
func (reg *testRegistry) untag(t *testing.T, repo, tag, digest string) {
	t.Helper()
	refs := []string{repo + "@" + digest}
	if reg.name == "memory" {
		refs = []string{repo + ":" + tag, repo + "@" + digest}
	}
	for _, ref := range refs {
		if err := remote.Delete(mustRef(t, ref)); err != nil {
			t.Fatal(err)
		}
	}
}

// registryKind is one of the real servers scripts/test starts, and its
// in-memory stand-in.
type registryKind struct {
	name   string // as testenv names it
	env    string // the variable that names the real one
	real   func(t *testing.T) *testRegistry
	memory func(t *testing.T) *testRegistry
}

// plainRegistry: no credentials.
var plainRegistry = registryKind{
	name: "registry",
	env:  testenv.EnvRegistry,
	real: func(t *testing.T) *testRegistry {
		return &testRegistry{name: "real", host: testenv.Registry(t)}
	},
	memory: func(t *testing.T) *testRegistry {
		return &testRegistry{name: "memory", host: inProcess(t, pageTags), pages: true}
	},
}

// basicRegistry: htpasswd basic auth.
var basicRegistry = registryKind{
	name: "auth registry",
	env:  testenv.EnvAuthRegistry,
	real: func(t *testing.T) *testRegistry {
		host, user, password := testenv.AuthRegistry(t)
		return &testRegistry{name: "real", host: host, user: user, password: password}
	},
	memory: func(t *testing.T) *testRegistry {
		b := make([]byte, 8)
		rand.Read(b)
		reg := &testRegistry{name: "memory", pages: true, user: "pin", password: "pw-" + hex.EncodeToString(b)}
		reg.host = inProcess(t, func(h http.Handler) http.Handler { return basicAuth(reg.user, reg.password, pageTags(h)) })
		return reg
	},
}

// bearerRegistry: Bearer tokens from a token server on the registry's
// host, as Docker Hub's scheme; anyone gets a token.
var bearerRegistry = registryKind{
	name: "token registry",
	env:  testenv.EnvTokenRegistry,
	real: func(t *testing.T) *testRegistry {
		return &testRegistry{name: "real", host: testenv.TokenRegistry(t)}
	},
	memory: func(t *testing.T) *testRegistry {
		tr := newTokenRegistry(t)
		tr.set(func(tr *tokenRegistry) { tr.open = false })
		return &testRegistry{name: "memory", host: tr.host, tokens: tr}
	},
}

// realWanted reports whether the real variant of kind runs: when
// scripts/test has named its server, or under CI, where a missing server
// fails the test.
func realWanted(kind registryKind) bool {
	return os.Getenv(kind.env) != "" || os.Getenv("CI") != ""
}

// onRegistries runs f against kind's in-memory registry, and against the
// real one when realWanted, each as a parallel subtest.
func onRegistries(t *testing.T, kind registryKind, f func(t *testing.T, reg *testRegistry)) {
	t.Helper()
	runOnRegistries(t, kind, true, f)
}

// onRegistriesSerial is onRegistries for tests that cannot run in
// parallel (they set the environment or go-containerregistry's loggers).
func onRegistriesSerial(t *testing.T, kind registryKind, f func(t *testing.T, reg *testRegistry)) {
	t.Helper()
	runOnRegistries(t, kind, false, f)
}

func runOnRegistries(t *testing.T, kind registryKind, parallel bool, f func(t *testing.T, reg *testRegistry)) {
	t.Helper()
	variants := []func(*testing.T) *testRegistry{kind.memory}
	names := []string{"memory"}
	if realWanted(kind) {
		variants, names = append(variants, kind.real), append(names, "real")
	}
	for i, start := range variants {
		t.Run(names[i], func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			f(t, start(t))
		})
	}
}

// TestRealRegistries says, once per server, that the real variants of the
// scenario tests did not run: it skips when the server's variable is unset
// (and fails under CI), as each scenario did on its own before.
func TestRealRegistries(t *testing.T) {
	t.Parallel()
	for _, kind := range []registryKind{plainRegistry, basicRegistry, bearerRegistry} {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			if !realWanted(kind) {
				t.Logf("%s unset: the scenario tests ran against the in-memory %s only", kind.env, kind.name)
			}
			reg := kind.real(t) // skips, or fails under CI, when it is missing
			t.Logf("the scenario tests ran against the in-memory %s and the real one at %s", kind.name, reg.host)
		})
	}
}

// pageTags makes the in-memory registry page its tag lists as the
// distribution spec says: go-containerregistry's honours n and last but
// sends no Link header, so that a client would stop after the first page.
// pageTags asks it for one tag more than n, and when that one exists, cuts
// it off and links to the next page.
func pageTags(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		n, err := strconv.Atoi(q.Get("n"))
		if !strings.HasSuffix(r.URL.Path, "/tags/list") || r.Method != http.MethodGet || err != nil || n < 1 {
			next.ServeHTTP(w, r)
			return
		}
		q.Set("n", strconv.Itoa(n+1))
		inner := r.Clone(r.Context())
		inner.URL.RawQuery = q.Encode()
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, inner)
		var list struct {
			Name string   `json:"name"`
			Tags []string `json:"tags"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil {
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		if len(list.Tags) > n {
			list.Tags = list.Tags[:n]
			next := url.Values{"last": {list.Tags[n-1]}, "n": {strconv.Itoa(n)}}
			w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, r.URL.Path, next.Encode()))
		}
		var body bytes.Buffer
		json.NewEncoder(&body).Encode(list)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
		w.Write(body.Bytes())
	})
}

// basicAuth puts htpasswd-style basic auth in front of next: every
// request without user and password is answered 401 with a Basic
// challenge, as distribution does.
func basicAuth(user, password string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); ok && u == user && p == password {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="pin-test"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintln(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}`)
	})
}
