// Package fleet reads many hosts in one run: concurrently within a
// bound, each host with its own timeout, so that a slow host never holds
// the others beyond its timeout, and a host that cannot be read is named
// with why, never taken for a host that runs nothing.
//
// It reads; what an unread host means for its modules (refused, or
// skipped where the catalogue allows it) is the caller's decision.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pin-tool/pin/internal/host"
)

// Defaults of Options.
const (
	DefaultConcurrency = 8
	DefaultTimeout     = 30 * time.Second
)

// Observer is a host that can be read: every host adapter.
type Observer interface {
	Observe(ctx context.Context) (*host.Snapshot, error)
}

// Options bound a read.
type Options struct {
	// Concurrency is how many hosts are read at once (default 8).
	Concurrency int
	// Timeout bounds the read of each host, from when it starts (default
	// 30s).
	Timeout time.Duration
	// Done, when not nil, is called as each host's result is had (read,
	// failed, timed out, or not started), with how many are and how many
	// there are: never concurrently, never after Read returns, whatever a
	// host left behind does later.
	Done func(done, total int)
}

// Result is one host's read: its snapshot, or why there is none.
type Result struct {
	Snapshot *host.Snapshot
	// Err names the host; it is a *TimeoutError when the host did not
	// answer within its timeout.
	Err error
	// Took is how long the read took (at most the timeout, plus the
	// scheduling).
	Took time.Duration
}

// TimeoutError is a host that did not answer within its timeout.
type TimeoutError struct {
	Host    string
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("host %s did not answer within %s", e.Host, e.Timeout)
}

// Is makes a TimeoutError context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Read reads every host, at most o.Concurrency at once, and returns each
// one's result by name. A host that ignores its context is left behind
// when its timeout passes (its slot is freed for the next host, and its
// late answer dropped): the run never waits on it longer. ctx ending
// stops the hosts not yet started, whose results carry ctx's error.
func Read(ctx context.Context, hosts map[string]Observer, o Options) map[string]Result {
	n := o.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var (
		mu  sync.Mutex
		out = make(map[string]Result, len(hosts))
		wg  sync.WaitGroup
		sem = make(chan struct{}, n)
	)
	for name, h := range hosts {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			mu.Lock()
			out[name] = Result{Err: fmt.Errorf("host %s: not read: %w", name, ctx.Err())}
			if o.Done != nil {
				o.Done(len(out), len(hosts))
			}
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := readOne(ctx, name, h, timeout)
			mu.Lock()
			out[name] = r
			if o.Done != nil {
				o.Done(len(out), len(hosts))
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// readOne reads h within timeout, whether or not h honours its context.
func readOne(ctx context.Context, name string, h Observer, timeout time.Duration) Result {
	start := time.Now()
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		s, err := h.Observe(hctx)
		if err != nil && errors.Is(hctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = &TimeoutError{Host: name, Timeout: timeout}
		}
		done <- Result{Snapshot: s, Err: err}
	}()
	select {
	case r := <-done:
		r.Took = time.Since(start)
		return r
	case <-hctx.Done():
		err := error(&TimeoutError{Host: name, Timeout: timeout})
		if ctx.Err() != nil {
			err = fmt.Errorf("host %s: %w", name, ctx.Err())
		}
		return Result{Err: err, Took: time.Since(start)}
	}
}
