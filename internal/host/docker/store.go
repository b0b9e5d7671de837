package docker

import (
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/api/types/versions"
)

// How Observe learns the engine's image store ("classic": an image ID is
// its config's digest; "containerd": its manifest's or index's). /info
// says it (DriverStatus), but /info is the engine's slowest answer (it
// asks its runtimes for their versions): a whole round trip and more on
// every host's critical path, for one word that the ping's API version
// and the inspects can often say instead.
type storeSource int

const (
	// storeFromInfo: ask /info, at once with the container list.
	storeFromInfo storeSource = iota
	// storeClassic: the engine predates the containerd image store. An
	// engine whose newest API is 1.41 or older (Docker Engine 20.10 and
	// before; Podman's Docker-compatible API, whose image IDs are config
	// digests) has only the classic one.
	storeClassic
	// storeFromImages: at API 1.48 and later, an image's inspect carries
	// its Descriptor, and a container's listing its
	// ImageManifestDescriptor, only when the engine runs the containerd
	// image store (the Engine API's version history, v1.48).
	storeFromImages
)

// storeSourceOf says how to learn the store of an engine whose ping
// answered (pinged) with its newest API version (engineAPI), spoken at
// the version the client negotiated or was given (clientAPI, as
// DOCKER_API_VERSION may fix it lower). Where either is unknown, /info
// says it.
func storeSourceOf(pinged bool, engineAPI, clientAPI string) storeSource {
	switch {
	case !pinged || engineAPI == "":
		return storeFromInfo
	case !versions.GreaterThan(engineAPI, "1.41"):
		return storeClassic
	case clientAPI != "" && !versions.LessThan(clientAPI, "1.48"):
		return storeFromImages
	}
	return storeFromInfo
}

// storeOfInfo is the store /info names.
func storeOfInfo(info system.Info) string {
	for _, kv := range info.DriverStatus {
		if kv[0] == "driver-type" && kv[1] == "io.containerd.snapshotter.v1" {
			return "containerd"
		}
	}
	return "classic"
}

// storeOfImages is the store that the list and the inspects (API 1.48 and
// later) show: containerd when any of them carries a descriptor. An
// engine holding no image says nothing either way, and then nothing of
// the snapshot depends on it: the store only says what an inspected
// image's ID is.
func storeOfImages(list []container.Summary, inspects []image.InspectResponse) string {
	for _, c := range list {
		if c.ImageManifestDescriptor != nil {
			return "containerd"
		}
	}
	for _, i := range inspects {
		if i.Descriptor != nil {
			return "containerd"
		}
	}
	return "classic"
}
