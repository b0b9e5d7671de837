//go:build unix

package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// endpoints are n loopback TCP listeners in front of one real Docker
// Engine, each adding latency to every request before passing it on, so
// that pin sees n hosts, each a round trip away. Each counts the
// requests it passed.
type endpoints struct {
	addrs    []string
	requests []atomic.Int64
	extra    []atomic.Int64 // added latency of one endpoint, in ns
	servers  []*http.Server
	// engine is the engine's own answer time (after the added latency),
	// summed by kind of request over all endpoints, and how many.
	engine [engineKinds]struct{ ns, n atomic.Int64 }
}

// The kinds of request the engine's answer time is kept for.
const (
	pingKind = iota
	infoKind
	listKind
	inspectKind
	engineKinds
)

func requestKind(path string) int {
	switch {
	case strings.HasSuffix(path, "/_ping"):
		return pingKind
	case strings.HasSuffix(path, "/info"):
		return infoKind
	case strings.HasSuffix(path, "/containers/json"):
		return listKind
	}
	return inspectKind
}

// engineMean is the engine's mean answer time for one kind of request;
// zero when none was made.
func (e *endpoints) engineMean(kind int) time.Duration {
	n := e.engine[kind].n.Load()
	if n == 0 {
		return 0
	}
	return time.Duration(e.engine[kind].ns.Load() / n)
}

// startEndpoints puts n endpoints in front of engine (unix:///…sock).
func startEndpoints(t testing.TB, engine string, n int, latency time.Duration) *endpoints {
	t.Helper()
	sock := strings.TrimPrefix(engine, "unix://")
	var d net.Dialer
	tr := &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", sock) },
		MaxIdleConnsPerHost: 64,
	}
	target, _ := url.Parse("http://docker")
	e := &endpoints{requests: make([]atomic.Int64, n), extra: make([]atomic.Int64, n)}
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.Transport = tr
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.requests[i].Add(1)
			wait := latency + time.Duration(e.extra[i].Load())
			select {
			case <-time.After(wait):
			case <-r.Context().Done():
				return
			}
			start := time.Now()
			proxy.ServeHTTP(w, r)
			k := &e.engine[requestKind(r.URL.Path)]
			k.ns.Add(int64(time.Since(start)))
			k.n.Add(1)
		})}
		go srv.Serve(ln)
		e.servers = append(e.servers, srv)
		e.addrs = append(e.addrs, "tcp://"+ln.Addr().String())
	}
	t.Cleanup(func() {
		for _, s := range e.servers {
			s.Close()
		}
		tr.CloseIdleConnections()
	})
	return e
}

// unreachable is a tcp:// address nothing listens on.
func unreachable(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "tcp://" + addr
}

func (e *endpoints) counts() []int64 {
	out := make([]int64, len(e.requests))
	for i := range e.requests {
		out[i] = e.requests[i].Load()
	}
	return out
}

func hostName(i int) string { return fmt.Sprintf("edge-%03d", i) }
