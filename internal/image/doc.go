// Package image describes what pin knows of one container image: where it
// lives (repository, tag, digest), what it is (config digest, platform,
// per-platform digests of an index) and what it says of itself (build date and
// labels).
//
// The same type describes an image a registry offers, an image a host runs and
// an image a lockfile names; fields that a source does not know stay empty.
// The package only holds data and derived facts. It never fetches anything and
// it does not order images (see package order).
package image
