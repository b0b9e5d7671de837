package faultproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
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

// Any matches every request.
func Any(*http.Request) bool { return true }

// Ping matches the API version check, GET /v2/.
func Ping(r *http.Request) bool { return r.URL.Path == "/v2/" || r.URL.Path == "/v2" }

// TagList matches tag list requests.
func TagList(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/tags/list") }

// Manifest matches manifest requests with method ("" for any); with refs,
// only those for one of these tags or digests.
func Manifest(method string, refs ...string) Match {
	return kind("/manifests/", method, refs)
}

// Blob matches blob requests with method ("" for any); with digests, only
// those for one of them.
func Blob(method string, digests ...string) Match {
	return kind("/blobs/", method, digests)
}

func kind(part, method string, refs []string) Match {
	return func(r *http.Request) bool {
		_, ref, ok := strings.Cut(r.URL.Path, part)
		if !ok || (method != "" && r.Method != method) {
			return false
		}
		if len(refs) == 0 {
			return true
		}
		for _, want := range refs {
			if ref == want {
				return true
			}
		}
		return false
	}
}

// Faults.

// Status answers with code, an OCI error body, and header (pairs of name
// and value), without asking the registry.
func Status(code int, header ...string) Fault {
	return StatusBody(code, fmt.Sprintf(`{"errors":[{"code":"UNKNOWN","message":"fault injected: %d"}]}`, code), header...)
}

// StatusBody answers with code, body and header (pairs of name and value),
// without asking the registry.
func StatusBody(code int, body string, header ...string) Fault {
	return Fault{name: fmt.Sprintf("status %d", code), serve: func(_ *Proxy, w *countingWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if r.Method != http.MethodHead {
			io.WriteString(w, body)
		}
	}}
}

// EchoAuth answers with code and an error message that repeats the
// request's Authorization header, as a careless registry or proxy might:
// whoever prints that message prints the credentials.
func EchoAuth(code int) Fault {
	return Fault{name: fmt.Sprintf("echo %d", code), serve: func(_ *Proxy, w *countingWriter, r *http.Request) {
		body, _ := json.Marshal(map[string]any{"errors": []map[string]string{{
			"code": "DENIED", "message": fmt.Sprintf("credentials %q refused", r.Header.Get("Authorization")),
		}}})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write(body)
	}}
}

// Reset closes the connection with a TCP reset, without answering.
func Reset() Fault {
	return Fault{name: "reset", serve: func(_ *Proxy, w *countingWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack()
		if err != nil {
			panic(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // RST, not FIN
		}
		conn.Close()
	}}
}

// Stall never answers: it holds the request until the client gives up or
// the proxy stops.
func Stall() Fault {
	return Fault{name: "stall", serve: func(p *Proxy, _ *countingWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-p.stop:
		}
	}}
}

// Delay waits d, then forwards the request: a slow registry.
func Delay(d time.Duration) Fault {
	return Fault{name: "delay", serve: func(p *Proxy, w *countingWriter, r *http.Request) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		case <-p.stop:
			return
		}
		p.forward(w, r, nil)
	}}
}

// Truncate forwards the registry's answer, with its full Content-Length,
// but writes only the first keep bytes of the body and closes the
// connection.
func Truncate(keep int) Fault {
	return Fault{name: "truncate", serve: func(p *Proxy, w *countingWriter, r *http.Request) {
		resp, body, err := p.roundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(resp.StatusCode)
		w.Write(body[:min(keep, len(body))])
		w.Flush()
		conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack()
		if err != nil {
			panic(err)
		}
		conn.Close()
	}}
}

// Corrupt forwards the registry's answer with one character of its body
// changed (a hex digit or letter for another), the length and the
// Docker-Content-Digest header kept: valid JSON, wrong content.
func Corrupt() Fault {
	return Fault{name: "corrupt", serve: func(p *Proxy, w *countingWriter, r *http.Request) {
		p.forward(w, r, func(_ http.Header, body []byte) []byte {
			b := bytes.Clone(body)
			for i := len(b) / 2; i < len(b); i++ {
				switch c := b[i]; {
				case c >= 'a' && c < 'z', c >= '0' && c < '9':
					b[i] = c + 1
					return b
				case c == 'z', c == '9':
					b[i] = c - 1
					return b
				}
			}
			return b
		})
	}}
}

// Oversize answers 200 with a manifest-looking JSON body of size bytes,
// with a Content-Length when withLength, else chunked, without asking the
// registry. It stops writing when the client hangs up: Written says how
// much was sent.
func Oversize(size int64, withLength bool) Fault {
	return Fault{name: "oversize", serve: func(_ *Proxy, w *countingWriter, r *http.Request) {
		head := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","annotations":{"pad":"`)
		tail := []byte(`"}}`)
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		if withLength {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		if _, err := w.Write(head); err != nil {
			return
		}
		w.Flush()
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for left := size - int64(len(head)) - int64(len(tail)); left > 0; {
			n := min(left, int64(len(chunk)))
			if _, err := w.Write(chunk[:n]); err != nil {
				return
			}
			left -= n
		}
		w.Write(tail)
	}}
}

// Headers forwards the registry's answer with its header edited.
func Headers(edit func(r *http.Request, h http.Header)) Fault {
	return Fault{name: "headers", serve: func(p *Proxy, w *countingWriter, r *http.Request) {
		p.forward(w, r, func(h http.Header, body []byte) []byte {
			edit(r, h)
			return body
		})
	}}
}

// Body forwards the registry's answer with its body replaced by what edit
// returns (the Content-Length follows).
func Body(edit func(r *http.Request, body []byte) []byte) Fault {
	return Fault{name: "body", serve: func(p *Proxy, w *countingWriter, r *http.Request) {
		p.forward(w, r, func(_ http.Header, body []byte) []byte { return edit(r, body) })
	}}
}

// Recorder is a server that records every request and answers 200 with a
// token: it stands for a host that must never be asked, such as a token
// server credentials must not reach.
type Recorder struct {
	// Host is its host:port on 127.0.0.1.
	Host string

	mu   sync.Mutex
	seen []Request
}

// NewRecorder starts a Recorder and stops it when the test ends.
func NewRecorder(t testing.TB) *Recorder {
	t.Helper()
	rec := &Recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, Request{Method: r.Method, Path: r.URL.RequestURI(), Authorization: r.Header.Get("Authorization")})
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"token":"stolen","access_token":"stolen"}`)
	}))
	t.Cleanup(srv.Close)
	rec.Host = strings.TrimPrefix(srv.URL, "http://")
	return rec
}

// Requests returns what the recorder was asked.
func (rec *Recorder) Requests() []Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Request(nil), rec.seen...)
}
