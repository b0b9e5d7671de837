package published

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// TestObservationCarriesHealth: a published observation carries what the
// engine reported of each container's health, and one published before
// health was part of the format still reads, its health unknown, and
// writes the same bytes.
func TestObservationCarriesHealth(t *testing.T) {
	ready := false
	since := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	h := host.Health{ExitCode: 1, FinishedAt: since, Check: host.HealthUnhealthy, Ready: &ready, Since: since.Add(time.Minute)}
	o := &Observation{Host: "s1", ReadAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Snapshot: &host.Snapshot{
		Containers: []host.Container{{ID: "c1", Name: "web", ImageID: "sha256:aa", State: host.StateRunning, Health: h}},
	}}
	b, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(h, back.Snapshot.Containers[0].Health); d != "" {
		t.Errorf("read back (-want +got):\n%s\n%s", d, b)
	}

	old := `{
  "pin_observation": 1,
  "host": "s1",
  "platform": "linux/amd64",
  "read_at": "2026-12-02T00:00:00Z",
  "snapshot": {
    "schema": 1,
    "host": "s1",
    "containers": [
      {
        "id": "c1",
        "name": "web",
        "image": "r.example/web:1",
        "image_id": "sha256:aa",
        "state": "running",
        "started_at": "2026-12-01T08:30:00Z",
        "restart_count": 2
      }
    ],
    "images": []
  }
}
`
	ob, err := Parse([]byte(old))
	if err != nil {
		t.Fatalf("an observation of the format before health: %v", err)
	}
	if c := ob.Snapshot.Containers[0]; c.Health != (host.Health{}) || c.RestartCount != 2 {
		t.Errorf("old observation read as %+v", c)
	}
	if again, err := ob.Marshal(); err != nil || string(again) != old {
		t.Errorf("old observation writes other bytes (%v):\n%s", err, again)
	}
}
