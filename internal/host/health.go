package host

import (
	"fmt"
	"time"
)

// Probe is one run of a Docker health check, as the engine's health log
// keeps it (the last five).
type Probe struct {
	Start    time.Time
	ExitCode int
}

// EngineHealth is what a Docker Engine (or Podman) reports of a
// container's health in its inspect: its state word, the exit code and end
// of its last run (State.ExitCode, State.FinishedAt, an RFC 3339 time or
// the engine's zero date), and its health check's status and log
// (State.Health; check "" for a container without one).
//
// The exit code and end are kept for a container whose run ended
// (exited, dead, restarting: between two runs; Podman's "stopped", its
// word for a container between two runs of its restart policy), not for
// one that runs, is paused or never started.
func EngineHealth(state string, exitCode int, finishedAt, check string, log []Probe) (Health, error) {
	var h Health
	switch state {
	case StateRunning, StatePaused, StateCreated:
	default:
		end, err := ParseStartedAt(finishedAt)
		if err != nil {
			return Health{}, fmt.Errorf("finished at: %w", err)
		}
		h.ExitCode, h.FinishedAt = exitCode, end
	}
	if check != "" && check != HealthNone {
		h.Check = check
		h.Since = streakStart(check, log)
	}
	return h, nil
}

// streakStart is the start of the first probe of the log's last run of
// probes that agree with verdict (passing for healthy, failing for
// unhealthy): since when, as far as the log tells, the check says so.
func streakStart(verdict string, log []Probe) time.Time {
	var since time.Time
	for i := len(log) - 1; i >= 0; i-- {
		p := log[i]
		pass := p.ExitCode == 0
		if (verdict == HealthHealthy && !pass) || (verdict == HealthUnhealthy && pass) || verdict == HealthStarting {
			break
		}
		since = p.Start.UTC()
	}
	return since
}

// Worst is the health of replicas, two at a time: an ended run's exit
// code, a failing verdict and a pod not Ready win, so that the result
// does not depend on the order the pods were read in.
func (h Health) Worst(o Health) Health {
	out := h
	if o.FinishedAt.After(out.FinishedAt) || (out.ExitCode == 0 && o.ExitCode != 0) {
		out.ExitCode, out.FinishedAt = o.ExitCode, o.FinishedAt
	}
	rank := map[string]int{"": 0, HealthNone: 1, HealthHealthy: 2, HealthStarting: 3, HealthUnhealthy: 4}
	if rank[o.Check] > rank[out.Check] || (o.Check == out.Check && o.Since.After(out.Since)) {
		out.Check, out.Since = o.Check, o.Since
	}
	switch {
	case o.Ready == nil:
	case out.Ready == nil || (*out.Ready && !*o.Ready):
		out.Ready, out.Since = o.Ready, o.Since
	case *out.Ready == *o.Ready && o.Since.After(out.Since):
		out.Since = o.Since
	}
	return out
}
