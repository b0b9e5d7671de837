// Package version reads versions out of image tags and labels under a
// module's versioning scheme, and compares them.
//
// A tag is split into a variant and a version. The variant is what must match
// for two tags to be ordered by version alone: the prefix ("v"), the
// precision (the number of numeric parts, Precision: "1.27" and "1.27.3"
// differ) and the suffix ("-alpine", "-rootless"). A suffix made of a known
// pre-release marker (alpha, beta, rc, pre, preview, dev, nightly, snapshot,
// canary, with optional numbers, and the short a1/b1/rc1 forms) is a
// pre-release of the version, not a variant. This follows Renovate and
// Dependabot rather than Flux: a takeover must not move a service from its
// -rootless build to another.
//
// Numeric parts are digit strings of any length, compared as numbers
// (leading zeros stripped, then by length, then digit by digit): a Unix
// timestamp or a 14-digit date never overflows. SemVerOK says when a
// version does not fit Masterminds semver (a part beyond uint64).
//
// Schemes: "semver" (default; tolerant: optional v prefix, 2 to 4 numeric
// parts, or one part of at most four digits, "16" or "20-alpine": longer
// bare numbers are dates and build stamps, not versions under it), "calver" (2026.08.20, 2026.8, and compact dates 202608, 20260820,
// 202608200915, 20260820091500 with a real month, day and clock), "numeric"
// (one integer of any length, with an optional non-numeric prefix) and
// "regex:<expr>" where <expr> has a named group "version".
//
// Compare orders two versions of one variant. Agree says whether two
// claims about one image (its tag and its label) name the same version.
// Relate says what two versions of different variants tell of an order,
// reading each as the interval its precision names ("1.27" is every
// 1.27.x): below, at most, above, at least, or nothing.
//
// The package does not decide which image is newer; package order combines
// versions with content and build dates.
package version
