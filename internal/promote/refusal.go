package promote

import "fmt"

// Kind says why a module is refused.
type Kind string

const (
	// KindSkew: FROM's hosts run different builds of the module.
	KindSkew Kind = "skew"
	// KindSoak: the build has run in FROM for less than TO's soak, or a
	// container's start time is not known.
	KindSoak Kind = "soak"
	// KindUnverified: the build fails the module's signature policy.
	KindUnverified Kind = "unverified"
	// KindFloor: TO runs or locks something newer, or something that
	// cannot be ordered against the build (the floor rule).
	KindFloor Kind = "floor"
	// KindNothing: FROM runs nothing of a module named.
	KindNothing Kind = "nothing-in-from"
	// KindNoDigest: FROM runs the module from an image without a
	// registry digest (loaded or built on the host): nothing to lock.
	KindNoDigest Kind = "no-registry-digest"
	// KindHeld: a module named is held in TO by a manual pick.
	KindHeld Kind = "held"
	// KindHostUnread: a host of FROM that runs the module was not read
	// (unreachable, or skipped under skip_unreachable): what it runs is
	// not known.
	KindHostUnread Kind = "host-not-read"
)

// Refusal says why a module is not promoted, and what to do.
type Refusal struct {
	Module string
	Kind   Kind
	// Why says what was found; Fix what to do about it.
	Why, Fix string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("module %q: refusing to promote (%s): %s; %s", r.Module, r.Kind, r.Why, r.Fix)
}
