package registry

import (
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// retrying retries GET and HEAD requests that failed in a way that may
// pass: the statuses in retryStatus and connection resets. It waits what
// the answer's Retry-After says, else backoff[attempt]; when Retry-After
// asks for more than maxWait, the answer is returned rather than waited
// for.
type retrying struct {
	next     http.RoundTripper
	attempts int
	backoff  []time.Duration
	maxWait  time.Duration
}

var retryStatus = []int{
	http.StatusRequestTimeout,
	http.StatusTooManyRequests,
	http.StatusInternalServerError,
	http.StatusBadGateway,
	http.StatusServiceUnavailable,
	http.StatusGatewayTimeout,
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	safe := (req.Method == http.MethodGet || req.Method == http.MethodHead) && (req.Body == nil || req.Body == http.NoBody)
	for attempt := 0; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		if !safe || attempt+1 >= t.attempts {
			return resp, err
		}
		var wait time.Duration
		switch {
		case err != nil:
			if !blip(err) || req.Context().Err() != nil {
				return nil, err
			}
			wait = t.backoffAt(attempt)
		case slices.Contains(retryStatus, resp.StatusCode):
			wait = t.backoffAt(attempt)
			if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				if d > t.maxWait {
					return resp, nil // the registry asks for longer than we wait
				}
				wait = d
			}
			// Drained, so that the connection is reused.
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
		default:
			return resp, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		}
	}
}

func (t *retrying) backoffAt(attempt int) time.Duration {
	if len(t.backoff) == 0 {
		return 0
	}
	return t.backoff[min(attempt, len(t.backoff)-1)]
}

// blip reports whether a request's error is a network blip worth one more
// try: the connection was reset or closed under it. A refused connection,
// a TLS failure or a timeout is not.
func blip(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP-date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		if s > int64(24*time.Hour/time.Second) {
			return 24 * time.Hour, true // beyond any wait, without overflow
		}
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
