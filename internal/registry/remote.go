package registry

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/logs"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/pin-tool/pin/internal/image"
)

// Defaults of RemoteOptions.
const (
	DefaultConcurrency = 8
	DefaultTimeout     = 30 * time.Second
	// DefaultPageSize is the number of tags asked for per tag-list request,
	// go-containerregistry's default (ECR refuses more than 1000).
	DefaultPageSize = 1000
)

// Bounds on what is read into memory. A manifest (or index) larger than
// MaxManifestSize, or a config larger than MaxConfigSize, is refused with
// ErrTooLarge: at once when its Content-Length says so, else as soon as
// that many bytes have been read. The manifest bound is distribution's own
// (it refuses to store larger manifests); configs are a few kilobytes, and
// a digest that names a layer must not pull gigabytes.
const (
	MaxManifestSize = 4 << 20
	MaxConfigSize   = 4 << 20
)

// maxTagPages bounds the pages of one tag list (a million tags at the
// default page size): a registry whose Link headers never end is refused.
const maxTagPages = 1000

// ErrTooLarge is returned when a manifest or config is larger than its bound.
var ErrTooLarge = errors.New("too large")

// ErrRefused is returned when a registry asks for something pin does not do:
// follow a Link to another host or around in a loop, or authenticate at a
// token server that is not on the registry's host or domain.
var ErrRefused = errors.New("refused")

// RemoteOptions configures a Remote.
type RemoteOptions struct {
	// Host is the registry host as it appears in image names
	// ("registry.example.org", "127.0.0.1:5000", "index.docker.io"; ""
	// and "docker.io" mean index.docker.io).
	Host string
	// Mirror is another registry host to ask instead of Host. Repository
	// paths are kept, the host replaced; images keep Host's names.
	Mirror string
	// Insecure allows plain http to the registry asked (Mirror when set,
	// else Host), after https has failed. Loopback hosts (127.0.0.0/8, ::1,
	// localhost) always may; any other plain-http request is refused.
	Insecure bool
	// Keychain finds credentials; nil means authn.DefaultKeychain (the
	// Docker config at $DOCKER_CONFIG or ~/.docker, and its credential
	// helpers). It is asked once per run, for the registry asked (not
	// per repository).
	Keychain authn.Keychain
	// Concurrency bounds the requests in flight to the registry, from
	// sending the request until its response body is closed (default 8).
	Concurrency int
	// Cache keeps manifests, configs and tag hints on disk; nil means none.
	Cache *Cache
	// Transport is the base transport (default remote.DefaultTransport).
	Transport http.RoundTripper
	// Timeout bounds each request, its response body included (default
	// 30s). A retry is a new request with its own timeout.
	Timeout time.Duration
	// PageSize is the number of tags asked for per tag-list request
	// (default 1000).
	PageSize int
	// TokenHosts are hosts (host or host:port), other than the registry's
	// own and those of its parent domain, that may have its credentials as
	// its token server, over https (or on loopback): nvcr.io's is
	// authn.nvidia.com. See realmAllowed.
	TokenHosts []string
	// Repositories are the repositories (named under Host) the run
	// expects to read. A registry that hands out Bearer tokens is asked
	// for one token that covers them all (in batches of 25), rather than
	// one per repository; a repository not named here costs a token of
	// its own.
	Repositories []string
}

// Remote is a registry read over the OCI distribution API.
//
// One Remote talks to one registry (or its mirror) through one
// remote.Puller and one session, so that the registry is pinged once and
// its credentials read once per run, and a registry that hands out Bearer
// tokens gives one for many of the repositories expected (see
// RemoteOptions.Repositories); it bounds its requests in flight.
// Manifests and configs are verified against their digests; with a Cache
// they are fetched once ever, and a tag costs one HEAD when its manifest is
// cached. Tag lists are never cached.
//
// Only GET and HEAD requests are retried (an OAuth2 token POST never is):
// on 408, 429, 500, 502, 503 and 504 answers and on connections reset or
// closed under them, three attempts at most, waiting what Retry-After says
// (a minute at most: a longer wait is not waited for, the answer is
// returned) or else 1s, then 3s. go-containerregistry's own retries, which
// ignore Retry-After and retry any method, are switched off.
//
// Every answer is screened before go-containerregistry reads it: manifests
// and configs are bounded (MaxManifestSize, MaxConfigSize) and checked
// against the digest asked for and the Docker-Content-Digest the registry
// states; a Link header to another host, or tag-list pages that loop, are
// refused; a WWW-Authenticate challenge whose token server (realm) is not
// on the registry's host is refused before any credentials are sent (see
// realmAllowed); and the credentials a request carried are cut out of the
// body of an error answer, should a registry echo them.
//
// A Remote is safe for concurrent use.
type Remote struct {
	host    name.Registry // as in image names
	source  name.Registry // asked: the mirror, or host
	mirror  bool
	cache   *Cache
	session *session
	puller  *remote.Puller
	err     error // from NewRemote, returned by every call
}

// NewRemote returns a source for the registry opts.Host. It does no I/O;
// an invalid host is reported by the first call.
func NewRemote(opts RemoteOptions) *Remote {
	r := &Remote{cache: opts.Cache, mirror: opts.Mirror != ""}
	host, err := name.NewRegistry(opts.Host)
	if err != nil {
		r.err = fmt.Errorf("registry %q: %w", opts.Host, err)
		return r
	}
	r.host, r.source = host, host
	if r.mirror {
		if r.source, err = name.NewRegistry(opts.Mirror); err != nil {
			r.err = fmt.Errorf("mirror %q of %s: %w", opts.Mirror, opts.Host, err)
			return r
		}
	}
	plainHTTP := opts.Insecure || isLoopback(r.source.RegistryStr())
	if plainHTTP {
		// Lets go-containerregistry fall back to http after https fails;
		// alone it does so only for 127.0.0.1, localhost and private
		// addresses, the last of which guard refuses.
		if r.source, err = name.NewRegistry(r.source.RegistryStr(), name.Insecure); err != nil {
			r.err = err
			return r
		}
	}

	base := opts.Transport
	if base == nil {
		base = remote.DefaultTransport
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	n := opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	keychain := opts.Keychain
	if keychain == nil {
		keychain = authn.DefaultKeychain
	}
	keychain = quietKeychain{keychain}

	// From the outside in: the session (one ping, one set of credentials,
	// tokens for many repositories at once), retries, the bound on
	// requests in flight with the timeout of each attempt, the screening
	// of answers, the plain-http and credentials guard, the base transport.
	if logs.Enabled(logs.Debug) {
		// As go-containerregistry does for a transport it wraps itself:
		// request dumps, with the Authorization header redacted.
		base = transport.NewLogger(base)
	}
	var rt http.RoundTripper = &guard{next: base, host: r.source.RegistryStr(), allowHTTP: plainHTTP, tokenHosts: opts.TokenHosts}
	rt = &screen{next: rt, host: r.source.RegistryStr(), tokenHosts: opts.TokenHosts}
	rt = &limiter{next: rt, sem: make(chan struct{}, n), timeout: timeout}
	rt = &retrying{next: rt, attempts: 3, backoff: []time.Duration{time.Second, 3 * time.Second}, maxWait: time.Minute}
	rt = transport.NewUserAgent(rt, "pin")
	var expected []string
	for _, repo := range opts.Repositories {
		if target, err := r.repository(repo); err == nil {
			expected = append(expected, target.RepositoryStr())
		}
	}
	r.session = newSession(r.source, keychain, rt, expected)

	// A transport.Wrapper tells go-containerregistry that the transport
	// does its own authentication and retries: the Puller then neither
	// pings nor authenticates per repository, and adds no retries of its
	// own (they take any method and ignore Retry-After). FromToken with
	// no challenge is how one is had around a transport of one's own.
	wrapped, err := transport.FromToken(r.source, authn.Anonymous, r.session, &transport.Challenge{}, nil)
	if err != nil {
		r.err = err
		return r
	}
	r.puller, r.err = remote.NewPuller(
		remote.WithTransport(wrapped),
		// Its own bound on blob downloads (4) must not be the tighter one.
		remote.WithJobs(n),
		remote.WithPageSize(pageSize),
	)
	return r
}

// Tags lists the repository's tags, every page of them, sorted.
func (r *Remote) Tags(ctx context.Context, repo string) ([]string, error) {
	target, err := r.repository(repo)
	if err != nil {
		return nil, err
	}
	fail := func(err error) error {
		return fmt.Errorf("listing tags of %s: %w", r.where(repo), classify(err))
	}
	if err := r.ready(ctx, target); err != nil {
		return nil, fail(err)
	}
	lister, err := r.puller.Lister(ctx, target)
	if err != nil {
		return nil, fail(err)
	}
	// Pages are followed by their Link header (screen refuses one to
	// another host); a page named twice is a loop.
	var tags []string
	seen := map[string]bool{}
	for lister.HasNext() {
		page, err := lister.Next(ctx)
		if err != nil {
			return nil, fail(err)
		}
		tags = append(tags, page.Tags...)
		if page.Next == "" {
			continue
		}
		if seen[page.Next] {
			return nil, fail(fmt.Errorf("the Link header loops back to %s, a page already read: %w", redactURL(page.Next), ErrRefused))
		}
		if len(seen) >= maxTagPages {
			return nil, fail(fmt.Errorf("more than %d pages of tags: %w", maxTagPages, ErrRefused))
		}
		seen[page.Next] = true
	}
	slices.Sort(tags)
	return slices.Compact(tags), nil
}

// Image describes repo:ref, ref being a tag or a "sha256:" digest, with an
// index resolved to platform.
func (r *Remote) Image(ctx context.Context, repo, ref, platform string) (image.Image, error) {
	if _, err := r.repository(repo); err != nil {
		return image.Image{}, err
	}
	return describe(ctx, r, repo, ref, platform)
}

// manifest fetches a manifest by tag or digest. By digest, a cached copy
// costs nothing. By tag, when the cache has a hint for the tag, a HEAD
// learns the tag's digest and a cached copy of that is used; otherwise (no
// hint, or the tag moved to a manifest not cached) the manifest is fetched
// by tag.
func (r *Remote) manifest(ctx context.Context, repo, ref string) ([]byte, string, error) {
	target, err := r.repository(repo)
	if err != nil {
		return nil, "", err
	}
	what := r.where(reference(repo, ref))
	if strings.HasPrefix(ref, "sha256:") {
		if b, ok := r.cache.get(ref); ok {
			return b, ref, nil
		}
		d, err := digestRef(target, ref)
		if err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
		if err := r.ready(ctx, target); err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
		desc, err := r.puller.Get(ctx, d)
		if err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, classify(err))
		}
		if err := verify(desc.Manifest, ref); err != nil {
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
		r.cache.put(ref, desc.Manifest)
		return desc.Manifest, ref, nil
	}

	if _, err := name.NewTag(target.Name()+":"+ref, name.StrictValidation); err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
	}
	if err := r.ready(ctx, target); err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
	}
	hintKey := r.host.Repo(target.RepositoryStr()).Name()
	if _, ok := r.cache.hint(hintKey, ref); ok {
		desc, err := r.puller.Head(ctx, target.Tag(ref))
		switch {
		case err == nil:
			digest := desc.Digest.String()
			if b, ok := r.cache.get(digest); ok {
				r.cache.remember(hintKey, ref, digest)
				return b, digest, nil
			}
		case unusableHead(err):
			// Answered, but without the digest (some proxies drop the
			// header from HEAD answers): the GET below tells.
		default:
			err = classify(err)
			if errors.Is(err, ErrNotFound) {
				r.cache.forget(hintKey, ref)
			}
			return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
		}
	}
	desc, err := r.puller.Get(ctx, target.Tag(ref))
	if err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, classify(err))
	}
	if desc.MediaType == types.DockerManifestSchema1 || desc.MediaType == types.DockerManifestSchema1Signed {
		return nil, "", fmt.Errorf("manifest of %s: Docker schema 1 manifests are not supported", what)
	}
	digest := desc.Digest.String()
	if err := verify(desc.Manifest, digest); err != nil {
		return nil, "", fmt.Errorf("manifest of %s: %w", what, err)
	}
	r.cache.put(digest, desc.Manifest)
	r.cache.remember(hintKey, ref, digest)
	return desc.Manifest, digest, nil
}

// blob fetches a blob (a config) by digest, or reads it from the cache.
func (r *Remote) blob(ctx context.Context, repo, digest string) ([]byte, error) {
	if b, ok := r.cache.get(digest); ok {
		return b, nil
	}
	target, err := r.repository(repo)
	if err != nil {
		return nil, err
	}
	d, err := digestRef(target, digest)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", digest, err)
	}
	if err := r.ready(ctx, target); err != nil {
		return nil, fmt.Errorf("blob %s: %w", digest, err)
	}
	layer, err := r.puller.Layer(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("blob %s from %s: %w", digest, r.source.RegistryStr(), classify(err))
	}
	rc, err := layer.Compressed()
	if err != nil {
		return nil, fmt.Errorf("blob %s from %s: %w", digest, r.source.RegistryStr(), classify(err))
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("blob %s from %s: %w", digest, r.source.RegistryStr(), classify(err))
	}
	if len(b) > MaxConfigSize {
		return nil, fmt.Errorf("blob %s from %s: larger than %s, not a config: %w", digest, r.source.RegistryStr(), sizeText(MaxConfigSize), ErrTooLarge)
	}
	if err := verify(b, digest); err != nil {
		return nil, fmt.Errorf("blob from %s: %w", r.source.RegistryStr(), err)
	}
	r.cache.put(digest, b)
	return b, nil
}

// ready pings the registry and authenticates for target, once each per
// run, before the first request for it; a failure then reads as the
// registry's, not as that of the request that happened to come first.
func (r *Remote) ready(ctx context.Context, target name.Repository) error {
	_, err := r.session.prepare(ctx, target.RepositoryStr())
	return classify(err)
}

// repository maps a repository named under Host to the one asked.
func (r *Remote) repository(repo string) (name.Repository, error) {
	if r.err != nil {
		return name.Repository{}, r.err
	}
	parsed, err := name.NewRepository(repo)
	if err != nil {
		return name.Repository{}, fmt.Errorf("repository %q: %w", repo, err)
	}
	if parsed.RegistryStr() != r.host.RegistryStr() {
		return name.Repository{}, fmt.Errorf("repository %s is not on registry %s", repo, r.host.RegistryStr())
	}
	return r.source.Repo(parsed.RepositoryStr()), nil
}

// digestRef checks a digest and names it in the repository; the repository
// keeps the registry's scheme, and so the fetcher the Puller keeps for it.
func digestRef(repo name.Repository, digest string) (name.Digest, error) {
	if _, err := name.NewDigest(repo.Name()+"@"+digest, name.StrictValidation); err != nil {
		return name.Digest{}, err
	}
	return repo.Digest(digest), nil
}

// where names what is asked for in errors, and the mirror that was asked.
func (r *Remote) where(s string) string {
	if r.mirror {
		return fmt.Sprintf("%s (mirror %s)", s, r.source.RegistryStr())
	}
	return s
}

func reference(repo, ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return repo + "@" + ref
	}
	return repo + ":" + ref
}

// classify marks a registry's 404 as ErrNotFound, keeping its error, and
// names the HTTP status of an error answer whose message does not (an OCI
// error body: "UNKNOWN: …" alone does not say it was a 503).
func classify(err error) error {
	var terr *transport.Error
	if !errors.As(err, &terr) {
		return err
	}
	if len(terr.Errors) > 0 {
		err = withStatus{err: err, code: terr.StatusCode}
	}
	if terr.StatusCode == http.StatusNotFound {
		return notFound{err}
	}
	return err
}

// withStatus adds the HTTP status to a registry's error.
type withStatus struct {
	err  error
	code int
}

func (e withStatus) Error() string {
	return fmt.Sprintf("%s (HTTP %d %s)", e.err, e.code, http.StatusText(e.code))
}
func (e withStatus) Unwrap() error { return e.err }

// unusableHead reports whether a HEAD failed after the registry answered
// it successfully (go-containerregistry's errors for a missing
// Docker-Content-Digest, Content-Type or Content-Length), or was refused
// as a method: then a GET can still answer. An error status, a network
// error or a cancelled context is not worth a GET after it.
func unusableHead(err error) bool {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return terr.StatusCode == http.StatusMethodNotAllowed || terr.StatusCode == http.StatusNotImplemented
	}
	var uerr *url.Error
	return !errors.As(err, &uerr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// notFound reads as the registry's error and matches ErrNotFound.
type notFound struct{ err error }

func (e notFound) Error() string   { return e.err.Error() }
func (e notFound) Unwrap() []error { return []error{e.err, ErrNotFound} }

// isLoopback reports whether host[:port] is localhost or a loopback address.
func isLoopback(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// guard refuses plain http except to loopback hosts, and to the registry
// asked when it is insecure. go-containerregistry alone falls back to http
// for private addresses (10/8, 172.16/12, 192.168/16) too.
type guard struct {
	next       http.RoundTripper
	host       string // host[:port] of the registry asked
	allowHTTP  bool
	tokenHosts []string
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !isLoopback(req.URL.Host) && !(g.allowHTTP && req.URL.Host == g.host) {
		return nil, fmt.Errorf("plain http to %s refused: the registry is not marked insecure", req.URL.Host)
	}
	// The last line of defence for credentials: a user name and password
	// go to the registry, or to its token server when realmAllowed says
	// so, and nowhere else (screen refuses such a realm earlier, with a
	// better message).
	if scheme, _, _ := strings.Cut(req.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "basic") && !realmAllowed(req.URL, g.host, g.tokenHosts) {
		return nil, fmt.Errorf("sending the credentials of %s to %s refused: %w", g.host, req.URL.Host, ErrRefused)
	}
	// pin only reads: the one request with a body is an OAuth2 token
	// request, whose body holds a refresh token or a password. It goes
	// where credentials may go, redirected or not.
	if req.Method != http.MethodGet && req.Method != http.MethodHead && !realmAllowed(req.URL, g.host, g.tokenHosts) {
		return nil, fmt.Errorf("%s %s refused: only the registry and its token server get more than a GET: %w", req.Method, req.URL.Host, ErrRefused)
	}
	return g.next.RoundTrip(req)
}

// realmAllowed reports whether credentials for the registry at regHost
// (host[:port], as asked) may be sent to u, the realm of a
// WWW-Authenticate challenge: u is on the registry's own host and port, or
// u is https on a host of the registry's parent domain (its host without
// the first label: index.docker.io may send them to auth.docker.io,
// registry.gitlab.com to gitlab.com). An IP address, localhost, a name of
// fewer than three labels, and a parent that looks like a public suffix
// (two labels, a two-letter country code under a label of three letters or
// fewer: co.uk, com.au) have no parent domain: only their own host may
// have their credentials.
//
// Beyond these, u may be on one of tokenHosts (host or host:port, from the
// catalogue's token_hosts), over https or on loopback.
//
// go-containerregistry, left alone, sends them to any https realm that is
// not a private address. The Public Suffix List would draw the line more
// exactly; pin does without it, and errs on the side of refusing.
func realmAllowed(u *url.URL, regHost string, tokenHosts []string) bool {
	if strings.EqualFold(withPort(u.Host, u.Scheme), withPort(regHost, u.Scheme)) {
		return true
	}
	for _, h := range tokenHosts {
		if (u.Scheme == "https" || isLoopback(u.Host)) && strings.EqualFold(withPort(u.Host, u.Scheme), withPort(h, u.Scheme)) {
			return true
		}
	}
	if u.Scheme != "https" {
		return false
	}
	parent := parentDomain(hostOnly(regHost))
	h := strings.ToLower(u.Hostname())
	return parent != "" && (h == parent || strings.HasSuffix(h, "."+parent))
}

// parentDomain is host without its first label, or "" when host has no
// parent domain that may be trusted with its credentials.
func parentDomain(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if net.ParseIP(host) != nil || isLoopback(host) {
		return ""
	}
	labels := strings.Split(host, ".")
	if len(labels) < 3 {
		return ""
	}
	parent := labels[1:]
	if len(parent) == 2 && len(parent[1]) == 2 && len(parent[0]) <= 3 {
		return "" // co.uk, com.au, org.br: a public suffix, not a domain
	}
	return strings.Join(parent, ".")
}

// hostOnly strips the port of host[:port].
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// withPort adds the scheme's default port to host when it has none.
func withPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "443"
	if scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// limiter bounds the requests in flight and the time each takes. A request
// holds a slot and runs under its timeout from when it is sent until its
// response body is read to the end or closed; a body never closed gives its
// slot back when the timeout expires.
type limiter struct {
	next    http.RoundTripper
	sem     chan struct{}
	timeout time.Duration
}

func (l *limiter) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case l.sem <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	// Waiting for a slot is not part of the request's time.
	ctx, cancel := context.WithTimeout(req.Context(), l.timeout)
	context.AfterFunc(ctx, func() { <-l.sem })
	resp, err := l.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &doneBody{ReadCloser: resp.Body, done: cancel}
	return resp, nil
}

// doneBody calls done once, at the end of the body or when it is closed.
type doneBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *doneBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.done)
	}
	return n, err
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// retrying retries GET and HEAD requests that failed in a way that may
// pass: the statuses in retryStatus and connection resets. It waits what
// the answer's Retry-After says, else backoff[attempt]; when Retry-After
// asks for more than maxWait, the answer is returned rather than waited
// for.
type retrying struct {
	next     http.RoundTripper
	attempts int
	backoff  []time.Duration
	maxWait  time.Duration
}

var retryStatus = []int{
	http.StatusRequestTimeout,
	http.StatusTooManyRequests,
	http.StatusInternalServerError,
	http.StatusBadGateway,
	http.StatusServiceUnavailable,
	http.StatusGatewayTimeout,
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	safe := (req.Method == http.MethodGet || req.Method == http.MethodHead) && (req.Body == nil || req.Body == http.NoBody)
	for attempt := 0; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		if !safe || attempt+1 >= t.attempts {
			return resp, err
		}
		var wait time.Duration
		switch {
		case err != nil:
			if !blip(err) || req.Context().Err() != nil {
				return nil, err
			}
			wait = t.backoffAt(attempt)
		case slices.Contains(retryStatus, resp.StatusCode):
			wait = t.backoffAt(attempt)
			if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				if d > t.maxWait {
					return resp, nil // the registry asks for longer than we wait
				}
				wait = d
			}
			// Drained, so that the connection is reused.
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
		default:
			return resp, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		}
	}
}

func (t *retrying) backoffAt(attempt int) time.Duration {
	if len(t.backoff) == 0 {
		return 0
	}
	return t.backoff[min(attempt, len(t.backoff)-1)]
}

// blip reports whether a request's error is a network blip worth one more
// try: the connection was reset or closed under it. A refused connection,
// a TLS failure or a timeout is not.
func blip(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP-date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		if s > int64(24*time.Hour/time.Second) {
			return 24 * time.Hour, true // beyond any wait, without overflow
		}
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// screen checks each answer before go-containerregistry reads it:
//
//   - a 401 whose WWW-Authenticate challenge names a token server (realm)
//     that realmAllowed refuses is an error, so that no credentials are sent
//     there;
//   - a tag list whose Link header points to another host or scheme is an
//     error;
//   - a manifest or blob GET answered 200 is read here, bounded by
//     MaxManifestSize or MaxConfigSize (refused at once when Content-Length
//     is larger), and checked against the digest in its URL and the
//     Docker-Content-Digest header; a body cut short is io.ErrUnexpectedEOF,
//     which retrying retries;
//   - the body of an error answer loses the credentials the request
//     carried, should the registry echo them.
//
// host is the registry asked (host[:port]).
type screen struct {
	next       http.RoundTripper
	host       string
	tokenHosts []string
}

func (s *screen) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*http.Response, error) {
		resp.Body.Close() // unread: the connection is dropped, not drained
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		if err := s.checkChallenge(resp); err != nil {
			return fail(err)
		}
	case resp.StatusCode == http.StatusOK && strings.HasSuffix(req.URL.Path, "/tags/list"):
		if err := checkLink(req, resp); err != nil {
			return fail(err)
		}
	case resp.StatusCode == http.StatusOK && req.Method == http.MethodGet && (strings.Contains(req.URL.Path, "/manifests/") || strings.Contains(req.URL.Path, "/blobs/")):
		if err := readChecked(req, resp); err != nil {
			return fail(err)
		}
	}
	if resp.StatusCode >= 400 {
		redactBody(req, resp)
	}
	return resp, nil
}

// checkChallenge refuses a Bearer challenge whose realm may not have the
// registry's credentials. Basic challenges have no realm URL.
func (s *screen) checkChallenge(resp *http.Response) error {
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		scheme, params, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "bearer") {
			continue
		}
		realm := challengeParam(params, "realm")
		u, err := url.Parse(realm)
		if err != nil || u.Host == "" {
			return fmt.Errorf("%s asks to authenticate at %q, not a URL: %w", s.host, realm, ErrRefused)
		}
		if !realmAllowed(u, s.host, s.tokenHosts) {
			return fmt.Errorf("%s asks to authenticate at %s, which is not on its host: credentials are not sent there; if that is the registry's own token server, add token_hosts = [%q] to the catalogue's registry block: %w", s.host, redactURL(realm), u.Host, ErrRefused)
		}
	}
	return nil
}

// challengeParam finds key="value" (or key=value) in a challenge's
// parameters.
func challengeParam(params, key string) string {
	for params != "" {
		params = strings.TrimLeft(params, " ,")
		k, rest, ok := strings.Cut(params, "=")
		if !ok {
			return ""
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				v, rest = rest[1:], ""
			} else {
				v, rest = rest[1:1+end], rest[2+end:]
			}
		} else {
			v, rest, _ = strings.Cut(rest, ",")
		}
		if strings.EqualFold(strings.TrimSpace(k), key) {
			return v
		}
		params = rest
	}
	return ""
}

// checkLink refuses a tag list whose next page is on another host or
// scheme.
func checkLink(req *http.Request, resp *http.Response) error {
	link := resp.Header.Get("Link")
	if link == "" {
		return nil
	}
	start, end := strings.Index(link, "<"), strings.Index(link, ">")
	if start != 0 || end < 0 {
		return nil // go-containerregistry says what is wrong with it
	}
	next, err := url.Parse(link[1:end])
	if err != nil {
		return nil
	}
	next = req.URL.ResolveReference(next)
	if next.Host != req.URL.Host || next.Scheme != req.URL.Scheme {
		return fmt.Errorf("the Link header of %s points to %s, another host: not followed: %w", req.URL.Host, redactURL(next.String()), ErrRefused)
	}
	return nil
}

// readChecked reads a manifest or blob answer into memory, bounded, and
// checks it against the digests the request and the answer name.
func readChecked(req *http.Request, resp *http.Response) error {
	what, limit := "manifest", int64(MaxManifestSize)
	if strings.Contains(req.URL.Path, "/blobs/") {
		what, limit = "blob", int64(MaxConfigSize)
	}
	if resp.ContentLength > limit {
		return fmt.Errorf("%s %s is %s, more than the %s pin reads: %w", what, urlRef(req.URL), sizeText(resp.ContentLength), sizeText(limit), ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	resp.Body.Close()
	if err != nil {
		return err // a cut body is io.ErrUnexpectedEOF: retried
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("%s %s is more than the %s pin reads: %w", what, urlRef(req.URL), sizeText(limit), ErrTooLarge)
	}
	// The digest asked for, then the one the registry states. A schema 1
	// manifest's stated digest is of its signed form; pin refuses those
	// anyway, later and more clearly.
	if _, ref, ok := strings.Cut(req.URL.Path, "/"+what+"s/"); ok && strings.HasPrefix(ref, "sha256:") {
		if err := verify(b, ref); err != nil {
			return fmt.Errorf("%s %s: %w", what, urlRef(req.URL), err)
		}
	}
	if stated := resp.Header.Get("Docker-Content-Digest"); strings.HasPrefix(stated, "sha256:") &&
		!strings.HasPrefix(resp.Header.Get("Content-Type"), string(types.DockerManifestSchema1)) {
		if got := digestOf(b); got != stated {
			return fmt.Errorf("%s %s: the registry says it is %s, its content is %s: %w", what, urlRef(req.URL), stated, got, ErrDigestMismatch)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return nil
}

// redactBody cuts the credentials the request carried out of an error
// answer's body (at most 64 KiB of it is kept; error bodies are small).
func redactBody(req *http.Request, resp *http.Response) {
	secrets := credentials(req.Header.Get("Authorization"))
	if len(secrets) == 0 {
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	s := string(b)
	for _, secret := range secrets {
		s = strings.ReplaceAll(s, secret, "<redacted>")
	}
	resp.Body = io.NopCloser(strings.NewReader(s))
	resp.ContentLength = int64(len(s))
}

// credentials are the secrets in an Authorization header value: the value,
// its credentials part, and for Basic the decoded "user:password" and the
// password, longest first.
func credentials(auth string) []string {
	if auth == "" {
		return nil
	}
	out := []string{auth}
	scheme, cred, ok := strings.Cut(auth, " ")
	if !ok || cred == "" {
		return out
	}
	out = append(out, cred)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
			out = append(out, string(dec))
			if _, pass, ok := strings.Cut(string(dec), ":"); ok && len(pass) >= 4 {
				out = append(out, pass)
			}
		}
	}
	return out
}

// urlRef names what a manifest or blob URL asks for: "repo:tag" or
// "repo@digest", on its host.
func urlRef(u *url.URL) string {
	p := strings.TrimPrefix(u.Path, "/v2/")
	for _, kind := range []string{"/manifests/", "/blobs/"} {
		if repo, ref, ok := strings.Cut(p, kind); ok {
			return reference(u.Host+"/"+repo, ref)
		}
	}
	return u.Host + u.Path
}

// redactURL drops a URL's user information and query (tokens travel in
// either).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unreadable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}

// sizeText renders a byte count for people: "4 MiB", "5000000 bytes".
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// quietKeychain keeps what a credential helper printed out of errors: the
// Docker CLI's helper client puts the helper's whole output in its error
// ("error getting credentials - err: exit status 1, out: `…`"), and a
// helper that fails after printing its answer prints the secret.
type quietKeychain struct{ next authn.Keychain }

func (k quietKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), r)
}

func (k quietKeychain) ResolveContext(ctx context.Context, r authn.Resource) (authn.Authenticator, error) {
	a, err := authn.Resolve(ctx, k.next, r)
	if err != nil {
		return nil, keychainError{err}
	}
	return a, nil
}

// keychainError is a keychain's error without the helper's output.
type keychainError struct{ err error }

func (e keychainError) Error() string {
	msg := e.err.Error()
	if i := strings.Index(msg, ", out: `"); i >= 0 {
		msg = msg[:i] + " (what the helper printed is not shown)"
	}
	return "reading credentials from the Docker config: " + msg
}

func (e keychainError) Unwrap() error { return e.err }
