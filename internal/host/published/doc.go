// Package published is a host whose observations are published rather
// than read live: what "pin observe HOST" read of a host (its snapshot,
// the host's platform and when it was read), signed with a cosign key and
// written to a file, a folder, or an OCI registry, where pin reads it back
// and verifies it before any of it counts.
//
// An observation is pin's snapshot (package host: every container
// whatever its state, and the images) wrapped with the host's name, its
// platform and the time it was read; host.ParseSnapshot reads the snapshot
// inside it, so a snapshot and an observation are one format read by one
// reader. It is JSON, deterministic (the same host state and time give the
// same bytes).
//
// Where it is published:
//
//   - a file: the observation, and beside it FILE.sig, the base64
//     signature "cosign sign-blob --key cosign.key FILE" prints;
//   - a folder: DIR/HOST.json and DIR/HOST.json.sig;
//   - an OCI repository (oci://registry/repository): an artifact tagged
//     with the host's name (one tag per host), whose one layer is the
//     observation (media type MediaType), signed as "cosign sign --key"
//     signs an image: the simple-signing payload under the tag
//     "sha256-<hex>.sig". "cosign verify --key cosign.pub REF:HOST"
//     accepts it, and an observation signed by cosign itself (a key, or
//     keyless) is read as well.
//
// Reading refuses, each with its reason (a *Refusal): nothing published,
// an unsigned observation, one signed by another key (or altered since it
// was signed: a bare signature cannot tell the two apart), one whose
// signature names other content (tampered), one of another host, one
// read in the future beyond ClockSkew, and one older than its maximum
// age. A refusal is never "the host runs nothing": that would drop the
// floors of every module on it.
//
// Warm, an OCI observation costs one HEAD per host: the observation's
// manifest and content are read by digest through the registry client's
// disk cache, and a signature verified once for a digest under one trust
// policy is remembered there (Cache), so an unchanged observation is
// checked for freshness and host name only. A signature deleted after it
// was verified does not unverify content it already verified.
//
// The package reads and writes observations; reading the host live is
// the host adapters' work, and deciding what the snapshot means for the
// lock is package resolve's.
package published
