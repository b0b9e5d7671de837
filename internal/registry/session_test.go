package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"golang.org/x/sync/errgroup"

	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// fleet pushes n repositories, prefix-0 … prefix-(n-1), each with tag 1.0,
// and returns their names.
func fleet(t *testing.T, reg, prefix string, n int, auth ...authn.Authenticator) []string {
	t.Helper()
	img := versioned(t, "1.0", created1)
	var repos []string
	for i := range n {
		repo := fmt.Sprintf("%s/%s-%d", reg, prefix, i)
		repos = append(repos, repo)
		testimage.Push(t, repo+":1.0", img, auth...)
	}
	return repos
}

// readAll lists the tags of every repository and describes its 1.0, all at
// once, as a resolve of a fleet does.
func readAll(t *testing.T, r *Remote, repos []string) {
	t.Helper()
	var g errgroup.Group
	for _, repo := range repos {
		g.Go(func() error {
			tags, err := r.Tags(context.Background(), repo)
			if err != nil {
				return err
			}
			if !slices.Equal(tags, []string{"1.0"}) {
				return fmt.Errorf("tags of %s: %v", repo, tags)
			}
			_, err = r.Image(context.Background(), repo, "1.0", "")
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestSessionPingOnce: a fleet of repositories on one registry costs
// one ping for the registry (https first, then the plain http the loopback
// registry speaks), not one per repository.
func TestSessionPingOnce(t *testing.T) {
	t.Parallel()
	onRegistries(t, plainRegistry, func(t *testing.T, reg *testRegistry) {
		repos := reg.fleet(t, "session/ping", 6)
		r, c := newTestRemote(t, RemoteOptions{Host: reg.host, Repositories: repos})
		readAll(t, r, repos)
		c.expect(t, "fleet", map[string]int{"ping https": 1, "ping http": 1, "tags list": 6, "manifest GET": 6, "blob GET": 6})
	})
}

// countingKeychain counts the times credentials are asked for.
type countingKeychain struct {
	next authn.Keychain
	n    atomic.Int32
}

func (k *countingKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	k.n.Add(1)
	return k.next.Resolve(r)
}

// TestSessionBasicOnce: against a registry behind basic auth, the
// credentials are read once for a fleet (a credential helper runs once),
// and go with every request after the one ping.
func TestSessionBasicOnce(t *testing.T) {
	t.Parallel()
	onRegistries(t, basicRegistry, func(t *testing.T, reg *testRegistry) {
		basic := reg.basic()
		repos := reg.fleet(t, "session/basic", 5)
		kc := &countingKeychain{next: staticKeychain{reg: reg.host, auth: basic}}
		r, c := newTestRemote(t, RemoteOptions{Host: reg.host, Keychain: kc, Repositories: repos})
		readAll(t, r, repos)
		c.expect(t, "fleet", map[string]int{"ping https": 1, "ping http": 1, "tags list": 5, "manifest GET": 5, "blob GET": 5})
		if n := kc.n.Load(); n != 1 {
			t.Errorf("credentials read %d times, want once", n)
		}
		if bad := c.unauthenticated(); len(bad) > 0 {
			t.Errorf("sent without credentials:\n  %s", strings.Join(bad, "\n  "))
		}
	})
}

// staticKeychain has credentials for one registry.
type staticKeychain struct {
	reg  string
	auth authn.Authenticator
}

func (k staticKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() == k.reg {
		return k.auth, nil
	}
	return authn.Anonymous, nil
}

// tokenRegistry plays a registry that hands out Bearer tokens (Docker Hub,
// ghcr.io, Harbor) in front of go-containerregistry's in-memory registry:
// /v2/ and every repository answer 401 with a challenge (naming the scope)
// unless the request carries a token that grants the repository; /token,
// on the registry's own host, grants the scopes asked for.
type tokenRegistry struct {
	host  string
	realm string // the token server's URL; on the registry's host unless set

	mu     sync.Mutex
	grants map[string]map[string]bool // token → repositories
	asked  [][]string                 // the scopes of each token request
	open   bool                       // while the test pushes

	// Ways to misbehave, set by tests.
	refuseMany  bool // a token request for several scopes is refused
	tokenStatus int  // the token server answers this status, when set
	accessOnly  bool // the token is in access_token alone
	registryTok string
}

func newTokenRegistry(t *testing.T) *tokenRegistry {
	tr := &tokenRegistry{grants: map[string]map[string]bool{}, open: true}
	tr.host = inProcess(t, tr.wrap)
	return tr
}

func (tr *tokenRegistry) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			tr.token(w, r)
			return
		}
		repo := repoOfPath(r.URL.Path)
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		tr.mu.Lock()
		ok := tr.open || (tr.grants[tok] != nil && (repo == "" || tr.grants[tok][repo])) || (tok != "" && tok == tr.registryTok)
		tr.mu.Unlock()
		if !ok {
			tr.mu.Lock()
			realm := tr.realm
			tr.mu.Unlock()
			if realm == "" {
				realm = "http://" + tr.host + "/token"
			}
			c := fmt.Sprintf(`Bearer realm=%q,service="test"`, realm)
			if repo != "" {
				c += fmt.Sprintf(`,scope="repository:%s:pull"`, repo)
			}
			w.Header().Set("WWW-Authenticate", c)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (tr *tokenRegistry) token(w http.ResponseWriter, r *http.Request) {
	var scopes []string
	for _, v := range r.URL.Query()["scope"] {
		scopes = append(scopes, strings.Fields(v)...)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.asked = append(tr.asked, scopes)
	if tr.tokenStatus != 0 {
		w.WriteHeader(tr.tokenStatus)
		return
	}
	if tr.refuseMany && len(scopes) > 1 {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	b := make([]byte, 8)
	rand.Read(b)
	tok := hex.EncodeToString(b)
	tr.grants[tok] = map[string]bool{}
	for _, sc := range scopes {
		tr.grants[tok][repoOfScope(sc)] = true
	}
	body := map[string]any{"token": tok, "expires_in": 300}
	if tr.accessOnly {
		body = map[string]any{"access_token": tok, "expires_in": 300}
	}
	json.NewEncoder(w).Encode(body)
}

// set changes how the registry behaves.
func (tr *tokenRegistry) set(f func(*tokenRegistry)) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	f(tr)
}

// expire forgets every token given: the next request of each is
// challenged.
func (tr *tokenRegistry) expire() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	clear(tr.grants)
}

// takeAsked returns the scopes of the token requests so far, each list
// sorted, and starts again.
func (tr *tokenRegistry) takeAsked() [][]string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := tr.asked
	tr.asked = nil
	for _, a := range out {
		slices.Sort(a)
	}
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

// expectAsked checks the scopes of the token requests since the last
// take, in any order of requests.
func (tr *tokenRegistry) expectAsked(t *testing.T, want ...[]string) {
	t.Helper()
	slices.SortFunc(want, func(a, b []string) int { return slices.Compare(a, b) })
	if diff := cmp.Diff(want, tr.takeAsked()); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
}

// bearerFleet pushes n repositories to a new tokenRegistry, then makes it
// behave as misbehave says (closed to requests without a token, at
// least), and returns a Remote that expects them.
func bearerFleet(t *testing.T, prefix string, n int, misbehave func(*tokenRegistry)) (*tokenRegistry, []string, *Remote, *counter) {
	t.Helper()
	tr := newTokenRegistry(t)
	repos := fleet(t, tr.host, prefix, n)
	tr.set(func(tr *tokenRegistry) {
		tr.open = false
		if misbehave != nil {
			misbehave(tr)
		}
	})
	r, c := newTestRemote(t, RemoteOptions{Host: tr.host, Repositories: repos})
	return tr, repos, r, c
}

func scopesOf(repos ...string) []string {
	var out []string
	for _, r := range repos {
		_, path, _ := strings.Cut(r, "/")
		out = append(out, pullScope(path))
	}
	slices.Sort(out)
	return out
}

// TestSessionBearer: a registry that hands out tokens is pinged once and
// asked for one token per batch of the repositories expected; what it
// does wrong or unusually costs requests, never answers.
func TestSessionBearer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("one token for the fleet", func(t *testing.T) {
		t.Parallel()
		tr, repos, r, c := bearerFleet(t, "bearer/fleet", 30, nil)
		readAll(t, r, repos)
		// 30 repositories: batches of 25 and 5, in the order given; no
		// request is challenged.
		c.expect(t, "fleet", map[string]int{"ping https": 1, "ping http": 1, "token": 2, "tags list": 30, "manifest GET": 30, "blob GET": 30})
		tr.expectAsked(t, scopesOf(repos[:25]...), scopesOf(repos[25:]...))

		// A repository not expected gets its own token.
		tr.set(func(tr *tokenRegistry) { tr.open = true })
		other := fleet(t, tr.host, "bearer/other", 1)
		tr.set(func(tr *tokenRegistry) { tr.open = false })
		readAll(t, r, other)
		c.expect(t, "not expected", map[string]int{"token": 1, "tags list": 1, "manifest GET": 1, "blob GET": 1})
		tr.expectAsked(t, scopesOf(other...))
	})

	t.Run("the next batch ahead", func(t *testing.T) {
		t.Parallel()
		tr, repos, r, _ := bearerFleet(t, "bearer/ahead", 60, nil) // batches of 25, 25, 10
		readAll(t, r, repos[:2])
		// The second batch's token is asked for in the background when the
		// first is used; the third is not, until the second is used.
		for give := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			tr.mu.Lock()
			n := len(tr.asked)
			tr.mu.Unlock()
			if n >= 2 {
				break
			}
			if time.Now().After(give) {
				t.Fatal("the second batch's token was not asked for")
			}
		}
		readAll(t, r, repos[2:25])
		tr.expectAsked(t, scopesOf(repos[:25]...), scopesOf(repos[25:50]...))
	})

	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		tr, repos, r, c := bearerFleet(t, "bearer/expired", 2, nil)
		if _, err := r.Tags(ctx, repos[0]); err != nil {
			t.Fatal(err)
		}
		c.expect(t, "first", map[string]int{"ping https": 1, "ping http": 1, "token": 1, "tags list": 1})
		tr.expire()
		// Challenged once: a new token for the repository, and the
		// request again.
		if _, err := r.Tags(ctx, repos[0]); err != nil {
			t.Fatal(err)
		}
		c.expect(t, "expired", map[string]int{"token": 1, "tags list": 2})
		// The new token covers the whole batch: the other repository
		// is read with it, unchallenged.
		if _, err := r.Tags(ctx, repos[1]); err != nil {
			t.Fatal(err)
		}
		c.expect(t, "the batch's other repository", map[string]int{"tags list": 1})
		tr.takeAsked()
	})

	t.Run("token server refuses several scopes", func(t *testing.T) {
		t.Parallel()
		tr, repos, r, c := bearerFleet(t, "bearer/refused", 3, func(tr *tokenRegistry) { tr.refuseMany = true })
		readAll(t, r, repos)
		// The batch once, refused; then each repository alone.
		c.expect(t, "refused batch", map[string]int{"ping https": 1, "ping http": 1, "token": 4, "tags list": 3, "manifest GET": 3, "blob GET": 3})
		tr.expectAsked(t, scopesOf(repos[0]), scopesOf(repos[1]), scopesOf(repos[2]), scopesOf(repos...))
	})

	for _, tc := range []struct {
		name   string
		status int
		tokens int
	}{
		// A failure that may pass is tried again by the next module, for
		// the whole batch; one that lasts (the credentials refused) is
		// kept for the run. Neither is asked for again per repository,
		// as a refused batch is.
		{"token server fails", http.StatusNotImplemented, 3},
		{"token server refuses the credentials", http.StatusUnauthorized, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, repos, r, c := bearerFleet(t, "bearer/broken", 3, func(tr *tokenRegistry) { tr.tokenStatus = tc.status })
			for _, repo := range repos {
				_, err := r.Tags(ctx, repo)
				if err == nil || !strings.Contains(err.Error(), "authenticating with "+tr.host) {
					t.Errorf("Tags(%s) = %v, want an error authenticating", repo, err)
				}
			}
			c.expect(t, "broken", map[string]int{"ping https": 1, "ping http": 1, "token": tc.tokens})
			var want [][]string
			for range tc.tokens {
				want = append(want, scopesOf(repos...))
			}
			tr.expectAsked(t, want...)
		})
	}

	t.Run("access_token alone", func(t *testing.T) {
		t.Parallel()
		_, repos, r, c := bearerFleet(t, "bearer/oauth", 2, func(tr *tokenRegistry) { tr.accessOnly = true })
		readAll(t, r, repos)
		c.expect(t, "access_token", map[string]int{"ping https": 1, "ping http": 1, "token": 1, "tags list": 2, "manifest GET": 2, "blob GET": 2})
	})

	t.Run("registry token in the Docker config", func(t *testing.T) {
		t.Parallel()
		tr := newTokenRegistry(t)
		repos := fleet(t, tr.host, "bearer/configured", 2)
		tr.set(func(tr *tokenRegistry) { tr.open, tr.registryTok = false, "configured-token" })
		kc := staticKeychain{reg: tr.host, auth: authn.FromConfig(authn.AuthConfig{RegistryToken: "configured-token"})}
		r, c := newTestRemote(t, RemoteOptions{Host: tr.host, Keychain: kc, Repositories: repos})
		readAll(t, r, repos)
		c.expect(t, "registry token", map[string]int{"ping https": 1, "ping http": 1, "tags list": 2, "manifest GET": 2, "blob GET": 2})
	})
}

// TestSessionTokenHosts: a token server on another host is refused, with
// a message that says what to write, unless the catalogue names it in
// token_hosts (nvcr.io's is authn.nvidia.com).
func TestSessionTokenHosts(t *testing.T) {
	t.Parallel()
	tr := newTokenRegistry(t)
	repos := fleet(t, tr.host, "bearer/elsewhere", 2)
	auth := httptest.NewServer(http.HandlerFunc(tr.token))
	t.Cleanup(auth.Close)
	// By name: go-containerregistry refuses a realm at a loopback or
	// private address other than the registry's own.
	authHost := strings.Replace(strings.TrimPrefix(auth.URL, "http://"), "127.0.0.1", "localhost", 1)
	tr.set(func(tr *tokenRegistry) { tr.open, tr.realm = false, "http://"+authHost+"/token" })

	r, c := newTestRemote(t, RemoteOptions{Host: tr.host, Repositories: repos})
	_, err := r.Tags(context.Background(), repos[0])
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), fmt.Sprintf(`add token_hosts = [%q]`, authHost)) {
		t.Fatalf("Tags = %v, want the realm refused, saying what to write", err)
	}
	c.take()
	if got := tr.takeAsked(); len(got) != 0 {
		t.Errorf("the token server was asked: %v", got)
	}

	r, c = newTestRemote(t, RemoteOptions{Host: tr.host, Repositories: repos, TokenHosts: []string{authHost}})
	readAll(t, r, repos)
	c.expect(t, "token_hosts", map[string]int{"ping https": 1, "ping http": 1, "token": 1, "tags list": 2, "manifest GET": 2, "blob GET": 2})
	tr.expectAsked(t, scopesOf(repos...))
}

// TestBatches: scopes keep the order given, without repeats, and are cut
// by count and by length.
func TestBatches(t *testing.T) {
	long := strings.Repeat("x", 600)
	var many []string
	for i := range 26 {
		many = append(many, fmt.Sprintf("r%02d", i))
	}
	for _, tc := range []struct {
		name  string
		repos []string
		sizes []int
	}{
		{"none", nil, nil},
		{"in order, once each", []string{"b", "a", "b", ""}, []int{2}},
		{"by count", many, []int{25, 1}},
		// Three long scopes fit in one request, not four.
		{"by length", []string{long + "1", long + "2", long + "3", long + "4", "a"}, []int{3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := batches(tc.repos)
			var sizes []int
			var all []string
			for _, b := range got {
				sizes = append(sizes, len(b))
				all = append(all, b...)
				if n := len(strings.Join(b, " ")); len(b) > 1 && n > maxScopeText {
					t.Errorf("batch of %d characters, more than %d", n, maxScopeText)
				}
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tc.sizes)
			}
			var want []string
			for _, r := range tc.repos {
				if sc := pullScope(r); r != "" && !slices.Contains(want, sc) {
					want = append(want, sc)
				}
			}
			if !slices.Equal(all, want) {
				t.Errorf("scopes %v, want %v", all, want)
			}
		})
	}
}

// TestRepoOfPath names the repository of the distribution API's paths.
func TestRepoOfPath(t *testing.T) {
	for path, want := range map[string]string{
		"/v2/":                             "",
		"/v2/a/b/tags/list":                "a/b",
		"/v2/a/manifests/1.0":              "a",
		"/v2/a/manifests/b/manifests/1.0":  "a/manifests/b",
		"/v2/a/blobs/sha256:00":            "a",
		"/v2/a/manifests/b/blobs/sha256:0": "a/manifests/b",
		"/v2/a/blobs/b/manifests/1.0":      "a/blobs/b",
		"/token":                           "",
	} {
		if got := repoOfPath(path); got != want {
			t.Errorf("repoOfPath(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestSessionDockerConfigOnce: with the Docker config's credential helper,
// a fleet on the basic-auth registry runs the helper once.
func TestSessionDockerConfigOnce(t *testing.T) {
	onRegistriesSerial(t, basicRegistry, func(t *testing.T, reg *testRegistry) {
		user, password := reg.user, reg.password
		repos := reg.fleet(t, "session/helper", 3)
		dir := t.TempDir()
		calls := filepath.Join(dir, "calls")
		helper := fmt.Sprintf("#!/bin/sh\necho called >> %s\ncat >/dev/null\nprintf '{\"Username\":\"%s\",\"Secret\":\"%s\"}'\n", calls, user, password)
		if err := os.WriteFile(filepath.Join(dir, "docker-credential-pintest"), []byte(helper), 0o700); err != nil {
			t.Fatal(err)
		}
		conf := fmt.Sprintf(`{"credHelpers": {%q: "pintest"}}`, reg.host)
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", dir)
		t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		c := newCounter(t)
		r := NewRemote(RemoteOptions{Host: reg.host, Transport: c, Repositories: repos}) // authn.DefaultKeychain
		readAll(t, r, repos)
		b, err := os.ReadFile(calls)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "called"); n != 1 {
			t.Errorf("the credential helper ran %d times, want once", n)
		}
	})
}

// TestSessionTokenRegistry: against a registry that hands out Bearer
// tokens (the real one: distribution verifying each token's signature,
// audience, expiry and scopes; the in-memory one: tokenRegistry), a fleet
// costs one ping (https, then plain http) and one token for all of its
// repositories, then exactly the cost model's requests per module.
func TestSessionTokenRegistry(t *testing.T) {
	t.Parallel()
	onRegistries(t, bearerRegistry, func(t *testing.T, reg *testRegistry) {
		repos := reg.fleet(t, fmt.Sprintf("session/token-%d", time.Now().UnixNano()), 4)
		r, c := newTestRemote(t, RemoteOptions{Host: reg.host, Repositories: repos})
		readAll(t, r, repos)
		c.expect(t, "fleet", map[string]int{"ping https": 1, "ping http": 1, "token": 1, "tags list": 4, "manifest GET": 4, "blob GET": 4})
		if bad := c.unauthenticated(); len(bad) > 0 {
			t.Errorf("sent without a token:\n  %s", strings.Join(bad, "\n  "))
		}

		// Not in the catalogue: a token of its own, once.
		other := reg.fleet(t, fmt.Sprintf("session/token-other-%d", time.Now().UnixNano()), 1)
		readAll(t, r, other)
		readAll(t, r, other)
		c.expect(t, "not expected", map[string]int{"token": 1, "tags list": 2, "manifest GET": 2, "blob GET": 2})
	})
}
