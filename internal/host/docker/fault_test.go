package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/pin-tool/pin/internal/testkit/faultproxy"
	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// The host faults of docs/faults.md's table, at the adapter: an engine that
// is down, slow past the timeout, or answers garbage gives an error that
// names the host, its address and what was being read, within the
// timeout; the real engine, read at the same time, still answers.

// infoOK answers /_ping and /info as an engine of API 1.41 does, and
// passes anything else to next.
func infoOK(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			io.WriteString(w, "OK")
		case strings.HasSuffix(r.URL.Path, "/info"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ID":"fake","Driver":"overlay2","DriverStatus":[]}`)
		default:
			next(w, r)
		}
	})
}

func TestObserveBrokenEngines(t *testing.T) {
	t.Parallel()
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	for _, tc := range []struct {
		name string
		addr func(t testing.TB) string
		// want are in the error, after "host broken (<addr>): ".
		want []string
		is   error
	}{
		// The Moby client says only this when it cannot connect, whatever
		// the cause (no socket, or nobody listening on it).
		{"down: no socket", faultproxy.MissingSocket, []string{"reading engine info", "Cannot connect to the Docker daemon"}, nil},
		{"down: stale socket", faultproxy.StaleSocket, []string{"reading engine info", "Cannot connect to the Docker daemon"}, nil},
		{"slow: never answers", faultproxy.SilentEngine, []string{"reading engine info", "context deadline exceeded"}, context.DeadlineExceeded},
		{"slow: stalls on the container list", func(t testing.TB) string {
			return faultproxy.Engine(t, infoOK(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-stall:
				}
			}))
		}, []string{"listing containers", "context deadline exceeded"}, context.DeadlineExceeded},
		{"slow: endless body", func(t testing.TB) string {
			return faultproxy.Engine(t, infoOK(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `[{"Id":"`)
				for r.Context().Err() == nil {
					if _, err := io.WriteString(w, strings.Repeat("a", 4096)); err != nil {
						return
					}
				}
			}))
		}, []string{"listing containers", "context deadline exceeded"}, context.DeadlineExceeded},
		{"garbage: not HTTP", func(t testing.TB) string {
			return faultproxy.RawEngine(t, []byte("SSH-2.0-OpenSSH_9.2p1\r\n\x1b[2J"))
		}, []string{"reading engine info", "malformed HTTP"}, nil},
		{"garbage: not JSON", func(t testing.TB) string {
			return faultproxy.Engine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "<html>\x1b]0;pwned\x07 it works!</html>")
			}))
		}, []string{"reading engine info", "invalid character"}, nil},
		{"garbage: wrong JSON", func(t testing.TB) string {
			return faultproxy.Engine(t, infoOK(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `[{"Id": 5, "Names": {"x": 1}}]`)
			}))
		}, []string{"listing containers", "cannot unmarshal"}, nil},
		{"garbage: error answers", func(t testing.TB) string {
			return faultproxy.Engine(t, infoOK(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/containers/json") {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `[{"Id":"c1","Names":["/web"],"Image":"x:1","ImageID":"sha256:`+strings.Repeat("a", 64)+`","State":"running"}]`)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				io.WriteString(w, `{"message":"\u001b[2Jdisk on fire"}`)
			}))
		}, []string{"inspecting image sha256:aaaa", "disk on fire"}, nil},
		{"garbage: container inspect fails", func(t testing.TB) string {
			id := "sha256:" + strings.Repeat("a", 64)
			return faultproxy.Engine(t, infoOK(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch {
				case strings.HasSuffix(r.URL.Path, "/containers/json"):
					io.WriteString(w, `[{"Id":"c1","Names":["/web"],"Image":"`+id+`","ImageID":"`+id+`","State":"running"}]`)
				case strings.Contains(r.URL.Path, "/images/"):
					io.WriteString(w, `{"Id":"`+id+`","Created":"2026-01-01T00:00:00Z"}`)
				default:
					w.WriteHeader(http.StatusInternalServerError)
					io.WriteString(w, `{"message":"disk on fire"}`)
				}
			}))
		}, []string{"inspecting container web", "disk on fire"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := tc.addr(t)
			const timeout = 500 * time.Millisecond
			start := time.Now()
			snap, err := Host{Name: "broken", Addr: addr, Timeout: timeout}.Observe(context.Background())
			took := time.Since(start)
			if err == nil {
				t.Fatalf("Observe = %+v, want an error", snap)
			}
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			if prefix := fmt.Sprintf("host broken (%s): ", addr); !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error does not start with %q", prefix)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q", w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error is not %v", tc.is)
			}
			if strings.HasPrefix(tc.name, "down") && !client.IsErrConnectionFailed(err) {
				t.Errorf("error is not a connection failure")
			}
			// Each call has its own timeout: Info, the list and the
			// inspects, and the version ping that may come first.
			if took > 4*timeout+2*time.Second {
				t.Errorf("took %v with a %v timeout per call", took, timeout)
			}
		})
	}
}

// TestObserveOneBrokenOneReal: the real engine and a silent one, read at
// once; the real one answers in full while the other times out.
func TestObserveOneBrokenOneReal(t *testing.T) {
	t.Parallel()
	real := testenv.DockerHost(t)
	broken := faultproxy.SilentEngine(t)
	var wg sync.WaitGroup
	var realErr, brokenErr error
	wg.Go(func() {
		_, realErr = Host{Name: "real", Addr: real, Timeout: 5 * time.Second}.Observe(context.Background())
	})
	wg.Go(func() {
		_, brokenErr = Host{Name: "broken", Addr: broken, Timeout: 300 * time.Millisecond}.Observe(context.Background())
	})
	wg.Wait()
	if realErr != nil {
		t.Errorf("the real engine: %v", realErr)
	}
	if !errors.Is(brokenErr, context.DeadlineExceeded) {
		t.Errorf("the silent engine: %v, want a deadline exceeded", brokenErr)
	}
}

// TestObserveInfoAndListAtOnce: after the ping, where the engine's info is
// asked (API 1.42 to 1.47: the ping cannot say the image store), it and
// the container list are asked at once. The fake engine answers neither
// until it has both: read one after the other, Observe would time out.
func TestObserveInfoAndListAtOnce(t *testing.T) {
	t.Parallel()
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	var pings atomic.Int32
	addr := faultproxy.Engine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.45")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			pings.Add(1)
			io.WriteString(w, "OK")
			return
		case strings.HasSuffix(r.URL.Path, "/info"), strings.HasSuffix(r.URL.Path, "/containers/json"):
			arrived.Done()
		default:
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		select {
		case <-both:
		case <-r.Context().Done():
			return
		}
		if strings.HasSuffix(r.URL.Path, "/info") {
			io.WriteString(w, `{"ID":"fake","Driver":"overlay2","DriverStatus":[]}`)
		} else {
			io.WriteString(w, `[]`)
		}
	}))
	var calls Calls
	snap, err := Host{Name: "fake", Addr: addr, Timeout: 2 * time.Second, Calls: &calls}.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v (info and list asked one after the other?)", err)
	}
	if len(snap.Containers) != 0 {
		t.Errorf("containers: %+v", snap.Containers)
	}
	if n := pings.Load(); n != 1 {
		t.Errorf("%d pings, want 1: the version is negotiated once, before both", n)
	}
	if got, want := calls.Counts(), (CallCounts{Ping: 1, Info: 1, ContainerList: 1}); got != want {
		t.Errorf("Calls = %+v, want %+v", got, want)
	}
}

// TestObserveDownEngineOnePing: an engine that cannot be reached costs one
// ping and nothing after it.
func TestObserveDownEngineOnePing(t *testing.T) {
	t.Parallel()
	var calls Calls
	_, err := Host{Name: "down", Addr: faultproxy.MissingSocket(t), Timeout: time.Second, Calls: &calls}.Observe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "reading engine info") {
		t.Fatalf("Observe: %v, want an error reading engine info", err)
	}
	if got, want := calls.Counts(), (CallCounts{Ping: 1}); got != want {
		t.Errorf("Calls = %+v, want %+v", got, want)
	}
}

// TestObserveEngineErrorInItsWords: an engine that answers every request
// with an error, the ping too, is named with its own words (the body of
// its answer to /info), not the ping's bodiless status.
func TestObserveEngineErrorInItsWords(t *testing.T) {
	t.Parallel()
	addr := faultproxy.Engine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"message":"disk on fire"}`)
	}))
	_, err := Host{Name: "broken", Addr: addr, Timeout: time.Second}.Observe(context.Background())
	if want := "reading engine info: Error response from daemon: disk on fire"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Observe: %v, want %q", err, want)
	}
}
