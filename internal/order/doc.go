// Package order answers one question: is image A older than image B?
//
// It applies docs/design.md's four rules in order and records which one decided:
//
//  1. content: equal manifest digest, equal config digest, a host image ID
//     that is the other's config or manifest digest, or A's digest is a
//     platform entry of B's index → equal;
//  2. version: both have a version under the module's scheme (from the tag,
//     else from the org.opencontainers.image.version label); tags compare
//     only within one variant (prefix, precision, suffix) unless the module
//     allows any variant;
//  3. created: both have a plausible build date (config created, else the
//     org.opencontainers.image.created label); epoch dates, year-one dates
//     and dates in the future are unknown, not old;
//  4. otherwise the order is unknown.
//
// Unknown is a result of its own, never "newer". The package is pure: it
// fetches nothing, and the current time is passed in.
package order
