package registry

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// limiter bounds the requests in flight and the time each takes. A request
// holds a slot and runs under its timeout from when it is sent until its
// response body is read to the end or closed; a body never closed gives its
// slot back when the timeout expires.
type limiter struct {
	next    http.RoundTripper
	sem     chan struct{}
	timeout time.Duration
}

func (l *limiter) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case l.sem <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	// Waiting for a slot is not part of the request's time.
	ctx, cancel := context.WithTimeout(req.Context(), l.timeout)
	context.AfterFunc(ctx, func() { <-l.sem })
	resp, err := l.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &doneBody{ReadCloser: resp.Body, done: cancel}
	return resp, nil
}

// doneBody calls done once, at the end of the body or when it is closed.
type doneBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *doneBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.once.Do(b.done)
	}
	return n, err
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
