package promote

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// TestPromoteRequiresHealthyRun: a build whose container on one host of
// staging exited, restarts, is unhealthy, has a health check not yet
// passed, or whose pod is not Ready, is refused, naming the host, the
// container, what the engine reported and since when, and the lock is
// byte-identical; the same build healthy on every host is promoted, the
// health seen recorded in its promoted block. An environment that
// requires only "running" promotes past a failing health check, and the
// block says it was not required; it still refuses a container that
// exited.
func TestPromoteRequiresHealthyRun(t *testing.T) {
	yes, no := true, false
	since := now.Add(-30 * time.Minute)
	for _, tc := range []struct {
		name  string
		state string
		h     host.Health
		// want in the refusal; "" for a promotion.
		want, wantRunningOnly string
	}{
		{"exited", host.StateExited, host.Health{ExitCode: 137, FinishedAt: since}, "s2/web exited (exit code 137) since " + lock.FormatTime(since), "s2/web exited (exit code 137)"},
		{"restarting", host.StateRestarting, host.Health{ExitCode: 1, FinishedAt: since}, "s2/web restarting (exit code 1) since", "s2/web restarting"},
		{"dead", host.StateDead, host.Health{}, "s2/web dead", "s2/web dead"},
		{"paused", host.StatePaused, host.Health{}, "s2/web paused", "s2/web paused"},
		{"unhealthy", host.StateRunning, host.Health{Check: host.HealthUnhealthy, Since: since}, "s2/web health check unhealthy since " + lock.FormatTime(since), ""},
		{"starting", host.StateRunning, host.Health{Check: host.HealthStarting}, "s2/web health check starting", ""},
		{"not ready", host.StateRunning, host.Health{Ready: &no, Since: since}, "s2/web pod not Ready since " + lock.FormatTime(since), ""},
		{"healthy", host.StateRunning, host.Health{Check: host.HealthHealthy, Since: since}, "", ""},
		{"ready", host.StateRunning, host.Health{Ready: &yes}, "", ""},
		{"no check", host.StateRunning, host.Health{}, "", ""},
	} {
		for _, runningOnly := range []bool{false, true} {
			name := tc.name
			want := tc.want
			if runningOnly {
				name += "/require running"
				want = tc.wantRunningOnly
			}
			t.Run(name, func(t *testing.T) {
				w := newWorld("web")
				w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
				w.run("s2", "web", "1.28.0", 50*time.Hour, 0)
				c := &w.obs.Snapshots["s2"].Containers[0]
				c.State, c.Health = tc.state, tc.h
				w.lockTo("web", "1.27.3")
				if runningOnly {
					w.to.Require = []string{catalogue.RequireRunning}
				}
				old := lock.Format(w.old)
				res := promote(t, w.input())
				if want != "" {
					r := refusedAs(t, res, old, "web", KindUnhealthy)
					if !strings.Contains(r.Why, want) {
						t.Errorf("why does not say %q: %s", want, r.Why)
					}
					return
				}
				if res.Refused() || len(res.Entries) != 1 {
					t.Fatalf("refused: %v", res.Refusals)
				}
				health := res.Entries[0].New.Promoted.Health
				if len(health) != 2 || !strings.HasPrefix(health[0], "s1/web: running") || !strings.HasPrefix(health[1], "s2/web: ") {
					t.Errorf("health recorded: %q", health)
				}
				if tc.want != "" && !strings.Contains(health[1], "(not required)") {
					t.Errorf("a failure not required is not written so: %q", health)
				}
				if !strings.Contains(string(lock.Format(res.Lock())), "health  = [") {
					t.Errorf("the promoted block records no health:\n%s", lock.Format(res.Lock()))
				}
			})
		}
	}
}

// TestUnhealthyWords: what a promotion records of each container, and
// that a restart counts only within the soak.
func TestUnhealthyWords(t *testing.T) {
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 2*time.Hour, 2)
	w.run("s2", "web", "1.28.0", 50*time.Hour, 5)
	w.obs.Snapshots["s1"].Containers[0].Check = host.HealthHealthy
	w.obs.Index()
	obs := observations(t, w, "web")
	failed, seen := Unhealthy(w.from, obs, nil, 24*time.Hour, now)
	want := []string{
		"s1/web: running, healthy, restarted 2 times by its engine, last started " + lock.FormatTime(now.Add(-2*time.Hour)) + ", within the soak of 24h0m0s",
		"s2/web: running, health not reported",
	}
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("seen (-want +got):\n%s", d)
	}
	if len(failed) != 1 || failed[0].Requirement != catalogue.RequireNoRestart || failed[0].Where != "s1/web" {
		t.Errorf("failed: %+v", failed)
	}
	if failed, _ := Unhealthy(w.from, obs, nil, 0, now); len(failed) != 0 {
		t.Errorf("without a soak, a restart failed: %+v", failed)
	}
}

func observations(t *testing.T, w *world, mod string) []observe.Observation {
	t.Helper()
	obs, _ := observe.Observations(w.cat.Module(mod), w.obs)
	return obs
}
