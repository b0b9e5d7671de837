// Package testimage builds tiny, real, reproducible container images for
// tests with go-containerregistry, and pushes them to a test registry.
//
// Sleeper gives a layer holding a static Go program that sleeps until SIGTERM
// or SIGINT, so that a real Docker Engine can run the image as a container;
// Build wraps a layer into an image, Index groups images into a multi-arch
// index, and Push writes either to a registry over plain http (PushTLS
// over TLS; PushRelease builds and pushes a version-labelled, dated image).
//
// The same inputs always give the same digests: tar entries have fixed times
// and owners, and image configs hold only what Options says.
package testimage
