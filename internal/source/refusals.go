package source

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
)

// The environment refusals of a run that writes a lock: what the record
// of other locks says a write would lose. They are values, returned here
// for every command, enforcement point and the truth kit alike.

// MovedError is a run that would rewrite an environment's lock whose
// entries recorded a host that is another environment's now, without
// deciding that environment in the same run: its lock takes the floor
// over (what ran on the host, from the other lock), and the rewrite then
// drops nothing; alone, the rewrite would drop that floor.
type MovedError struct {
	// Lines say, per host, which lock recorded it and whose it is now.
	Lines []string
	// With are the --environment flags that decide both at once.
	With []string
}

func (e *MovedError) Error() string {
	return fmt.Sprintf("%s: rewriting the first without deciding the second would drop that floor. Decide both in one run first: pin resolve (every environment, or %s); nothing written", strings.Join(e.Lines, "; "), strings.Join(e.With, " "))
}

// Moved is the refusal of a run that decides envs, nil when none of their
// locks recorded a host of an environment the run does not decide.
func Moved(envs []*Env) *MovedError {
	deciding := map[string]bool{}
	for _, e := range envs {
		deciding[e.Name] = true
	}
	var out MovedError
	for _, e := range envs {
		for _, m := range e.Moved {
			if deciding[m.Environment] {
				continue
			}
			out.Lines = append(out.Lines, fmt.Sprintf("%s recorded what ran on %s, which is environment %s's host now", e.Path, m.Host, m.Environment))
			out.With = append(out.With, "--environment "+e.Name, "--environment "+m.Environment)
		}
	}
	if len(out.Lines) == 0 {
		return nil
	}
	slices.Sort(out.With)
	out.With = slices.Compact(out.With)
	return &out
}

// OrphanError is a run that writes a lock while the lock of an
// environment the catalogue no longer declares is beside it: what it
// recorded on a host still bounds that host (Inputs.Elsewhere), but what
// it recorded on no host counts in no lock.
type OrphanError struct {
	// Locks are the orphan lock files, sorted.
	Locks []string
}

func (e *OrphanError) Error() string {
	return fmt.Sprintf("%s: the lock of an environment the catalogue no longer declares; its floors would count in no lock. Declare the environment again, or, to forget its floors on purpose, move the file away; nothing written", joinAnd(e.Locks))
}

// Orphans is the refusal of a run that writes beside lockPath, nil when
// no orphan lock is there (OrphanLocks).
func Orphans(lockPath string, cat *catalogue.Catalogue) *OrphanError {
	if l := OrphanLocks(lockPath, cat); len(l) > 0 {
		return &OrphanError{Locks: l}
	}
	return nil
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(n []string) string {
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " and " + n[len(n)-1]
}
