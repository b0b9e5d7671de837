// Package catalogue loads the HCL files that declare hosts, registries and
// modules, the environments hosts are grouped in (each with a lock of its
// own), and where the lock is exported (the export block), and checks
// them.
//
// Load reads one file or every *.hcl file of a folder (in name order) and
// returns the catalogue together with hcl.Diagnostics: every mistake in every
// file, each with its source range, a terse summary and a detail that says
// what to write instead. A catalogue with errors is returned as far as it
// could be read, for tooling, but must not be resolved.
//
// Relative paths in a catalogue (a snapshot file, a layout mirror) are taken
// relative to the folder of the file that names them, and stored absolute
// or cleaned.
//
// Label selectors (a Kubernetes host's, a runs_on's) are parsed here into
// Selector, which matches label sets, so that what reads the model imports
// nothing of Kubernetes.
//
// The package reads and validates; it never contacts a host or a registry
// and never decides which image wins.
package catalogue
