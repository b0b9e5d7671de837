// Package docker reads a live Docker Engine (or Podman's Docker-compatible
// socket) through the Moby client, and returns what it runs as a
// host.Snapshot.
//
// A Host names an endpoint as the Docker CLI does: unix://, tcp:// (with TLS
// from a folder holding ca.pem, cert.pem and key.pem), ssh://user@host
// through the Docker CLI's connection helper (ssh from PATH, with
// BatchMode=yes and ConnectTimeout from the host's timeout), or a Docker
// CLI context read from the CLI's own context store with its TLS material.
// With neither address nor context it resolves as the Docker CLI does:
// DOCKER_HOST (with DOCKER_CERT_PATH and DOCKER_TLS_VERIFY), DOCKER_CONTEXT,
// the Docker config's current context, the default socket. The API version
// is negotiated, so old engines (API 1.41, dockerd 20.10) and Podman's
// Docker-compatible API (4.3, API 1.41) answer too. A TLS or ssh failure
// that pin recognises (a wrong CA, a missing or refused client certificate,
// an ssh host key that changed) is an *AccessError saying what to do. An
// ssh endpoint's error keeps, of ssh's stderr, only the lines saying what
// went wrong ("Permission denied (publickey)", "Could not resolve
// hostname …"), not its warnings or the host's login banner; errors.Unwrap
// still reaches the connection helper's error, stderr and all.
//
// Observe costs one version ping, one container list with every container
// whatever its state, one image inspect per distinct image ID, and one
// container inspect per container that the list names by image ID instead
// of the reference it was created from (its tag has moved to another
// image, or its image was removed). The image store ("containerd" when the
// containerd snapshotter is on, else "classic") is read from /info, at
// once with the list, only where the ping cannot say it: an engine whose
// newest API is 1.41 or older (Docker Engine 20.10, Podman) has only the
// classic store, and at API 1.48 and later the inspects' descriptors say
// it; /info is the engine's slowest answer. The container inspect
// recovers the reference. Inspects run a few at a time. Host.Calls counts
// the calls by kind.
//
// The package only reads: it never starts, stops, pulls, tags or removes
// anything, and it contacts no registry. Deciding which container a module
// takes over, and whether an image is older than another, is package
// resolve's work; snapshot files are read by package host.
package docker
