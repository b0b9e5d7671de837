package registry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLimiter: a slot is held until the body is read or closed, or until
// the request's timeout when it never is.
func TestLimiter(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	l := &limiter{sem: make(chan struct{}, 1), timeout: timeout,
		next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("body")), Request: r}, nil
		})}
	// get sends a request whose caller waits at most wait (for a slot and
	// the answer), and whose context lives on, as a caller's does while it
	// reads the body.
	get := func(wait time.Duration) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/v2/", nil)
		return l.RoundTrip(req)
	}

	start := time.Now()
	if _, err := get(time.Minute); err != nil { // its body is never closed
		t.Fatal(err)
	}
	// The slot is taken: a caller that gives up waiting gets its context's error.
	if _, err := get(50 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for a slot: %v, want the caller's deadline", err)
	}
	// The leaked body's timeout gives the slot back.
	resp, err := get(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < timeout/2 || d > timeout+5*time.Second {
		t.Errorf("got the leaked slot after %v, want about %v", d, timeout)
	}
	// A closed body gives it back at once.
	resp.Body.Close()
	if resp, err = get(timeout / 2); err != nil {
		t.Errorf("after the body was closed: %v", err)
	}
	// So does a body read to its end.
	io.ReadAll(resp.Body)
	if _, err = get(timeout / 2); err != nil {
		t.Errorf("after the body was read: %v", err)
	}
}
