package registry

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Counter is an http.RoundTripper that counts the requests reaching the
// wire, by registry host and kind, retries included. pin prints its counts
// with -v; the cost model is checked against them.
type Counter struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[string]map[string]int
}

// NewCounter counts the requests sent through next.
func NewCounter(next http.RoundTripper) *Counter {
	return &Counter{next: next, n: map[string]map[string]int{}}
}

// RoundTrip counts the request and sends it on.
func (c *Counter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.count(req)
	return c.next.RoundTrip(req)
}

func (c *Counter) count(req *http.Request) {
	c.mu.Lock()
	if c.n[req.URL.Host] == nil {
		c.n[req.URL.Host] = map[string]int{}
	}
	c.n[req.URL.Host][kind(req)]++
	c.mu.Unlock()
}

// over counts into c the requests it sends through next instead of c's
// own transport: a registry with TLS settings of its own.
func (c *Counter) over(next http.RoundTripper) http.RoundTripper {
	return countingVia{c: c, next: next}
}

type countingVia struct {
	c    *Counter
	next http.RoundTripper
}

func (v countingVia) RoundTrip(req *http.Request) (*http.Response, error) {
	v.c.count(req)
	return v.next.RoundTrip(req)
}

// kind names a request: "ping https", "tags list", "manifest HEAD",
// "manifest GET", "blob GET", "token", or "other …".
func kind(req *http.Request) string {
	p := req.URL.Path
	switch {
	case p == "/v2/" || p == "/v2":
		return "ping " + req.URL.Scheme
	case strings.HasSuffix(p, "/tags/list"):
		return "tags list"
	case strings.Contains(p, "/manifests/"):
		return "manifest " + req.Method
	case strings.Contains(p, "/blobs/"):
		return "blob " + req.Method
	case strings.Contains(p, "token") || req.URL.Query().Has("scope"):
		return "token"
	}
	return "other " + req.Method
}

// Summary renders the counts, one line per registry host, in a fixed
// order: "127.0.0.1:5000: 5 requests (blob GET 1, manifest GET 1, ping http 1, …)".
func (c *Counter) Summary() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	hosts := make([]string, 0, len(c.n))
	for h := range c.n {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	var out []string
	for _, h := range hosts {
		kinds := make([]string, 0, len(c.n[h]))
		total := 0
		for k, n := range c.n[h] {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
			total += n
		}
		slices.Sort(kinds)
		out = append(out, fmt.Sprintf("%s: %d requests (%s)", h, total, strings.Join(kinds, ", ")))
	}
	return out
}
