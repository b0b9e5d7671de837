package resolve

import (
	"context"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/lock"
)

// TestLockRoundTripsRealDates: build dates as builders write them (with
// nanoseconds), and dates after the reader's clock (a lock written on a
// machine whose clock runs ahead), survive the lock's whole-second lines:
// the next run reads the same entry back without calling it edited.
func TestLockRoundTripsRealDates(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		created time.Time
		now     time.Time // the second run's clock
	}{
		{"nanoseconds", time.Date(2026, 9, 1, 10, 11, 12, 345678901, time.UTC), reviewNow},
		{"a slower clock", time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newFakeRegistry(repo, "1.27.3+1.27.3")
			img := reg.byTag["1.27.3"]
			img.Created = tc.created
			reg.byTag["1.27.3"], reg.byDigest[img.Digest] = img, img
			m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.27.3", img)}
			d := Resolve(ctx, inputOf(m, reg, nil, observed(m, nil, nil))).Decisions[0]
			if d.New() == nil {
				t.Fatalf("first run: %v %v", d.Refusal(), d.Err())
			}
			written := lock.Format(&lock.Lock{Modules: []*lock.Module{d.New()}})
			old, diags := lock.Parse(written, "pin.lock.hcl")
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			in := inputOf(m, reg, old, observed(m, nil, nil))
			in.Now = tc.now
			again := Resolve(ctx, in).Decisions[0]
			if again.Err() != nil || again.New() == nil {
				t.Fatalf("second run over the lock it wrote: %v %v\n%s", again.Err(), again.Refusal(), written)
			}
		})
	}
}
