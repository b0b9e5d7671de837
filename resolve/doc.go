// Package resolve decides, for every module of a catalogue, which image the
// lock names: catalogue, previous lock, what the hosts run (package
// observe) and what registries offer in; a Plan (and from it the new lock),
// a report against the lock (Outdated) or a cutover preview (PlanCutover)
// out. All three ask the same policy code, so they agree.
//
// Its one promise is the invariant of docs/design.md: the locked image is
// equal to or newer than every floor of the module (every container its
// hosts report for it, whatever its state, the previous lock entry, and
// the previous entries of other or removed modules whose containers or
// repository it takes over: see takeover.go), or the catalogue states the
// downgrade (allow_downgrade, and for a one_way module a restore). The
// entry of a module that leaves the catalogue stays in the lock, retired,
// until a module takes it over. An order that cannot be decided never passes as
// newer: it is a Refusal naming both images and what to write to decide.
// What pin orders by is read from content fetched by digest; a lock entry
// whose lines disagree with its digest is a *LockMismatchError, never
// believed.
//
// The package reaches no network itself: registries are asked through the
// Registry interface, passed in, and hosts were read before (observe).
// Output order is deterministic (modules in catalogue order, observations by
// host and container) whatever order concurrent answers arrive in. It does
// not render, and it does not write files.
//
// The package is public because it is pin's decision procedure; its inputs
// name types of pin's internal packages (catalogue, observe, image), so
// only pin itself can call it today.
package resolve
