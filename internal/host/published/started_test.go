package published

import (
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/host"
)

// TestObservationCarriesStartTimes: a published observation carries the
// containers' start times and restart counts when the host read them.
func TestObservationCarriesStartTimes(t *testing.T) {
	started := time.Date(2026, 12, 1, 8, 30, 0, 500, time.UTC)
	o := &Observation{Host: "s1", ReadAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Snapshot: &host.Snapshot{
		Containers: []host.Container{{ID: "c1", Name: "web", ImageID: "sha256:aa", State: host.StateRunning, StartedAt: started, RestartCount: 2}},
	}}
	b, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	c := back.Snapshot.Containers[0]
	if !c.StartedAt.Equal(started) || c.RestartCount != 2 {
		t.Errorf("read back: started %v, restarts %d\n%s", c.StartedAt, c.RestartCount, b)
	}
}
