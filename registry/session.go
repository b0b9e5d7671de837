package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Bounds on one token request for several repositories: how many scopes
// it asks for, and how long their text may be. Every scope adds an entry
// to the token, and the token travels in every request's Authorization
// header; 25 keeps it a few kilobytes, under the 8 KiB a header line may
// have behind nginx's defaults.
const (
	maxScopesPerToken = 25
	maxScopeText      = 2048
)

// session is pin's one handshake with one registry for a run.
//
// go-containerregistry, left to itself, pings the registry and takes a
// token once per repository: two requests per module on top of the cost
// model. A session pings once, reads the credentials from the keychain
// once, and then:
//
//   - for a registry that asks for no credentials or for Basic ones, one
//     transport serves every repository;
//   - for a Bearer registry (Docker Hub, ghcr.io, Quay, Harbor), one token
//     covers the repositories the run expects (RemoteOptions.Repositories,
//     in batches of maxScopesPerToken), taken when the first of them is
//     asked for, while the next batch's is taken in the background; a
//     repository not expected gets its own token. Should a token server
//     refuse a batch, each repository of it asks alone.
//
// A session is the http.RoundTripper the Puller is given, inside a
// transport.Wrapper: go-containerregistry then neither pings nor
// authenticates itself. It is safe for concurrent use.
type session struct {
	reg      name.Registry // the registry asked (Host, or its mirror)
	keychain authn.Keychain
	next     http.RoundTripper // retries, limits, screening: every request, the token's too

	start     gate
	scheme    string              // "https", or "http" when the ping found plain http
	auth      authn.Authenticator // the keychain's answer for reg
	challenge *transport.Challenge
	basic     http.RoundTripper // when the registry is not a Bearer one

	mu      sync.Mutex
	batchOf map[string]*grant // repository (as asked) → the token that covers it
}

// grant is one token, for one or more repositories.
type grant struct {
	scopes []string
	gate   gate
	rt     http.RoundTripper
	// next is the batch after this one: its token is asked for in the
	// background as soon as this one is first used, so that the modules
	// resolved next do not all wait for it.
	next  *grant
	ahead sync.Once
}

func newSession(reg name.Registry, keychain authn.Keychain, next http.RoundTripper, expected []string) *session {
	s := &session{reg: reg, keychain: keychain, next: next, batchOf: map[string]*grant{}}
	var prev *grant
	for _, scopes := range batches(expected) {
		g := &grant{scopes: scopes}
		for _, sc := range scopes {
			s.batchOf[repoOfScope(sc)] = g
		}
		if prev != nil {
			prev.next = g
		}
		prev = g
	}
	return s
}

// batches splits repositories into the scopes of token requests, in the
// order given (pin gives the catalogue's, the order modules are resolved
// in) without repeats, at most maxScopesPerToken and maxScopeText
// characters each.
func batches(repos []string) [][]string {
	seen := map[string]bool{}
	var out [][]string
	var cur []string
	n := 0
	for _, r := range repos {
		if r == "" || seen[r] {
			continue
		}
		seen[r] = true
		sc := pullScope(r)
		if len(cur) > 0 && (len(cur) == maxScopesPerToken || n+len(sc) > maxScopeText) {
			out = append(out, cur)
			cur, n = nil, 0
		}
		cur = append(cur, sc)
		n += len(sc) + 1
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func pullScope(repo string) string { return "repository:" + repo + ":pull" }

func repoOfScope(scope string) string {
	return strings.TrimSuffix(strings.TrimPrefix(scope, "repository:"), ":pull")
}

// prepare makes sure requests for repo (as asked; "" for none) can be
// sent: the registry has been pinged, and when it wants a token, repo has
// one. Calls made after the first cost nothing.
func (s *session) prepare(ctx context.Context, repo string) (http.RoundTripper, error) {
	if err := s.start.do(ctx, s.handshake); err != nil {
		return nil, err
	}
	if s.basic != nil {
		return s.basic, nil
	}
	g := s.grantFor(repo, false)
	if g.next != nil {
		g.ahead.Do(func() {
			next := g.next
			go next.gate.do(context.WithoutCancel(ctx), func(ctx context.Context) error { return s.exchange(ctx, next) })
		})
	}
	err := g.gate.do(ctx, func(ctx context.Context) error { return s.exchange(ctx, g) })
	if len(g.scopes) > 1 && refused(err) {
		// The token server refused the batch (a scope it would not grant
		// may fail the whole request): this repository asks alone.
		g = s.grantFor(repo, true)
		err = g.gate.do(ctx, func(ctx context.Context) error { return s.exchange(ctx, g) })
	}
	if err != nil {
		return nil, err
	}
	return g.rt, nil
}

// refused reports whether a token server answered with a 4xx status.
func refused(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode >= 400 && terr.StatusCode < 500
}

// grantFor is the token that covers repo: its batch's, or (alone, or not
// expected) its own.
func (s *session) grantFor(repo string, alone bool) *grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.batchOf[repo]
	if g == nil || (alone && len(g.scopes) > 1) {
		var scopes []string
		if repo != "" {
			scopes = []string{pullScope(repo)}
		}
		g = &grant{scopes: scopes}
		s.batchOf[repo] = g
	}
	return g
}

// handshake pings the registry and reads its credentials.
func (s *session) handshake(ctx context.Context) error {
	pr, err := transport.Ping(ctx, s.reg, s.next)
	if err != nil {
		return fmt.Errorf("reaching %s: %w", s.reg.RegistryStr(), err)
	}
	s.challenge, s.scheme = pr, "https"
	if pr.Insecure {
		s.scheme = "http"
	}
	if s.auth, err = authn.Resolve(ctx, s.keychain, s.reg); err != nil {
		return err
	}
	if !strings.EqualFold(pr.Scheme, "bearer") {
		// No credentials asked for, or Basic ones: sent with every request.
		if s.basic, err = transport.FromToken(s.reg, s.auth, s.next, pr, nil); err != nil {
			return fmt.Errorf("authenticating with %s: %w", s.reg.RegistryStr(), err)
		}
	}
	return nil
}

// exchange takes the token of g from the registry's token server, or uses
// the registry token the Docker config holds.
func (s *session) exchange(ctx context.Context, g *grant) error {
	cfg, err := authn.Authorization(ctx, s.auth)
	if err != nil {
		return err
	}
	tok := &transport.Token{Token: cfg.RegistryToken}
	if tok.Token == "" {
		tok, err = transport.Exchange(ctx, s.reg, s.auth, s.next, g.scopes, s.challenge)
		if err != nil {
			return fmt.Errorf("authenticating with %s: %w", s.reg.RegistryStr(), err)
		}
		if tok.Token == "" {
			tok.Token = tok.AccessToken // OAuth2 servers answer access_token alone
		}
	}
	// When the token expires the registry challenges again, and the
	// transport takes a new one for the repository challenged.
	g.rt, err = transport.FromToken(s.reg, s.auth, s.next, s.challenge, tok)
	if err != nil {
		return fmt.Errorf("authenticating with %s: %w", s.reg.RegistryStr(), err)
	}
	return nil
}

// RoundTrip sends a request of the Puller's with the session's scheme and
// credentials. Requests to other hosts (a blob's storage, after a
// redirect) go as they are.
func (s *session) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != s.reg.RegistryStr() {
		return s.next.RoundTrip(req)
	}
	rt, err := s.prepare(req.Context(), repoOfPath(req.URL.Path))
	if err != nil {
		return nil, err
	}
	if req.URL.Scheme != s.scheme {
		u := *req.URL
		u.Scheme = s.scheme
		req = req.Clone(req.Context())
		req.URL = &u
	}
	return rt.RoundTrip(req)
}

// repoOfPath is the repository a /v2/<name>/{tags,manifests,blobs}/…
// path names, or "".
func repoOfPath(path string) string {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		return ""
	}
	if r, ok := strings.CutSuffix(rest, "/tags/list"); ok {
		return r
	}
	for _, sep := range []string{"/manifests/", "/blobs/"} {
		if i := strings.LastIndex(rest, sep); i > 0 {
			return rest[:i]
		}
	}
	return ""
}

// gate runs a function until it has run to an answer once, and keeps that
// answer, error or not, for the run; only a caller's own cancellation or
// deadline is not kept, so that the next caller tries again. Callers wait
// for the one running, or for their context.
type gate struct {
	sem  chan struct{} // holds one token while the function runs
	once sync.Once
	done atomic.Bool // set after err
	err  error
}

func (g *gate) do(ctx context.Context, f func(context.Context) error) error {
	if g.done.Load() {
		return g.err
	}
	g.once.Do(func() { g.sem = make(chan struct{}, 1) })
	select {
	case g.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-g.sem }()
	if g.done.Load() {
		return g.err
	}
	err := f(ctx)
	if err != nil && ctx.Err() != nil {
		return err
	}
	g.err = err
	g.done.Store(true)
	return err
}
