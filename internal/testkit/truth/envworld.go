package truth

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Env is an environment of the catalogue: its hosts, the environment
// builds are promoted to it from, and how long they must have run there
// first.
type Env struct {
	Name  string
	Hosts []string
	From  string
	Soak  time.Duration
}

// Events and steps of histories with environments.
const (
	OpTick    OpKind = "tick"    // time passes (Text: a duration)
	OpRestart OpKind = "restart" // the engine restarts a container: it starts again now
	OpPromote OpKind = "promote" // "pin promote FROM TO [MODULE...]" (Host FROM, Tag TO, Text modules, Ref a --pick)
	OpLift    OpKind = "lift"    // "pin promote --lift FROM TO MODULE" (Host FROM, Tag TO)
	OpHealth  OpKind = "health"  // a container's health check says State ("healthy", "unhealthy", "starting")
)

// Runs reports whether a container in state runs its build now: its
// process is there (running, paused, or being restarted by its engine).
// An exited, dead or created container runs nothing.
func Runs(state string) bool {
	return state == "running" || state == "paused" || state == "restarting"
}

// ctr is h's container of module mod; nil when h is nil or runs none.
func (h *Host) ctr(mod string) *Ctr {
	if h == nil {
		return nil
	}
	return h.Ctrs[mod]
}

// Env returns the environment named name, or nil.
func (w *World) Env(name string) *Env {
	for _, e := range w.Envs {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// EnvOf returns the environment host is in, or nil.
func (w *World) EnvOf(host string) *Env {
	for _, e := range w.Envs {
		if slices.Contains(e.Hosts, host) {
			return e
		}
	}
	return nil
}

// envHosts are m's runs_on hosts in environment e: where its containers
// are e's floors (no host of a history with environments takes over by
// label).
func envHosts(m *Module, e *Env) []string {
	var out []string
	for _, h := range m.Hosts {
		if slices.Contains(e.Hosts, h) {
			out = append(out, h)
		}
	}
	return out
}

// inEnv reports whether m runs in e: its runs_on names one of e's hosts.
func inEnv(m *Module, e *Env) bool { return len(envHosts(m, e)) > 0 }

// lastInEnv reports whether host is the last of m's runs_on hosts in its
// environment: histories keep a module in every environment it joined
// (a module that leaves one is pin's retired-entry case, which the
// single-lock histories check).
func (w *World) lastInEnv(m *Module, host string) bool {
	e := w.EnvOf(host)
	if e == nil {
		return false
	}
	hs := envHosts(m, e)
	return len(hs) == 1 && hs[0] == host
}

// applyEnv performs the events only histories with environments have.
func (w *World) applyEnv(o Op, m *Module, h *Host) {
	switch o.Kind {
	case OpTick:
		if d, err := time.ParseDuration(o.Text); err == nil && d > 0 {
			w.Clock = w.Clock.Add(d)
		}
	case OpRestart:
		if c := h.ctr(o.Mod); c != nil && m != nil {
			c.StartedAt, c.State = w.Clock, "running"
			c.Restarts++
			if c.Health != "" {
				c.Health = "starting" // checked anew after a start
			}
		}
	case OpHealth:
		if c := h.ctr(o.Mod); c != nil && m != nil {
			c.Health = o.State
		}
	case OpHostMove:
		w.moveHost(o.Host, o.Tag)
	}
}

// describeEnv renders the ops of histories with environments; "" for
// another op.
func describeEnv(o Op, bname func(int) string) string {
	if d := describeMove(o); d != "" {
		return d
	}
	switch o.Kind {
	case OpTick:
		return "time passes: " + o.Text
	case OpRestart:
		return fmt.Sprintf("%s/%s is restarted by its engine", o.Host, o.Mod)
	case OpHealth:
		return fmt.Sprintf("%s/%s's health check says %s", o.Host, o.Mod, o.State)
	case OpPromote:
		s := fmt.Sprintf("promote %s %s", o.Host, o.Tag)
		if o.Text != "" {
			s += " " + strings.ReplaceAll(o.Text, ",", " ")
		}
		if o.Ref != "" {
			s += fmt.Sprintf(" --pick %s (%s)", shortRef(o.Ref), bname(o.Build))
		}
		return s
	case OpLift:
		return fmt.Sprintf("promote --lift %s %s %s", o.Host, o.Tag, o.Mod)
	}
	return ""
}

// promoted lists the modules an OpPromote names; nil for all.
func (o Op) promoted() []string {
	if o.Text == "" {
		return nil
	}
	return strings.Split(o.Text, ",")
}
