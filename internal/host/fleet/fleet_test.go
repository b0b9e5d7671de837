package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/host/fleet"
)

// fake is a host of the unit layer: it answers after delay, or never
// (ignoring its context) when hang is set; inFlight tracks the reads at
// once across fakes.
type fake struct {
	name     string
	delay    time.Duration
	hang     bool
	fail     error
	inFlight *atomic.Int64
	peak     *atomic.Int64
}

func (f fake) Observe(ctx context.Context) (*host.Snapshot, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if f.hang {
		select {} // a host adapter that ignores its context
	}
	time.Sleep(f.delay)
	if f.fail != nil {
		return nil, f.fail
	}
	return &host.Snapshot{Host: f.name}, nil
}

// TestReadBoundsAndTimeouts: never more hosts at once than the bound; a
// host that hangs (ignoring its context) is named as timed out when its
// timeout passes and holds nobody; a failing host is named; every other
// host is read.
func TestReadBoundsAndTimeouts(t *testing.T) {
	var inFlight, peak atomic.Int64
	hosts := map[string]fleet.Observer{}
	for i := range 40 {
		name := fmt.Sprintf("h%02d", i)
		hosts[name] = fake{name: name, delay: 5 * time.Millisecond, inFlight: &inFlight, peak: &peak}
	}
	down := errors.New("connect: connection refused")
	hosts["hung"] = fake{name: "hung", hang: true, inFlight: &inFlight, peak: &peak}
	hosts["down"] = fake{name: "down", fail: down, inFlight: &inFlight, peak: &peak}

	got := fleet.Read(context.Background(), hosts, fleet.Options{Concurrency: 4, Timeout: 300 * time.Millisecond})
	if len(got) != len(hosts) {
		t.Fatalf("%d results for %d hosts", len(got), len(hosts))
	}
	// The hung host's read still counts in flight after it was left
	// behind; the bound is on the slots, so at most 4 reads plus it.
	if p := peak.Load(); p > 5 {
		t.Errorf("peak %d hosts in flight, bound 4 (+1 left behind)", p)
	}
	var te *fleet.TimeoutError
	if r := got["hung"]; !errors.As(r.Err, &te) || te.Host != "hung" || !errors.Is(r.Err, context.DeadlineExceeded) {
		t.Errorf("hung host: %v", r.Err)
	}
	if r := got["down"]; !errors.Is(r.Err, down) {
		t.Errorf("down host: %v", r.Err)
	}
	for name, r := range got {
		if name == "hung" || name == "down" {
			continue
		}
		if r.Err != nil || r.Snapshot == nil || r.Snapshot.Host != name {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// TestReadSlowHostHoldsNobody: with one slot, hosts queued behind a hung
// host start once its timeout frees the slot; the run ends within the
// timeout plus the others' reads, not when the hung host answers.
func TestReadSlowHostHoldsNobody(t *testing.T) {
	var inFlight, peak atomic.Int64
	hosts := map[string]fleet.Observer{
		"hung": fake{name: "hung", hang: true, inFlight: &inFlight, peak: &peak},
		"a":    fake{name: "a", inFlight: &inFlight, peak: &peak},
		"b":    fake{name: "b", inFlight: &inFlight, peak: &peak},
	}
	done := make(chan map[string]fleet.Result)
	go func() {
		done <- fleet.Read(context.Background(), hosts, fleet.Options{Concurrency: 1, Timeout: 100 * time.Millisecond})
	}()
	select {
	case got := <-done:
		if got["a"].Err != nil || got["b"].Err != nil || got["hung"].Err == nil {
			t.Fatalf("%+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read waited on a hung host beyond its timeout")
	}
}

// TestReadDoneCountsEveryHostOnce: Done is called once per host as its
// result is had — the host that answers after its timeout counted when
// it timed out — ending at (3, 3) before Read returns, and never after
// (the late answer, dropped, calls nothing: a progress line drawn after
// the run's output would garble it).
func TestReadDoneCountsEveryHostOnce(t *testing.T) {
	var inFlight, peak atomic.Int64
	hosts := map[string]fleet.Observer{
		"late": fake{name: "late", delay: 400 * time.Millisecond, inFlight: &inFlight, peak: &peak},
		"a":    fake{name: "a", inFlight: &inFlight, peak: &peak},
		"b":    fake{name: "b", fail: errors.New("refused"), inFlight: &inFlight, peak: &peak},
	}
	var calls []string
	var last atomic.Int64
	got := fleet.Read(context.Background(), hosts, fleet.Options{Concurrency: 3, Timeout: 100 * time.Millisecond, Done: func(done, total int) {
		calls = append(calls, fmt.Sprintf("%d/%d", done, total))
		last.Store(int64(done))
	}})
	if got["late"].Err == nil {
		t.Fatalf("the late host was not timed out: %+v", got["late"])
	}
	if want := "1/3 2/3 3/3"; fmt.Sprint(calls) != "["+want+"]" {
		t.Errorf("Done calls %v, want [%s]", calls, want)
	}
	time.Sleep(500 * time.Millisecond) // the late host answers now
	if n := len(calls); n != 3 || last.Load() != 3 {
		t.Errorf("Done called %d times after the late answer, want 3", n)
	}
}
