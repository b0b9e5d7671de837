package faultproxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proxy forwards to one registry and injects the faults a test asks for.
type Proxy struct {
	// Host is the proxy's host:port on 127.0.0.1: name images on it
	// ("<Host>/repo/name") to reach the registry through the proxy.
	Host string
	// URL is "http://" + Host.
	URL string

	upstream string
	client   *http.Client
	srv      *httptest.Server
	stop     chan struct{} // closed at cleanup: stalls end

	mu    sync.Mutex
	rules []*rule
	seen  []Request
	busy  int // requests being served
}

// Request is one request the proxy received.
type Request struct {
	Method string
	// Path is the request URI: path and query.
	Path string
	// Authorization is the header the client sent, "" when none.
	Authorization string
	// Fault names the fault the request met; "" when it was forwarded.
	Fault string
	// Written is the number of body bytes the proxy wrote to the client.
	Written int64
	// At is when the request arrived.
	At time.Time
}

// Match chooses requests.
type Match func(*http.Request) bool

// Fault is one way of misbehaving.
type Fault struct {
	name  string
	serve func(p *Proxy, w *countingWriter, r *http.Request)
}

type rule struct {
	match Match
	left  int // < 0: always
	fault Fault
}

// New starts a proxy to the registry at upstream (host:port, plain http)
// and stops it when the test ends.
func New(t testing.TB, upstream string) *Proxy {
	t.Helper()
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}
	p := &Proxy{
		upstream: upstream,
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		stop: make(chan struct{}),
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	p.Host = strings.TrimPrefix(p.srv.URL, "http://")
	t.Cleanup(func() {
		close(p.stop)
		p.srv.CloseClientConnections()
		p.srv.Close()
		tr.CloseIdleConnections()
	})
	return p
}

// Inject makes the next times requests that match meet fault; times < 1
// means every one. Faults are tried in the order injected.
func (p *Proxy) Inject(match Match, times int, fault Fault) {
	if times < 1 {
		times = -1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &rule{match: match, left: times, fault: fault})
}

// Clear removes every fault: the proxy forwards everything again.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// Requests returns the requests received so far, in the order they
// arrived; Written is final once Idle has returned.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.seen...)
}

// Count is the number of requests received so far that match.
func (p *Proxy) Count(match Match) int {
	n := 0
	for _, r := range p.Requests() {
		req, _ := http.NewRequest(r.Method, "http://x"+r.Path, nil)
		if req != nil && match(req) {
			n++
		}
	}
	return n
}

// Faulted is the number of requests that met a fault so far.
func (p *Proxy) Faulted() int {
	n := 0
	for _, r := range p.Requests() {
		if r.Fault != "" {
			n++
		}
	}
	return n
}

func (p *Proxy) pick(r *http.Request) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ru := range p.rules {
		if ru.left != 0 && ru.match(r) {
			if ru.left > 0 {
				ru.left--
			}
			return ru.fault, true
		}
	}
	return Fault{}, false
}

// serve records the request as it arrives, serves it, and records the
// bytes written when done.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	cw := &countingWriter{ResponseWriter: w}
	f, ok := p.pick(r)
	if !ok {
		f = Fault{serve: func(p *Proxy, w *countingWriter, r *http.Request) { p.forward(w, r, nil) }}
	}
	p.mu.Lock()
	i := len(p.seen)
	p.seen = append(p.seen, Request{Method: r.Method, Path: r.URL.RequestURI(), Authorization: r.Header.Get("Authorization"), Fault: f.name, At: time.Now()})
	p.busy++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.seen[i].Written = cw.n
		p.busy--
		p.mu.Unlock()
	}()
	f.serve(p, cw, r)
}

// Idle waits (10s at most) until no request is being served, so that
// Requests reports the bytes written to clients that hung up.
func (p *Proxy) Idle() {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		busy := p.busy
		p.mu.Unlock()
		if busy == 0 {
			return
		}
	}
}

// hopHeaders are not forwarded.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// roundTrip sends r to the registry and returns its answer with the body
// read.
func (p *Proxy) roundTrip(r *http.Request) (*http.Response, []byte, error) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+p.upstream+r.URL.RequestURI(), r.Body)
	if err != nil {
		return nil, nil, err
	}
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	out.ContentLength = r.ContentLength
	resp, err := p.client.Do(out)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	// Absolute URLs the registry hands out name the proxy instead.
	for _, h := range []string{"Location", "Link"} {
		if v := resp.Header.Get(h); v != "" {
			resp.Header.Set(h, strings.ReplaceAll(v, "://"+p.upstream, "://"+p.Host))
		}
	}
	return resp, body, nil
}

// forward answers r with the registry's answer, its header edited by edit
// and its body by body (either may be nil).
func (p *Proxy) forward(w *countingWriter, r *http.Request, edit func(h http.Header, body []byte) []byte) {
	resp, body, err := p.roundTrip(r)
	if err != nil {
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	if edit != nil {
		body = edit(resp.Header, body)
	}
	writeAnswer(w, r, resp, body)
}

func writeAnswer(w http.ResponseWriter, r *http.Request, resp *http.Response, body []byte) {
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	if r.Method != http.MethodHead || w.Header().Get("Content-Length") == "" {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	}
	w.WriteHeader(resp.StatusCode)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// countingWriter counts the body bytes written.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Matches.
