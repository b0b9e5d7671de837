// Package export writes the lock where a deploy reads it: a Compose
// override file (compose.pin.yaml), the image references of Compose files
// and Kubernetes manifests rewritten in place, the images: entries of a
// kustomization.yaml, and NAME_IMAGE= lines of an env file.
//
// Every function here is pure: it takes the files' bytes, the catalogue
// and the lock, and returns the bytes each file should hold, with what it
// changed, skipped and found. The bytes are deterministic, and a second
// run over its own output changes nothing. Writing, --check and the floor
// guarantee (refusing a lock that would downgrade what a host runs, by
// resolve.PlanCutover) are the command's: package export decides nothing
// about order.
package export
