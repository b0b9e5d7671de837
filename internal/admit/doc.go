// Package admit is pin's Kubernetes validating admission webhook ("pin
// admit"): an HTTPS handler of admission.k8s.io/v1 AdmissionReviews that,
// for the CREATE and UPDATE of Pods (with their ephemeralcontainers
// subresource), Deployments, StatefulSets, DaemonSets, Jobs and CronJobs
// in the namespaces it guards, holds each container's new image against
// what the module that takes it over runs now and what the lock names
// (package enforce, resolve.Judge), and denies a downgrade or an unknown
// order with resolve's refusal, unless the object, or the workload it
// belongs to, carries pin.dev/allow-downgrade (and, for a one_way module,
// pin.dev/restore). Every decision is logged, one JSON line each.
//
// Coverage is decided by what is replaced, not only by what is asked for:
// on UPDATE the old object's labels count as much as the new one's; a
// Pod's or a Job's workload is its owner chain (Pod → ReplicaSet →
// Deployment, Pod → Job → CronJob), read from the API server through
// Owners; an ephemeral container in a Pod a module covers is judged for
// that module, with its own override (pin.dev/allow-ephemeral).
//
// On UPDATE only containers whose image changes are judged: scaling or
// relabelling a workload is never refused. What it cannot decide within its
// budget (the request's timeout, less a margin) it answers as the
// configured failurePolicy says, and the answer says so: Fail denies,
// Ignore allows with a warning. What happens when it does not answer at
// all is the API server's failurePolicy.
//
// It does not mutate objects, does not register itself (the
// ValidatingWebhookConfiguration is in examples/kubernetes/admission), and
// does not make certificates: it reads them, again when the files change.
package admit
