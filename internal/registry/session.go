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
	creds     credState           // what auth sends: none, Basic credentials, or credentials for tokens
	challenge *transport.Challenge
	basic     http.RoundTripper // when the registry is not a Bearer one
	// explain, when set, names a failure of the ping that it recognises
	// (TLS): see tlsSetup.explain.
	explain func(error) error

	mu      sync.Mutex
	batchOf map[string]*grant // repository (as asked) → the token that covers it
}

// grant is one token, for one or more repositories. It is the
// http.RoundTripper of their requests: it sends the token with each, and
// when the registry challenges one (the token expired), it takes a new
// token for all its scopes, once for all the requests challenged with the
// same token, and sends the request again.
type grant struct {
	s      *session
	scopes []string
	gate   gate // the first token

	mu    sync.Mutex // guards tok
	tok   string
	fixed bool       // the Docker config's registry token: not renewed
	renew sync.Mutex // one renewal at a time

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
		g := &grant{s: s, scopes: scopes}
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
			go next.gate.do(context.WithoutCancel(ctx), next.first)
		})
	}
	err := g.gate.do(ctx, g.first)
	if len(g.scopes) > 1 && refused(err) {
		// The token server refused the batch (a scope it would not grant
		// may fail the whole request): this repository asks alone.
		g = s.grantFor(repo, true)
		err = g.gate.do(ctx, g.first)
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// refused reports whether a token server refused a request as such (400,
// 403), rather than failing it (5xx), limiting its rate (429) or refusing
// the credentials (401), which asking for fewer scopes would not mend.
func refused(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && (terr.StatusCode == http.StatusBadRequest || terr.StatusCode == http.StatusForbidden)
}

// lasting reports whether a failure would come again within the run, and
// so is kept: a refusal of pin's own (ErrRefused), the credentials that
// cannot be read, a TLS failure pin recognises (TLSError), or a 4xx
// answer other than 408 and 429. Timeouts, network errors and 5xx answers
// (already retried) are not kept: the next caller tries again.
func lasting(err error) bool {
	var terr *transport.Error
	var kerr keychainError
	var tlsErr *TLSError
	switch {
	case errors.Is(err, ErrRefused), errors.As(err, &kerr), errors.As(err, &tlsErr):
		return true
	case errors.As(err, &terr):
		c := terr.StatusCode
		return c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests
	}
	return false
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
		g = &grant{s: s, scopes: scopes}
		s.batchOf[repo] = g
	}
	return g
}

// handshake pings the registry and reads its credentials.
func (s *session) handshake(ctx context.Context) error {
	pr, err := transport.Ping(ctx, s.reg, s.next)
	if err != nil {
		if s.explain != nil {
			err = s.explain(err)
		}
		return fmt.Errorf("reaching %s: %w", s.reg.RegistryStr(), err)
	}
	s.challenge, s.scheme = pr, "https"
	if pr.Insecure {
		s.scheme = "http"
	}
	if s.auth, err = authn.Resolve(ctx, s.keychain, s.reg); err != nil {
		return err
	}
	s.creds = credsToken
	if !strings.EqualFold(pr.Scheme, "bearer") {
		s.creds = credsBasic
	}
	if cfg, err := authn.Authorization(ctx, s.auth); err != nil {
		return keychainError{err}
	} else if *cfg == (authn.AuthConfig{}) {
		s.creds = credsNone
	}
	if !strings.EqualFold(pr.Scheme, "bearer") {
		// No credentials asked for, or Basic ones: sent with every request.
		if s.basic, err = transport.FromToken(s.reg, s.auth, s.next, pr, nil); err != nil {
			return fmt.Errorf("authenticating with %s: %w", s.reg.RegistryStr(), err)
		}
	}
	return nil
}

// first takes g's first token.
func (g *grant) first(ctx context.Context) error {
	tok, err := g.s.token(ctx, g)
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.tok = tok
	g.mu.Unlock()
	return nil
}

// token takes a token for g's scopes from the registry's token server, or
// uses the registry token the Docker config holds.
func (s *session) token(ctx context.Context, g *grant) (string, error) {
	cfg, err := authn.Authorization(ctx, s.auth)
	if err != nil {
		return "", keychainError{err}
	}
	if cfg.RegistryToken != "" {
		g.fixed = true
		return cfg.RegistryToken, nil
	}
	tok, err := transport.Exchange(ctx, s.reg, s.auth, s.next, g.scopes, s.challenge)
	if err != nil {
		if ae := authError(err, s.reg.RegistryStr()); ae != nil {
			ae.TokenServer = s.challenge.Parameters["realm"]
			if len(g.scopes) == 1 {
				ae.Repository = repoOfScope(g.scopes[0])
			}
			ae.creds = s.creds
			err = ae
		}
		return "", fmt.Errorf("authenticating with %s: %w", s.reg.RegistryStr(), err)
	}
	if tok.Token != "" {
		return tok.Token, nil
	}
	return tok.AccessToken, nil // OAuth2 servers answer access_token alone
}

// RoundTrip sends req (to the registry, GET or HEAD) with g's token, and
// once more with a new token when the registry challenges it.
func (g *grant) RoundTrip(req *http.Request) (*http.Response, error) {
	g.mu.Lock()
	tok := g.tok
	g.mu.Unlock()
	resp, err := g.s.next.RoundTrip(withBearer(req, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || g.fixed ||
		(req.Body != nil && req.Body != http.NoBody) || !bearerChallenge(resp) {
		return resp, err
	}
	fresh, err := g.renewFrom(req.Context(), tok)
	if err != nil {
		return resp, nil // the registry's own answer says more
	}
	resp.Body.Close()
	return g.s.next.RoundTrip(withBearer(req, fresh))
}

// renewFrom replaces the token stale with a new one for all of g's scopes,
// unless another request has already replaced it.
func (g *grant) renewFrom(ctx context.Context, stale string) (string, error) {
	g.renew.Lock()
	defer g.renew.Unlock()
	g.mu.Lock()
	cur := g.tok
	g.mu.Unlock()
	if cur != stale {
		return cur, nil
	}
	tok, err := g.s.token(ctx, g)
	if err != nil {
		return "", err
	}
	g.mu.Lock()
	g.tok = tok
	g.mu.Unlock()
	return tok, nil
}

func withBearer(req *http.Request, tok string) *http.Request {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	return req
}

// bearerChallenge reports whether a 401 asks for a Bearer token.
func bearerChallenge(resp *http.Response) bool {
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		if scheme, _, _ := strings.Cut(strings.TrimSpace(v), " "); strings.EqualFold(scheme, "bearer") {
			return true
		}
	}
	return false
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
	if req.URL.Scheme == s.scheme {
		resp, err := rt.RoundTrip(req)
		return s.refusal(resp), err
	}
	orig := req
	u := *req.URL
	u.Scheme = s.scheme
	req = req.Clone(req.Context())
	req.URL = &u
	resp, err := rt.RoundTrip(req)
	if resp != nil && resp.StatusCode < 300 {
		// go-containerregistry resolves a tag list's next page against
		// the request, and wants the scheme it asked with. An error
		// answer keeps the request as sent: go-containerregistry's error
		// names its URL, which must say https when https was used.
		resp.Request = orig
	}
	return s.refusal(resp), err
}

// refusal leaves on the request of a 401 or 403 answer what credentials
// were sent, for the error go-containerregistry makes of it (authError).
func (s *session) refusal(resp *http.Response) *http.Response {
	if resp != nil && resp.Request != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		resp.Request = resp.Request.WithContext(context.WithValue(resp.Request.Context(), credsKey{}, s.creds))
	}
	return resp
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
	// The rightmost of either: a repository may have a component named
	// "manifests" or "blobs"; a tag or digest has no "/".
	i := max(strings.LastIndex(rest, "/manifests/"), strings.LastIndex(rest, "/blobs/"))
	if i > 0 {
		return rest[:i]
	}
	return ""
}

// gate runs a function once for all the callers that come while it runs,
// and keeps its answer for the run when that is a success or a lasting
// failure; after a passing failure (a timeout, a network error, a 5xx) the
// next caller runs it again. A run whose own caller gave up (its context
// ended) is run again by a caller still waiting.
type gate struct {
	mu   sync.Mutex
	kept atomic.Bool // err is the answer for the run
	err  error
	call *attempt // the run under way, or nil
}

type attempt struct {
	done   chan struct{}
	err    error
	gaveUp bool // its caller's context ended
}

func (g *gate) do(ctx context.Context, f func(context.Context) error) error {
	for {
		if g.kept.Load() {
			return g.err
		}
		g.mu.Lock()
		if g.kept.Load() {
			g.mu.Unlock()
			return g.err
		}
		if a := g.call; a != nil {
			g.mu.Unlock()
			select {
			case <-a.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if a.gaveUp {
				continue
			}
			return a.err
		}
		a := &attempt{done: make(chan struct{})}
		g.call = a
		g.mu.Unlock()

		a.err = f(ctx)
		a.gaveUp = a.err != nil && ctx.Err() != nil
		g.mu.Lock()
		g.call = nil
		if a.err == nil || (!a.gaveUp && lasting(a.err)) {
			g.err = a.err
			g.kept.Store(true)
		}
		g.mu.Unlock()
		close(a.done)
		return a.err
	}
}
