package resolve

import (
	"slices"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// Status is one finding "pin outdated" reports for a module.
type Status string

const (
	// StatusBehindRunning: a host runs (or ran, in a stopped container) an
	// image newer than the lock's; a cutover to the lock would be a
	// downgrade.
	StatusBehindRunning Status = "behind-running"
	// StatusRegression: "pin resolve" would refuse the module: the
	// catalogue would take the lock back to an older image than a floor
	// (a pin edited down, an upstream tag moved back).
	StatusRegression Status = "regression"
	// StatusDigestGone: the registry no longer serves the locked digest
	// (a HEAD by digest finds nothing): the next pull of the lock fails.
	StatusDigestGone Status = "digest-gone"
	// StatusTagMoved: a locked tag that reads as a full semver version (the
	// entry's tag, or one of its recorded tags) names another digest now
	// (a HEAD by tag): upstream re-published it. The lock still pulls its
	// digest.
	StatusTagMoved Status = "tag-moved"
	// StatusUnknownOrder: what a host runs, or the upstream candidate,
	// cannot be ordered against the lock.
	StatusUnknownOrder Status = "unknown-order"
	// StatusSkew: the module's running containers run different images.
	StatusSkew Status = "skew"
	// StatusError: a host or registry failed for the module, or "pin
	// resolve" would fail on it (no tag passes the filters, a pin that does
	// not exist, a lock entry or pin that disagrees with its content).
	StatusError Status = "error"
	// StatusUnlocked: the lock has no entry for the module yet.
	StatusUnlocked Status = "unlocked"
	// StatusBehindUpstream: upstream offers a newer image within the
	// module's policy.
	StatusBehindUpstream Status = "behind-upstream"
	// StatusCurrent: none of the others.
	StatusCurrent Status = "current"
)

// Statuses lists every status in the order reports give them: the
// dangerous first.
var Statuses = []Status{StatusBehindRunning, StatusRegression, StatusDigestGone, StatusTagMoved, StatusUnknownOrder, StatusSkew, StatusUnverified, StatusError, StatusUnlocked, StatusBehindUpstream, StatusCurrent}

func statusRank(s Status) int { return slices.Index(Statuses, s) }

// ModuleStatus is how one module's current lock entry stands against what
// its hosts run and what upstream offers.
type ModuleStatus struct {
	Module *catalogue.Module
	// Locked is the module's entry in the lock; nil when it has none.
	Locked *lock.Module
	// Running are the containers the module takes over that are floors
	// (whatever their state but "created"), by host and container.
	Running []RunningStatus
	// Missing lists runs_on containers not found on their host.
	Missing []string
	// Upstream is the newest upstream candidate within the module's policy;
	// nil when there is none or no registry may be asked.
	Upstream *Candidate
	// Hint is the newest tag outside the module's constraint, when it is
	// newer than every tag within; only tags are read for it.
	Hint string
	// Statuses are the distinct statuses of Findings in the order of
	// Statuses; [current] when there are no findings.
	Statuses []Status
	// Findings say, one sentence each, what makes each status.
	Findings []Finding
	// Failures are the hosts and registries that failed for the module, and
	// what "pin resolve" would fail on.
	Failures []error
}

// RunningStatus is one container and its image against the lock.
type RunningStatus struct {
	observe.Observation
	// Version and Created are what ordering knew of the image: the version
	// under the module's versioning, and a plausible build date.
	Version string
	Created time.Time
	// Order is the running image against the locked one; Cmp is Unknown
	// with an empty Rule when nothing is locked.
	Order order.Result
}

// Candidate is the upstream image outdated weighs against the lock.
type Candidate struct {
	Image   image.Image
	Version string
	Created time.Time
	// Order is the candidate against the locked image (empty Rule when
	// nothing is locked).
	Order order.Result
}

// Finding is one reason for a status, in words.
type Finding struct {
	Status  Status
	Message string
}

// Has reports whether the module carries status st.
func (s *ModuleStatus) Has(st Status) bool { return slices.Contains(s.Statuses, st) }

func (s *ModuleStatus) hasAny(st ...Status) bool {
	return slices.ContainsFunc(s.Findings, func(f Finding) bool { return slices.Contains(st, f.Status) })
}

// finish sorts the findings by status and derives the statuses.
func (c *checker) finish() {
	s := c.s
	slices.SortStableFunc(s.Findings, func(a, b Finding) int { return statusRank(a.Status) - statusRank(b.Status) })
	for _, f := range s.Findings {
		if !slices.Contains(s.Statuses, f.Status) {
			s.Statuses = append(s.Statuses, f.Status)
		}
	}
	if len(s.Statuses) == 0 {
		s.Statuses = []Status{StatusCurrent}
	}
}
