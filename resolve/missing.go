package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// StateMissing is the state of a cutover's observation whose container
// was not found (Cutover.Missing).
const StateMissing = "missing"

// Missing is what a cutover preview expected on its host and did not
// find: a runs_on target of a module, with where the catalogue names it,
// the containers that may be it, and what to do.
type Missing struct {
	// Target is what runs_on names: a container name, "compose service
	// stack/web", a workload, a label.
	Target string
	// Where is the runs_on block's place: "catalogue.hcl:23:11".
	Where string
	// Strays are the containers on the host that run the module's
	// repository and that no module takes over: the container, recreated
	// under another name, or started by hand.
	Strays []string
	// Recorded: the lock recorded the module on the host, so something of
	// it ran there.
	Recorded bool
	// Why says it in words, and what to do.
	Why string
}

// takenOn lists the containers of host in.Record.Host that some module takes
// over.
func takenOn(in Input) map[string]bool {
	taken := map[string]bool{}
	for _, m := range in.Catalogue.Modules {
		obs, _ := observe.Observations(m, in.Observed)
		for _, o := range obs {
			if o.Host == in.Record.Host {
				taken[o.Container] = true
			}
		}
	}
	return taken
}

// missingOn previews the runs_on targets of m on host in.Record.Host that were
// not found (missing, as observe.Observations lists them: "host/target"):
// VerdictMissing where something of m ran there or may run there under
// another name, else VerdictNew.
func missingOn(in Input, m *catalogue.Module, locked *lock.Module, missing []string, taken map[string]bool) []Cutover {
	var out []Cutover
	for _, miss := range missing {
		target, ok := strings.CutPrefix(miss, in.Record.Host+"/")
		if !ok {
			continue
		}
		ms := &Missing{Target: target, Where: runsOnWhere(m, in.Record.Host, target), Strays: strays(in.Observed.Snapshots[in.Record.Host], m, taken)}
		// What ran there is recorded by the module's entry, or by an entry
		// whose floor it takes over (a renamed module's, another
		// environment's from before the host moved).
		ms.Recorded = recordedOn(locked, in.Record.Host) || slices.ContainsFunc(in.heirIndex().takenOver(m, nil), func(e *lock.Module) bool { return recordedOn(e, in.Record.Host) })
		cut := Cutover{Module: m.Name, Observation: observe.Observation{Host: in.Record.Host, Container: target, State: StateMissing}, Locked: locked, Missing: ms}
		what := fmt.Sprintf("module %q takes over %s on %s (runs_on %q, %s), and %s has none", m.Name, target, in.Record.Host, in.Record.Host, ms.Where, in.Record.Host)
		if !strings.Contains(target, " ") {
			what = fmt.Sprintf("module %q takes over the container %s on %s (runs_on %q, %s), and %s has no container of that name", m.Name, target, in.Record.Host, in.Record.Host, ms.Where, in.Record.Host)
		}
		switch {
		case len(ms.Strays) > 0 || ms.Recorded:
			cut.Verdict = VerdictMissing
			ms.Why = what + missingFix(m, in.Record.Host, target, ms)
		case locked == nil:
			cut.Verdict = VerdictUnlocked
			ms.Why = what + fmt.Sprintf(": nothing of the module runs on %s, and the lock names no image for it yet: run pin resolve", in.Record.Host)
		default:
			cut.Verdict = VerdictNew
			ms.Why = what + fmt.Sprintf(": nothing of the module runs on %s, and the lock recorded none there. The lock would start it there for the first time", in.Record.Host)
		}
		out = append(out, cut)
	}
	return out
}

// recordedOn reports whether entry e recorded a container on host.
func recordedOn(e *lock.Module, host string) bool {
	return e != nil && slices.ContainsFunc(e.Observed, func(o lock.Observation) bool { return o.Host == host })
}

// missingFix says why a missing target fails the gate, and what to do.
func missingFix(m *catalogue.Module, hostName, target string, ms *Missing) string {
	runsOn := fmt.Sprintf("runs_on %q of module %q (%s)", hostName, m.Name, ms.Where)
	var why, fix string
	switch {
	case len(ms.Strays) == 1:
		why = fmt.Sprintf("; %s runs %s in a container no module takes over, %s: %s recreated under another name, or one started beside it", hostName, m.Image, ms.Strays[0], target)
	case len(ms.Strays) > 1:
		why = fmt.Sprintf("; %s runs %s in containers no module takes over, %s: %s recreated under another name, or others started beside it", hostName, m.Image, strings.Join(ms.Strays, ", "), target)
	default:
		why = fmt.Sprintf("; the lock recorded the module running on %s: it ran there, and is gone", hostName)
	}
	isName := !strings.Contains(target, " ") && !strings.Contains(target, "/")
	switch {
	case len(ms.Strays) > 0 && isName:
		s := ms.Strays[0]
		fix = fmt.Sprintf("rename %s back (docker rename %s %s), or write container = %q in %s", s, s, target, s, runsOn)
	case len(ms.Strays) > 0:
		fix = fmt.Sprintf("start it as %s names it, or change %s to name what runs", target, runsOn)
	case isName:
		fix = fmt.Sprintf("start it as %s (docker run --name %s …), or change %s to the name it runs under; if the module no longer runs on %s, remove that runs_on", target, target, runsOn, hostName)
	default:
		fix = fmt.Sprintf("start it as %s names it, or change %s to name what runs; if the module no longer runs on %s, remove that runs_on", target, runsOn, hostName)
	}
	return why + ". The gate cannot see what it guards, and does not pass: " + fix
}

// runsOnWhere is the place of m's runs_on block for hostName that names
// target: "catalogue.hcl:23:11".
func runsOnWhere(m *catalogue.Module, hostName, target string) string {
	var found *catalogue.RunsOn
	for i := range m.RunsOn {
		ro := &m.RunsOn[i]
		if ro.Host != hostName {
			continue
		}
		if found == nil || (ro.Container != "" && ro.Container == target) || (ro.Compose != "" && strings.HasSuffix(target, ro.Compose)) ||
			(ro.Workload != "" && strings.HasPrefix(target, ro.Workload)) {
			found = ro
		}
	}
	if found == nil {
		return place(m.DeclRange)
	}
	return place(found.DeclRange)
}

// place renders a catalogue range as file:line:column.
func place(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// strays lists the containers of s that run m's repository (by the
// reference they were started from, or a registry digest of their image)
// and that no module takes over, by name.
func strays(s *host.Snapshot, m *catalogue.Module, taken map[string]bool) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, c := range s.Containers {
		if taken[c.Name] || c.Workload != "" || c.State == "created" {
			continue
		}
		if runsRepository(s, c, m.Image) {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// runsRepository reports whether container c runs an image of repo.
func runsRepository(s *host.Snapshot, c host.Container, repo string) bool {
	if ref, err := name.ParseReference(c.Image); err == nil && ref.Context().Name() == repo {
		return true
	}
	for _, img := range s.Images {
		if img.ID != c.ImageID {
			continue
		}
		for _, rd := range img.RepoDigests {
			if r, err := name.NewDigest(rd); err == nil && r.Context().Name() == repo {
				return true
			}
		}
	}
	return false
}
