// Package version reads versions out of image tags and labels under a
// module's versioning scheme, and compares them.
//
// A tag is split into a variant and a version. The variant is what must match
// for two tags to be comparable at all: the prefix ("v"), the precision (the
// number of numeric parts: "1.27" and "1.27.3" differ) and the suffix
// ("-alpine", "-rootless"). A suffix made of a known pre-release marker
// (alpha, beta, rc, pre, preview, dev, nightly, snapshot, canary, with
// optional numbers, and the short a1/b1/rc1 forms) is a pre-release of the
// version, not a variant. This follows Renovate and Dependabot rather than
// Flux: a takeover must not move a service from its -rootless build to
// another.
//
// Schemes: "semver" (default; tolerant: optional v prefix, 2 to 4 numeric
// parts), "calver" (2026.08.20, 2026.8, 20260820), "numeric" (one integer,
// with an optional non-numeric prefix) and "regex:<expr>" where <expr> has a
// named group "version".
//
// The package does not decide which image is newer; package order combines
// versions with content and build dates.
package version
