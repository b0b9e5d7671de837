// Package observe reads what hosts run and finds, for each module, the
// containers it takes over.
//
// Hosts answers every host of a run concurrently (a host that fails does
// not stop the others: its error is kept by name); Observations matches a
// module's runs_on and pin.module labels against what the hosts answered;
// Enrich describes, through a registry, the images a host names only by
// digest (Kubernetes). Every container is observed whatever its state:
// which of them bound the lock from below is the resolver's rule
// (docs/design.md, "Floors"), not this package's.
//
// It reads hosts only through the Host interface and registries only
// through Describer; it does not decide, render or write anything.
package observe
