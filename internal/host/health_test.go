package host

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHealthRead: a docker inspect array carries each container's exit
// code, end and health check; pin's JSON writes them, reads them back, and
// leaves them out when there are none, so that a snapshot of containers
// without health checks writes the bytes it wrote before.
func TestHealthRead(t *testing.T) {
	inspect := `[
 {"Id": "c1", "Name": "/ok", "Image": "sha256:aa", "Config": {"Image": "web:1"},
  "State": {"Status": "running", "StartedAt": "2026-12-01T09:00:00Z", "ExitCode": 0, "FinishedAt": "0001-01-01T00:00:00Z",
   "Health": {"Status": "healthy", "FailingStreak": 0, "Log": [
    {"Start": "2026-12-01T09:00:10Z", "ExitCode": 1},
    {"Start": "2026-12-01T09:00:20Z", "ExitCode": 0},
    {"Start": "2026-12-01T09:00:30Z", "ExitCode": 0}]}}},
 {"Id": "c2", "Name": "/sick", "Image": "sha256:aa", "Config": {"Image": "web:1"},
  "State": {"Status": "running", "StartedAt": "2026-12-01T09:00:00Z",
   "Health": {"Status": "unhealthy", "FailingStreak": 2, "Log": [
    {"Start": "2026-12-01T09:00:20Z", "ExitCode": 0},
    {"Start": "2026-12-01T09:00:30Z", "ExitCode": 1},
    {"Start": "2026-12-01T09:00:40Z", "ExitCode": 1}]}}},
 {"Id": "c3", "Name": "/early", "Image": "sha256:aa", "Config": {"Image": "web:1"},
  "State": {"Status": "running", "StartedAt": "2026-12-01T09:00:00Z", "Health": {"Status": "starting", "Log": []}}},
 {"Id": "c4", "Name": "/crashed", "Image": "sha256:aa", "Config": {"Image": "web:1"},
  "State": {"Status": "exited", "StartedAt": "2026-12-01T09:00:00Z", "ExitCode": 137, "FinishedAt": "2026-12-01T10:00:00.5+01:00"}},
 {"Id": "c5", "Name": "/looping", "Image": "sha256:aa", "Config": {"Image": "web:1"}, "RestartCount": 4,
  "State": {"Status": "restarting", "StartedAt": "2026-12-01T09:00:00Z", "ExitCode": 3, "FinishedAt": "2026-12-01T09:00:01Z"}},
 {"Id": "c6", "Name": "/plain", "Image": "sha256:aa", "Config": {"Image": "web:1"},
  "State": {"Status": "running", "StartedAt": "2026-12-01T09:00:00Z", "ExitCode": 0, "FinishedAt": "2026-11-30T09:00:00Z"}}
]`
	s, err := ParseSnapshot([]byte(inspect), "h1")
	if err != nil {
		t.Fatal(err)
	}
	at := func(hms string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, "2026-12-01T"+hms+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	want := map[string]Health{
		"ok":      {Check: HealthHealthy, Since: at("09:00:20")},
		"sick":    {Check: HealthUnhealthy, Since: at("09:00:30")},
		"early":   {Check: HealthStarting},
		"crashed": {ExitCode: 137, FinishedAt: at("09:00:00.5")},
		"looping": {ExitCode: 3, FinishedAt: at("09:00:01")},
		"plain":   {}, // runs, no check: the end of an earlier run is not kept
	}
	got := map[string]Health{}
	for _, c := range s.Containers {
		got[c.Name] = c.Health
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("health read (-want +got):\n%s", d)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"health": "unhealthy"`, `"health_since": "2026-12-01T09:00:30Z"`, `"exit_code": 137`, `"finished_at": "2026-12-01T09:00:00.5Z"`} {
		if !strings.Contains(string(out), w) {
			t.Errorf("snapshot JSON lacks %s:\n%s", w, out)
		}
	}
	back, err := ParseSnapshot(out, "")
	if err != nil {
		t.Fatal(err)
	}
	again := map[string]Health{}
	for _, c := range back.Containers {
		again[c.Name] = c.Health
	}
	if d := cmp.Diff(want, again); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if strings.Contains(string(out), `"none"`) || strings.Count(string(out), `"health"`) != 3 {
		t.Errorf("containers without a check write a health:\n%s", out)
	}
}

// TestHealthWorst: the health of replicas is the worst of theirs, in any
// order.
func TestHealthWorst(t *testing.T) {
	yes, no := true, false
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ready := Health{Ready: &yes, Since: t0}
	notReady := Health{Ready: &no, Since: t0.Add(time.Hour)}
	crashed := Health{Ready: &no, Since: t0.Add(2 * time.Hour), ExitCode: 1, FinishedAt: t0.Add(2 * time.Hour)}
	for _, tc := range []struct {
		in   []Health
		want Health
	}{
		{[]Health{ready, notReady}, notReady},
		{[]Health{notReady, ready}, notReady},
		{[]Health{ready, ready}, ready},
		{[]Health{ready, crashed, notReady}, crashed},
		{[]Health{notReady, ready, crashed}, crashed},
		{[]Health{{Check: HealthHealthy}, {Check: HealthUnhealthy}}, Health{Check: HealthUnhealthy}},
		{[]Health{{Check: HealthStarting}, {Check: HealthHealthy}}, Health{Check: HealthStarting}},
	} {
		got := tc.in[0]
		for _, h := range tc.in[1:] {
			got = got.Worst(h)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("Worst of %v (-want +got):\n%s", tc.in, d)
		}
	}
}
