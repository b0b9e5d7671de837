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
