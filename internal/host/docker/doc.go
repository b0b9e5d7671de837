// Package docker reads a live Docker Engine (or Podman's Docker-compatible
// socket) through the Moby client, and returns what it runs as a
// host.Snapshot.
//
// A Host names an endpoint as the Docker CLI does: unix://, tcp:// (with TLS
// from a folder holding ca.pem, cert.pem and key.pem), or ssh://user@host
// through the Docker CLI's connection helper; an empty address means the
// DOCKER_HOST, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY and DOCKER_API_VERSION
// environment, else the default socket. The API version is negotiated, so
// old engines (API 1.41, dockerd 20.10) answer too.
//
// Observe costs one version ping, one Info (to learn the image store:
// "containerd" when the containerd snapshotter is on, else "classic"), one
// container list with every container whatever its state, one image inspect
// per distinct image ID, and one container inspect per container that the
// list names by image ID instead of the reference it was created from (its
// tag has moved to another image, or its image was removed): that inspect
// recovers the reference. Inspects run a few at a time. Host.Calls counts
// the calls by kind.
//
// The package only reads: it never starts, stops, pulls, tags or removes
// anything, and it contacts no registry. Deciding which container a module
// takes over, and whether an image is older than another, is package
// resolve's work; snapshot files are read by package host.
package docker
