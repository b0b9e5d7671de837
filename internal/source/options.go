package source

import "time"

// Options are what a run may ask, and how.
type Options struct {
	// Offline asks no host or registry over the network: only the lock,
	// snapshot files, layout mirrors and the cache.
	Offline bool
	// CacheDir is the cache of immutable registry content; "" means the
	// user cache folder.
	CacheDir string
	// Concurrency bounds the requests in flight to each registry (pin's
	// --concurrency; default 8). It is the one bound a user sets: how many
	// modules are decided at once follows from it (package resolve).
	Concurrency int
	// Timeout bounds each request to a host or registry (default 30s).
	Timeout time.Duration
	// CertsDir is the root of the registries' certs.d folders, read as the
	// Docker Engine reads /etc/docker/certs.d/<host>/ (ca.crt,
	// client.cert, client.key); "" means /etc/docker/certs.d.
	CertsDir string
	// HostConcurrency bounds the hosts read at once (pin's
	// --host-concurrency; default 8), and HostTimeout the read of each
	// host, all its requests together (--host-timeout; default 2m).
	HostConcurrency int
	HostTimeout     time.Duration
	// StartTimes reads each live container's start and restart count
	// (an inspect per container on a Docker or Podman host): pin promote
	// and pin status ask; pin resolve does not.
	StartTimes bool
}
