package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// roundTripFunc is a transport for the transport's own tests.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRetrying(t *testing.T) {
	t.Parallel()
	answer := func(status int, header ...string) *http.Response {
		h := http.Header{}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader("body"))}
	}
	reset := fmt.Errorf("read: %w", syscall.ECONNRESET)
	for _, tc := range []struct {
		name     string
		method   string
		answers  []any // *http.Response or error, one per attempt
		attempts int
		status   int
	}{
		{"GET 200", http.MethodGet, []any{answer(200)}, 1, 200},
		{"GET 429 then 200", http.MethodGet, []any{answer(429, "Retry-After", "0"), answer(200)}, 2, 200},
		{"HEAD 503 thrice", http.MethodHead, []any{answer(503), answer(503), answer(503)}, 3, 503},
		{"GET 500 then 200", http.MethodGet, []any{answer(500), answer(200)}, 2, 200},
		{"GET 404", http.MethodGet, []any{answer(404)}, 1, 404},
		{"GET 401", http.MethodGet, []any{answer(401)}, 1, 401},
		{"POST 503", http.MethodPost, []any{answer(503)}, 1, 503},
		{"PUT 429", http.MethodPut, []any{answer(429, "Retry-After", "0")}, 1, 429},
		{"GET reset then 200", http.MethodGet, []any{reset, answer(200)}, 2, 200},
		{"GET refused", http.MethodGet, []any{errors.New("connection refused")}, 1, 0},
		{"GET Retry-After too long", http.MethodGet, []any{answer(429, "Retry-After", "61")}, 1, 429},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			rt := &retrying{attempts: 3, maxWait: time.Minute, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
				a := tc.answers[min(n, len(tc.answers)-1)]
				n++
				if err, ok := a.(error); ok {
					return nil, err
				}
				return a.(*http.Response), nil
			})}
			req, _ := http.NewRequest(tc.method, "http://127.0.0.1/v2/", nil)
			resp, err := rt.RoundTrip(req)
			if n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
			status := 0
			if err == nil {
				status = resp.StatusCode
			}
			if status != tc.status {
				t.Errorf("status %d (%v), want %d", status, err, tc.status)
			}
		})
	}

	t.Run("cancelled while waiting", func(t *testing.T) {
		rt := &retrying{attempts: 3, maxWait: time.Minute, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
			return answer(429, "Retry-After", "30"), nil
		})}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/v2/", nil)
		start := time.Now()
		_, err := rt.RoundTrip(req)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Errorf("RoundTrip = %v after %v, want the context's deadline, soon", err, time.Since(start))
		}
	})
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 17, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"7", 7 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"99999999999999999", 24 * time.Hour, true},
		{"Thu, 17 Sep 2026 10:00:30 GMT", 30 * time.Second, true},
		{"Thu, 17 Sep 2026 09:00:00 GMT", 0, true}, // past
	} {
		got, ok := retryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
