package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kinds of requests the proxy counts.
const (
	kPing = iota
	kToken
	kTags
	kManifestGET
	kManifestHEAD
	kBlobGET
	kOther
	nKinds
)

var kindNames = [nKinds]string{"ping", "token", "tags", "man GET", "man HEAD", "blob GET", "other"}

// kindOf names a request the way docs/design.md's cost model counts them.
func kindOf(r *http.Request) int {
	p := r.URL.Path
	switch {
	case p == "/v2/" || p == "/v2":
		return kPing
	case p == "/token":
		return kToken
	case strings.HasPrefix(p, "/v2/") && strings.HasSuffix(p, "/tags/list"):
		return kTags
	case strings.HasPrefix(p, "/v2/") && strings.Contains(p, "/manifests/"):
		switch r.Method {
		case http.MethodGet:
			return kManifestGET
		case http.MethodHead:
			return kManifestHEAD
		}
	case strings.HasPrefix(p, "/v2/") && strings.Contains(p, "/blobs/") && r.Method == http.MethodGet:
		return kBlobGET
	}
	return kOther
}

// counts are the requests seen during one measured run.
type counts struct {
	Kind [nKinds]int64
	// TLS is connections that opened with a TLS handshake: go-containerregistry
	// tries https before plain http for an insecure registry. They never reach
	// the handler, take no delay, and are not requests.
	TLS int64
	// Errors is answers of 400 and above, the expected 401 challenges apart.
	Errors int64
	// PeakInFlight is the most requests the proxy held at once.
	PeakInFlight int64
	// Busy is the sum of the time requests spent in the proxy; Busy / wall
	// is the mean number of requests in flight.
	Busy time.Duration
	// Upstream is the sum of the time the registry took to answer the
	// Forwarded requests (the added delay apart).
	Upstream  time.Duration
	Forwarded int64
}

func (c counts) Total() int64 {
	var n int64
	for _, k := range c.Kind {
		n += k
	}
	return n
}

// proxy sits between pin and the registry: it adds a fixed round-trip
// delay to every request, counts requests by kind and, with token auth on,
// plays a token server the way Docker Hub, ghcr.io and Quay do (a 401
// Bearer challenge on /v2/ and on every repository its token does not
// cover, an anonymous token for the repository scopes asked from /token).
// It forwards only to the one loopback registry it was given.
type proxy struct {
	rtt    time.Duration
	auth   bool
	target *url.URL
	rp     *httputil.ReverseProxy
	addr   string // host:port it listens on

	mu       sync.Mutex
	grants   map[string]map[string]bool // token → the repositories it covers
	c        counts
	inFlight int64
	tls      atomic.Int64

	srv *http.Server
	ln  net.Listener
}

// startProxy listens on 127.0.0.1 (a free port) in front of registry, a
// loopback host:port.
func startProxy(registry string, rtt time.Duration, auth bool) (*proxy, error) {
	if !loopbackHostPort(registry) {
		return nil, fmt.Errorf("registry %q is not on loopback: the bench only talks to 127.0.0.1", registry)
	}
	target := &url.URL{Scheme: "http", Host: registry}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = tr
	rp.ErrorLog = nil
	p := &proxy{rtt: rtt, auth: auth, target: target, rp: rp, grants: map[string]map[string]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.ln = &peekListener{Listener: ln, onTLS: func() { p.tls.Add(1) }}
	p.addr = ln.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(p.ln)
	return p, nil
}

func (p *proxy) close() { p.srv.Close() }

// take returns the counts since the last take and starts again from zero.
func (p *proxy) take() counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.c
	c.TLS = p.tls.Swap(0)
	p.c = counts{}
	return c
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	k := kindOf(r)
	p.mu.Lock()
	p.c.Kind[k]++
	p.inFlight++
	p.c.PeakInFlight = max(p.c.PeakInFlight, p.inFlight)
	p.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		p.mu.Lock()
		p.inFlight--
		p.c.Busy += time.Since(start)
		if sw.status >= 400 && !(sw.status == http.StatusUnauthorized && k == kPing) {
			p.c.Errors++
		}
		p.mu.Unlock()
	}()

	// The round trip: the request waits before it is answered.
	t := time.NewTimer(p.rtt)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
		return
	}
	if p.auth {
		if k == kToken {
			p.token(sw, r)
			return
		}
		if !p.authorized(r) {
			p.challenge(sw, r)
			return
		}
	}
	r.Header.Del("Authorization")
	up := time.Now()
	p.rp.ServeHTTP(sw, r)
	p.mu.Lock()
	p.c.Upstream += time.Since(up)
	p.c.Forwarded++
	p.mu.Unlock()
}

// authorized reports whether the request carries a token the proxy gave
// that covers the repository asked (any token will do for /v2/).
func (p *proxy) authorized(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.grants[tok]
	if g == nil {
		return false
	}
	repo, ok := repoOf(r.URL.Path)
	return !ok || g[repo]
}

func (p *proxy) challenge(w http.ResponseWriter, r *http.Request) {
	c := fmt.Sprintf(`Bearer realm="http://%s/token",service="pinbench"`, p.addr)
	if repo, ok := repoOf(r.URL.Path); ok {
		c += fmt.Sprintf(`,scope="repository:%s:pull"`, repo)
	}
	w.Header().Set("WWW-Authenticate", c)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintln(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
}

// token issues an anonymous pull token for the repository scopes asked
// (scope=… repeated, or several in one value, space-separated).
func (p *proxy) token(w http.ResponseWriter, r *http.Request) {
	var sb [16]byte
	_, _ = rand.Read(sb[:])
	tok := hex.EncodeToString(sb[:])
	g := map[string]bool{}
	for _, v := range r.URL.Query()["scope"] {
		for _, sc := range strings.Fields(v) {
			if rest, ok := strings.CutPrefix(sc, "repository:"); ok {
				if i := strings.LastIndex(rest, ":"); i > 0 {
					g[rest[:i]] = true
				}
			}
		}
	}
	p.mu.Lock()
	p.grants[tok] = g
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token": tok, "access_token": tok, "expires_in": 300,
		"issued_at": time.Now().UTC().Format(time.RFC3339),
	})
}

// repoOf is the repository a /v2/<name>/{tags,manifests,blobs}/… path names.
func repoOf(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		return "", false
	}
	for _, sep := range []string{"/tags/", "/manifests/", "/blobs/"} {
		if i := strings.LastIndex(rest, sep); i > 0 {
			return rest[:i], true
		}
	}
	return "", false
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets the reverse proxy stream.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// peekListener reports connections whose first byte opens a TLS handshake.
type peekListener struct {
	net.Listener
	onTLS func()
}

func (l *peekListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &peekConn{Conn: c, onTLS: l.onTLS}, nil
}

type peekConn struct {
	net.Conn
	once  sync.Once
	onTLS func()
}

func (c *peekConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.once.Do(func() {
			if b[0] == 0x16 { // TLS handshake record
				c.onTLS()
			}
		})
	}
	return n, err
}

func loopbackHostPort(hp string) bool {
	h, _, err := net.SplitHostPort(hp)
	if err != nil {
		return false
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
