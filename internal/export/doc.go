// Package export writes the lock where a deploy reads it: a Compose
// override file (compose.pin.yaml), the image references of Compose files
// and Kubernetes manifests rewritten in place, the images: entries of a
// kustomization.yaml, NAME_IMAGE= lines of an env file, and the tags and
// digests of a Helm chart's values files.
//
// The writers (Override, InPlace, Manifests, Kustomize, Env, Helm) are pure:
// they take the files' bytes, the catalogue and the lock, and return the
// bytes each file should hold, with what it changed, skipped and found.
// The bytes are deterministic, and a second run over its own output
// changes nothing. No write makes a file name an older or unorderable
// image than it names (Downgrades asks resolve.JudgeWritten of each
// reference a write would change). Read reads the files an export names
// and merges what the writers return; Gate is the floor guarantee (the cutover of the
// lock, previewed by resolve.PlanCutover on each host, as pin plan
// does); Run is pin export whole: Read, Gate, every write checked before
// any is made, then the writes. pin propose reads and gates with the same
// Read and Gate. Package export orders nothing itself: resolve does.
package export
