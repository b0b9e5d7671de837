// Package depcheck holds one test: the import graph that pin's design
// relies on (the flow catalogue → observe → resolve → lock, and the network
// only in adapters), checked with "go list" so that a stray import fails
// the suite instead of waiting for a reviewer. After go-containerregistry's
// internal/depcheck.
package depcheck
