// Package kubernetes reads what the pods of one namespace of a Kubernetes
// cluster run, through client-go, and returns it as a host.Snapshot.
//
// A Host names a cluster as kubectl does: a kubeconfig file (the one given,
// else KUBECONFIG, else ~/.kube/config), a context in it (else its current
// context) and a namespace (else the context's, else "default"). When no
// kubeconfig names a cluster and pin runs in a pod, the pod's service
// account is used (in-cluster config), as client-go's deferred loading
// does.
//
// The kubelet reports what each container runs in the pod's status:
// status.containerStatuses[].imageID is a repository digest
// ("registry.example.org/forge/forgejo@sha256:…"; older runtimes prefix it
// with docker-pullable:// or docker://, which is stripped), and .image the
// reference it was started from. Every container status that names an
// image (init containers, native sidecars and ephemeral containers too)
// becomes a host.Container whose ID is "<pod>/<container>", whose Labels
// are the pod's labels, and whose Workload says what owns the pod:
// "deployment/<name>" through its ReplicaSet, "cronjob/<name>" through its
// Job, "statefulset/<name>", "daemonset/<name>", "job/<name>", another
// owner as "<kind>/<name>", or "pod/<name>" for a pod nothing owns. A
// container is "running" when the kubelet says so and the pod is in phase
// Running; otherwise its state is the kubelet's reason ("waiting:
// CrashLoopBackOff", "terminated: Completed"). An ephemeral (debug)
// container's state is prefixed with host.EphemeralPrefix ("ephemeral:
// running"). Containers whose image is not known yet (not pulled) are left
// out. Each distinct digest becomes a host.Image with the repository
// digests it was seen as; the kubelet reports no build date, labels or
// platform, so those are left for package resolve to fetch from the
// registry by digest where ordering needs them.
//
// A Deployment or StatefulSet scaled to zero (spec.replicas = 0) that no
// pod of the namespace belongs to any more is read from its pod template:
// each container (init containers too) is a host.Container with no Pod,
// ID "<kind>/<name>/<container>", state host.StateScaledToZero, and the
// template's image reference as both Image and ImageID (nothing was pulled,
// so no ID is known; package observe keeps only the reference). The host's
// selector is matched against the template's labels.
//
// Observe costs a bounded number of requests whatever the namespace holds:
// pods are listed in pages of PageSize (limit/continue), scoped to the
// namespace and the host's label selector; ReplicaSets (only when some pod
// is owned by one) and Jobs (only when some pod is owned by one) the same
// way; and Deployments and StatefulSets, for those scaled to zero. It never
// gets objects one by one, and asks nothing outside the namespace (no
// nodes, no discovery). The RBAC Role it needs is verb list on pods,
// replicasets, deployments, statefulsets and jobs (batch) in the namespace
// (examples/kubernetes/rbac.yaml); a 403 is returned naming what to grant.
//
// The requests go through client-go's REST client (kubeconfig, exec and
// auth-provider plugins, TLS, protobuf as the generated clients), with a
// scheme of only the three API groups read (client.go), not through the
// clientset: linking the clientset registers every API group Kubernetes
// has whenever any pin command starts.
//
// The package only reads: it never creates, patches or deletes anything,
// and it contacts no registry.
package kubernetes
