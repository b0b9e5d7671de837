// Package lock is the lockfile model, pin.lock.hcl: for every module the one
// image to run, which version that is, why it was chosen and what the hosts
// ran when it was.
//
// Entries of modules that left the catalogue stay as retired entries
// (Lock.Retired, "retired" blocks after the modules): what they locked
// stays a floor (see package resolve). A lock without any is written as it
// was before they existed.
//
// Parse and Format are the core, bytes in and bytes out; Load and Save wrap
// them for files. Format is deterministic: modules sorted by name,
// observations by host and container (then by digest, image ID and tag),
// attributes in a fixed order, no timestamps of the run, so the same lock
// gives the same bytes; it never changes the lock it is given. Equal tells
// whether two locks would format alike without formatting them. Parse
// enforces the canonical forms Format writes (full repository names,
// "sha256:" digests, RFC 3339 dates, tags as written) and reports a mangled
// file as HCL diagnostics, never a panic. Save writes atomically (a temporary
// file in the same folder, fsync, rename) and only when the bytes change.
//
// The package knows nothing of policies, registries or hosts: it does not
// decide what goes into a lock, it only keeps it.
package lock
