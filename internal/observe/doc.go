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
// On a Kubernetes host an observation is a workload's container and one
// image, "<kind>/<name>/<container>": the replicas that run one image are
// one observation with their count and pods, so that the key, and the lock
// written from it, stays the same across restarts, reschedules and
// scaling. The states a Kubernetes host gives what does not run as the
// workload (StateScaledToZero, EphemeralPrefix) are package host's.
//
// It reads hosts only through the Host interface and registries only
// through Describer; it does not decide, render or write anything.
package observe
