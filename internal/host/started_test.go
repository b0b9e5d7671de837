package host

import (
	"strings"
	"testing"
	"time"
)

// TestStartTimesRead: a docker inspect array carries each container's
// State.StartedAt and RestartCount; pin's JSON writes them, reads them
// back, and leaves them out when unknown, so a file written before them
// reads and writes the same bytes.
func TestStartTimesRead(t *testing.T) {
	inspect := `[
 {"Id": "c1", "Name": "/web", "Image": "sha256:aa", "RestartCount": 3,
  "State": {"Status": "running", "StartedAt": "2026-12-01T09:30:00.123456789+01:00"},
  "Config": {"Image": "nginx:1.27"}},
 {"Id": "c2", "Name": "/new", "Image": "sha256:aa",
  "State": {"Status": "created", "StartedAt": "0001-01-01T00:00:00Z"},
  "Config": {"Image": "nginx:1.27"}},
 {"Id": "sha256:aa", "RepoTags": ["nginx:1.27"], "Created": "2026-11-01T00:00:00Z"}
]`
	s, err := ParseSnapshot([]byte(inspect), "h1")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Container{}
	for _, c := range s.Containers {
		byName[c.Name] = c
	}
	want := time.Date(2026, 12, 1, 8, 30, 0, 123456789, time.UTC)
	if c := byName["web"]; !c.StartedAt.Equal(want) || c.StartedAt.Location() != time.UTC || c.RestartCount != 3 || !c.Started() {
		t.Errorf("web: started %v, restarts %d", c.StartedAt, c.RestartCount)
	}
	if c := byName["new"]; !c.StartedAt.IsZero() || c.Started() || c.RestartCount != 0 {
		t.Errorf("a container never started: started %v", c.StartedAt)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"started_at": "2026-12-01T08:30:00.123456789Z"`) || !strings.Contains(string(out), `"restart_count": 3`) ||
		strings.Count(string(out), "started_at") != 1 {
		t.Errorf("snapshot JSON:\n%s", out)
	}
	back, err := ParseSnapshot(out, "")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.Marshal()
	if string(again) != string(out) {
		t.Errorf("round trip changed the bytes:\n%s\n%s", out, again)
	}

	// A file of the format before start times: reads, and writes alike.
	old := `{
  "schema": 1,
  "host": "h1",
  "containers": [
    {
      "id": "c1",
      "name": "web",
      "image": "nginx:1.27",
      "image_id": "sha256:aa",
      "state": "running"
    }
  ],
  "images": []
}
`
	o, err := ParseSnapshot([]byte(old), "")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := o.Marshal(); string(b) != old {
		t.Errorf("an old snapshot wrote other bytes:\n%s", b)
	}
	if _, err := ParseSnapshot([]byte(strings.Replace(inspect, "2026-12-01T09:30:00.123456789+01:00", "yesterday", 1)), "h1"); err == nil {
		t.Error("a StartedAt that is not a date was read")
	}
}
