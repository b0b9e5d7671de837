package resolve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/lock"
)

// TestOutdatedLockUnreadOnce: when the decision cannot read the previous
// entry (its lines disagree with its digest's content), outdated reports
// that failure once, as the decision's, and does not describe the locked
// digest a second time. The failure is told apart by its type, not by
// comparing messages.
func TestOutdatedLockUnreadOnce(t *testing.T) {
	fake := newFakeRegistry(repo, "1.22.6/2024-03-01+1.22.6", "1.27.3/2026-09-01+1.27.3")
	reg := &countingRegistry{Registry: fake, asked: map[string]int{}}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	seen := observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil)
	older := fake.byTag["1.22.6"]
	// A hand edit: 1.27.4's lines over the 1.22.6 digest.
	edited := &lock.Module{Name: "svc", Policy: lock.PolicyAtLeastRunning, Image: repo, Tag: "1.27.4", Digest: older.Digest,
		Version: "1.27.4", Created: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Source: lock.SourceRunning}
	in := inputOf(m, reg, &lock.Lock{Modules: []*lock.Module{edited}}, seen)

	s := Outdated(context.Background(), in, nil)[0]
	if len(s.Failures) != 1 {
		t.Fatalf("failures %v, want the mismatch once", s.Failures)
	}
	var lm *LockMismatchError
	if !errors.As(s.Failures[0], &lm) || lm.Field != "version" {
		t.Errorf("failure %v, want the entry's version mismatch", s.Failures[0])
	}
	errs := 0
	for _, f := range s.Findings {
		if f.Status == StatusError {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d error findings, want 1: %+v", errs, s.Findings)
	}
	if n := reg.asked[older.Digest]; n != 1 {
		t.Errorf("the locked digest was described %d times, want once", n)
	}
}
