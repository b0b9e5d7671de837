package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/logs"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/pin-tool/pin/internal/image"
)

// Defaults of RemoteOptions.
const (
	defaultConcurrency = 8
	defaultTimeout     = 30 * time.Second
	// defaultPageSize is the number of tags asked for per tag-list request,
	// go-containerregistry's default (ECR refuses more than 1000).
	defaultPageSize = 1000
)

// Bounds on what is read into memory. A manifest (or index) larger than
// maxManifestSize, or a config larger than maxConfigSize, is refused with
// ErrTooLarge: at once when its Content-Length says so, else as soon as
// that many bytes have been read. The manifest bound is distribution's own
// (it refuses to store larger manifests); configs are a few kilobytes, and
// a digest that names a layer must not pull gigabytes.
const (
	maxManifestSize = 4 << 20
	maxConfigSize   = 4 << 20
)

// maxTagPages bounds the pages of one tag list (a million tags at the
// default page size): a registry whose Link headers never end is refused.
const maxTagPages = 1000

// ErrTooLarge is returned when a manifest or config is larger than its bound
// (4 MiB each).
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
	// TLS is the registry's own TLS material (a CA bundle, a client
	// certificate and key), used for the registry asked beside its certs.d
	// folder's.
	TLS TLSFiles
	// CertsDir is the certs.d root: CertsDir/<host>/ holds CA certificates
	// (*.crt) and client certificates (*.cert with *.key) for the registry
	// asked, read as the Docker Engine reads them. "" means
	// DefaultCertsDir (/etc/docker/certs.d).
	CertsDir string
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
// and configs are bounded (maxManifestSize, maxConfigSize) and checked
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
	err     error // from NewRemote, returned by every call
	// described remembers, with a cache, what the digests read last
	// described (remote_fetch.go; the on-disk cache still holds them).
	described recent[describedKey, image.Image]
	// named remembers the repositories named lately and the Puller that
	// reads them.
	named repoMemo
}

// NewRemote returns a source for the registry opts.Host. It does no I/O;
// an invalid host is reported by the first call.
func NewRemote(opts RemoteOptions) *Remote {
	r := &Remote{cache: opts.Cache, mirror: opts.Mirror != ""}
	r.described.max = recentDigests
	r.named.names.max = recentRepositories
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
	certsDir := cmp.Or(opts.CertsDir, DefaultCertsDir)
	tlsSet, err := loadTLS(r.source.RegistryStr(), opts.TLS, certsDir)
	if err != nil {
		r.err = err
		return r
	}
	if tlsSet.cfg != nil {
		if base, err = withTLS(base, tlsSet.cfg); err != nil {
			r.err = fmt.Errorf("registry %s: %w", r.source.RegistryStr(), err)
			return r
		}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	n := opts.Concurrency
	if n <= 0 {
		n = defaultConcurrency
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = defaultPageSize
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
	r.session.explain = func(err error) error { return tlsSet.explain(r.source.RegistryStr(), certsDir, err) }

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
	r.err = r.named.start(
		remote.WithTransport(wrapped),
		// Its own bound on blob downloads (4) must not be the tighter one.
		remote.WithJobs(n),
		remote.WithPageSize(pageSize),
	)
	return r
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
	if named, ok := r.named.load(repo); ok {
		return named, nil
	}
	parsed, err := name.NewRepository(repo)
	if err != nil {
		return name.Repository{}, fmt.Errorf("repository %q: %w", repo, err)
	}
	if parsed.RegistryStr() != r.host.RegistryStr() {
		return name.Repository{}, fmt.Errorf("repository %s is not on registry %s", repo, r.host.RegistryStr())
	}
	named := r.source.Repo(parsed.RepositoryStr())
	r.named.store(repo, named)
	return named, nil
}

// puller is the remote.Puller to read with now.
func (r *Remote) puller() *remote.Puller {
	r.named.mu.Lock()
	defer r.named.mu.Unlock()
	return r.named.puller
}

// recentRepositories is how many repositories a Remote remembers by name,
// with what go-containerregistry keeps for each. A name is asked for in
// every call of a module's decision, and at most a few dozen modules are
// decided at once; a memory of every repository of a run grew with the
// catalogue (1,100 repositories, 0.5 MB kept to the end).
const recentRepositories = 256

// repoMemo remembers repositories by the name a caller gave (parsing and
// checking a name each time was 3.7% of a warm resolve's CPU),
// up to recentRepositories of them, and the remote.Puller that reads
// them. A Puller keeps a fetcher for every repository it ever read; with
// pin's transport doing the authentication, a fetcher costs no request to
// make again. When full, the memo starts again empty with a new Puller,
// as enforce.Memo does; a Puller in use by a call goes on working.
type repoMemo struct {
	names   recent[string, name.Repository]
	options []remote.Option
	mu      sync.Mutex
	puller  *remote.Puller
}

func (m *repoMemo) load(repo string) (name.Repository, bool) { return m.names.load(repo) }

func (m *repoMemo) store(repo string, named name.Repository) {
	if !m.names.store(repo, named) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.puller != nil {
		// The same options made the first Puller.
		if p, err := remote.NewPuller(m.options...); err == nil {
			m.puller = p
		}
	}
}

// start makes the first Puller, with the options of every later one.
func (m *repoMemo) start(options ...remote.Option) error {
	p, err := remote.NewPuller(options...)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.options, m.puller = options, p
	return err
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
