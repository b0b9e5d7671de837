// Package resolve decides, for every module of a catalogue, which image the
// lock names: old lock, catalogue, host observations and registry candidates
// in; a Plan (and from it the new lock) out.
//
// Its one promise is the invariant of docs/design.md: for every running
// container a module takes over, the locked image is equal to or newer than
// what runs, or the catalogue states the downgrade (allow_downgrade, and for
// a one_way module a restore). An order that cannot be decided never passes
// as newer: it is a Refusal naming both images and what to write to decide.
//
// The package holds the policies and nothing of the network: hosts are read
// through the Host interface before resolving (observe.Hosts), registries are
// asked through the Registry interface, both passed in. Output order is
// deterministic (modules by name, observations by host and container)
// whatever order concurrent answers arrive in. It does not render, and it
// does not write files.
package resolve
