package registry

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// counter is a base transport that counts the requests reaching the wire,
// by kind, retries and failed attempts included.
type counter struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
	log  []string
	// unauth lists the requests other than pings and token requests sent
	// without an Authorization header.
	unauth []string
}

// newCounter counts over a transport of the test's own, closed at its end.
func newCounter(t *testing.T) *counter {
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &counter{next: tr, n: map[string]int{}}
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	k := kind(req)
	c.mu.Lock()
	c.n[k]++
	c.log = append(c.log, req.Method+" "+req.URL.String())
	if req.Header.Get("Authorization") == "" && !strings.HasPrefix(k, "ping") && k != "token" {
		c.unauth = append(c.unauth, req.Method+" "+req.URL.String())
	}
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

// take returns the counts so far and starts again from zero.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n, c.log = map[string]int{}, nil
	return n
}

// expect checks the counts since the last take, exactly.
func (c *counter) expect(t *testing.T, what string, want map[string]int) {
	t.Helper()
	c.mu.Lock()
	log := slices.Clone(c.log)
	c.mu.Unlock()
	got := c.take()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: requests (-want +got):\n%s\nsent:\n  %s", what, diff, strings.Join(log, "\n  "))
	}
}

// unauthenticated returns the requests sent without credentials, pings
// and token requests aside.
func (c *counter) unauthenticated() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.unauth)
}

func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c.n)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c.n[k]))
	}
	return strings.Join(parts, " ")
}
