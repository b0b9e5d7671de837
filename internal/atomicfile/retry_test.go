package atomicfile

import (
	"errors"
	"testing"
	"time"
)

// TestRetry: a transient failure is tried again, sleeping 1 ms doubling
// to at most 100 ms, until it succeeds or the budget is slept; any other
// error returns at once.
func TestRetry(t *testing.T) {
	errBusy, errOther := errors.New("busy"), errors.New("other")
	transient := func(err error) bool { return errors.Is(err, errBusy) }
	for _, tc := range []struct {
		name    string
		results []error // what op returns on each call; the last repeats
		want    error
		calls   int
		slept   time.Duration
	}{
		{"at once", []error{nil}, nil, 1, 0},
		{"busy, then free", []error{errBusy, errBusy, nil}, nil, 3, 3 * time.Millisecond},
		{"another error", []error{errOther}, errOther, 1, 0},
		{"busy, then another error", []error{errBusy, errOther}, errOther, 2, time.Millisecond},
		// 1+2+4+…+64 = 127 ms, then 100 ms at a time, the last cut to fit
		// 2 s: 7 + 19 sleeps, 27 calls.
		{"busy past the budget", []error{errBusy}, errBusy, 27, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			var slept time.Duration
			err := retry(func() error {
				r := tc.results[min(calls, len(tc.results)-1)]
				calls++
				return r
			}, transient, 2*time.Second, func(d time.Duration) {
				if d <= 0 || d > 100*time.Millisecond {
					t.Errorf("slept %v", d)
				}
				slept += d
			})
			if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if calls != tc.calls || slept != tc.slept {
				t.Errorf("%d calls sleeping %v, want %d and %v", calls, slept, tc.calls, tc.slept)
			}
		})
	}
}
