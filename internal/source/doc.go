// Package source is pin's composition root: it turns a catalogue and a
// command's options into the adapters that read the world (Docker Engines,
// Kubernetes clusters, snapshot files, registries, layout mirrors, the
// cache), and Load runs the first half of every command's pipeline: load the
// catalogue and the previous lock, build the sources, observe the hosts, and
// hand back the inputs.
//
// Every command of cmd/pin and the profiler under internal/devtools/bench go through
// Load, so the pipeline is written once; commands differ only in what they
// do with the Inputs (resolve, outdated, plan a cutover) and how they render
// it. The package decides nothing and prints nothing: catalogue and lock
// diagnostics come back in a *DiagnosticsError for the caller to render.
package source
