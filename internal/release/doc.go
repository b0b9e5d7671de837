// Package release builds pin's container image without Docker: a static
// pin binary (CGO_ENABLED=0, linux) in one layer appended to an empty base
// with go-containerregistry, run as a non-root user and labelled with the
// org.opencontainers.image.* annotations. Its command, cmd/pinimage,
// writes the image to a registry or a tarball:
//
//	go run ./internal/release/cmd/pinimage --push REGISTRY/pin:TAG
//
// It does not sign, scan or publish releases, and it pulls no base image:
// the binary needs nothing but itself (the registry client carries its own
// roots: see Options.CACerts). The same inputs give the same image digest.
package release
