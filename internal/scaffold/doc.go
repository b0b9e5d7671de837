// Package scaffold turns what people already have (Compose projects,
// Kubernetes manifests, Helm charts' values, what a host runs) into
// catalogue modules, and adds
// to a catalogue only the modules it lacks.
//
// A candidate is skipped, with the reason, when the catalogue already has
// it: a module takes over the same target (runs_on the same host and
// container, Compose service or workload), or, for a candidate that runs
// nowhere, a module already names its repository. Existing modules are
// never rewritten: new blocks are appended to the catalogue file's bytes,
// formatted with hclwrite and indented as the file is. Open reads the
// catalogue and Run is pin init whole, once the command has read what to
// add from (a host's snapshot, a Compose project, manifests): candidates,
// digests, the plan, the rendered file checked to load, and the write,
// made only while the file holds what was read. scaffold reads no host or
// registry itself; the command hands it what was read, and a Resolver.
package scaffold
