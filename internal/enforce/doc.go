// Package enforce is what pin's two enforcement points share: the
// Kubernetes admission webhook (package admit) and the Docker Engine
// authorization plugin (package authz). Given the catalogue and the lock,
// loaded once, it finds the modules that take over a container about to be
// created (with observe's own matching, on a one-container snapshot), reads
// the host it replaces containers on (the catalogue's host adapter, as
// every command does), and asks resolve.Judge whether the new image may
// replace what runs, within a time budget.
//
// Registry content is asked through internal/source's registries (bounded
// concurrency per registry, the on-disk cache of immutable content) behind
// an in-memory cache of answers by digest: an image named by digest is
// described once per process, whatever asks. Tags are asked each time: a
// tag moves.
//
// It does not speak HTTP, decode admission reviews or Engine requests, nor
// decide what to do when it cannot decide: the servers do.
package enforce
