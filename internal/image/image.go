package image

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotFound marks a source's answer that a tag, digest or platform does
// not exist, so that callers can tell "absent" from "broken".
var ErrNotFound = errors.New("not found")

// ErrUnavailable marks content a source cannot give without the network:
// an offline run asked for something its cache does not hold.
var ErrUnavailable = errors.New("not available offline")

// Label keys from the OCI image spec annotations that pin reads.
const (
	LabelVersion = "org.opencontainers.image.version"
	LabelCreated = "org.opencontainers.image.created"
)

// ReadLabels returns the labels of all that pin reads (LabelVersion and
// LabelCreated), nil when it has neither. Real images carry tens of
// labels (maintainers, sources, licences, build arguments), and a run
// keeps the images it weighs until its plan is written: keeping only what
// ordering reads bounds that memory.
func ReadLabels(all map[string]string) map[string]string {
	var kept map[string]string
	for _, k := range [...]string{LabelVersion, LabelCreated} {
		if v, ok := all[k]; ok {
			if kept == nil {
				kept = make(map[string]string, 2)
			}
			kept[k] = v
		}
	}
	return kept
}

// Image is what is known of one image. Digests are canonical "sha256:<hex>".
type Image struct {
	// Repository is the full repository name, e.g.
	// "registry.example.org/forge/forgejo" or "index.docker.io/library/alpine".
	Repository string
	// Tag is the tag the image was found by or started from ("" if none).
	Tag string
	// Digest is the registry digest: the index digest for a multi-platform
	// image, else the manifest digest. Empty when no registry digest is known
	// (a loaded or locally built image on a host).
	Digest string
	// ConfigDigest is the digest of the config blob (of the chosen platform
	// for an index).
	ConfigDigest string
	// Platform is the platform of the chosen manifest, "os/arch[/variant]".
	Platform string
	// Platforms maps each platform of an index to its manifest digest; nil
	// for a single-platform manifest. Of entries that name one platform
	// alike (Windows builds of several os.versions), the first.
	Platforms map[string]string
	// Manifests are the index's image entries in the order it lists them,
	// when its content was read (a lock entry's lines keep only
	// Platforms): a pull takes the first that matches its platform (see
	// ManifestFor).
	Manifests []PlatformManifest
	// ImageID is a host's image ID: the config digest with Docker's classic
	// image store, the manifest or index digest with the containerd image
	// store. It is never used as a registry digest.
	ImageID string
	// Created is the config's build date; zero when unknown.
	Created time.Time
	// Labels are the config's labels that pin reads (ReadLabels): a
	// registry's description keeps no others.
	Labels map[string]string
}

// PlatformDigest is the manifest digest of the chosen platform: the entry of
// the index for Platform, else Digest.
func (i Image) PlatformDigest() string {
	if d, ok := i.Platforms[i.Platform]; ok {
		return d
	}
	return i.Digest
}

// VersionLabel returns the org.opencontainers.image.version label, or "".
func (i Image) VersionLabel() string { return i.Labels[LabelVersion] }

// CreatedLabel parses the org.opencontainers.image.created label; zero when
// it is absent or not RFC 3339.
func (i Image) CreatedLabel() time.Time {
	s := i.Labels[LabelCreated]
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Ref renders the image as "repository:tag@digest", leaving out what is
// unknown. An image known only by its host image ID renders as
// "repository (image ID sha256:…)".
func (i Image) Ref() string {
	var b strings.Builder
	b.WriteString(i.Repository)
	if i.Tag != "" {
		b.WriteString(":" + i.Tag)
	}
	if i.Digest != "" {
		b.WriteString("@" + i.Digest)
	} else if i.ImageID != "" {
		fmt.Fprintf(&b, " (image ID %s)", i.ImageID)
	}
	return b.String()
}

// Short abbreviates a digest to its algorithm and the first 12 hex digits.
func Short(digest string) string {
	alg, hex, ok := strings.Cut(digest, ":")
	if !ok || len(hex) <= 12 {
		return digest
	}
	return alg + ":" + hex[:12]
}

// Identities lists every digest that names some of this image's content:
// the registry digest, the config digest, the host image ID and, for an
// index, the manifest digest of each platform. Empty strings are left out.
// Which of an index's entries a pull gets depends on its platform (see
// ManifestFor): "the same content" is never "any entry".
func (i Image) Identities() []string {
	ids := make([]string, 0, 3+len(i.Platforms))
	for _, d := range []string{i.Digest, i.ConfigDigest, i.ImageID} {
		if d != "" {
			ids = append(ids, d)
		}
	}
	for _, d := range i.Platforms {
		ids = append(ids, d)
	}
	return ids
}
