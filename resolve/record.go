package resolve

import (
	"fmt"
	"slices"
)

// Record is a run's evidence besides what the hosts answered
// (Input.Observed): which hosts were not read and why, the one host a
// command asked alone, and the records of other locks that bound this
// one's modules. It is built once, by internal/source, for every command
// and enforcement point; the judge reads every host's state from it, so
// that a host not read is never taken for a host read that runs nothing.
type Record struct {
	// Host, when not "", is the one host the command read ("pin lock
	// --from-host HOST", "pin plan HOST"): every other host was not
	// asked.
	Host string
	// NotRead are the hosts that were asked and not read, and why.
	NotRead map[string]NotRead
	// Only, when not nil, names the modules the command decides ("pin
	// resolve MODULE…"): the hosts read were read for those alone. Every
	// other module keeps its previous entry as it is (none, if it had
	// none), is not asked about, and a module gone from the catalogue
	// keeps its entry too; no host counts as read for the lock as a whole
	// (ReadForEvery), since the modules not named were not decided
	// against it. The named modules are decided as always, against every
	// floor. Names must be catalogue modules (see UnknownModules).
	// Outdated and PlanCutover ignore it.
	Only []string
	// Elsewhere are entries of other locks (another environment's) that
	// were held against a host of this catalogue: a host moved between
	// environments. Each is a floor for the modules that take over what it
	// recorded, as a retired entry is (see takeover.go), and is never
	// written to this lock: its own lock keeps it. A floor belongs to what
	// ran on a host, not to the environment the host was in.
	Elsewhere []Foreign
}

// Why says why a host was not read.
type Why string

const (
	// WhySkipped: the host could not be read and the catalogue lets a
	// run go on without it (skip_unreachable).
	WhySkipped Why = "skipped"
	// WhyUnreachable: the host could not be read (its error is in
	// Input.Observed.Errors too).
	WhyUnreachable Why = "unreachable"
	// WhyNotAsked: the command read another host alone (Record.Host).
	WhyNotAsked Why = "not-asked"
)

// NotRead is a host not read: why, and the error that said so.
type NotRead struct {
	Why Why
	Err error
}

// Read reports whether host h was read this run.
func (r Record) Read(h string) bool {
	if r.Host != "" && h != r.Host {
		return false
	}
	_, no := r.NotRead[h]
	return !no
}

// Decides reports whether the run decides module m: every module, or one
// that Only names.
func (r Record) Decides(m string) bool {
	return r.Only == nil || slices.Contains(r.Only, m)
}

// ReadForEvery reports whether host h was read for every module of the
// catalogue: read, and no module left out of the run (Only). A lock's
// hosts line lists those.
func (r Record) ReadForEvery(h string) bool {
	return r.Only == nil && r.Read(h)
}

// Unread says why host h was not read; ok is false when it was.
func (r Record) Unread(h string) (NotRead, bool) {
	if nr, ok := r.NotRead[h]; ok {
		return nr, true
	}
	if r.Host != "" && h != r.Host {
		return NotRead{Why: WhyNotAsked}, true
	}
	return NotRead{}, false
}

// Skipped are the hosts skipped under skip_unreachable, sorted.
func (r Record) Skipped() []string {
	var out []string
	for h, nr := range r.NotRead {
		if nr.Why == WhySkipped {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// Sentence says, for people, why a host was not read: "host s2 was
// skipped (skip_unreachable): …".
func (nr NotRead) Sentence(h string) string {
	switch nr.Why {
	case WhySkipped:
		return fmt.Sprintf("host %s was skipped (skip_unreachable): %v", h, nr.Err)
	case WhyNotAsked:
		return fmt.Sprintf("host %s was not asked", h)
	}
	return fmt.Sprintf("host %s could not be read: %v", h, nr.Err)
}
