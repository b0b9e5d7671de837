package image

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrMalformed marks content a registry serves that breaks the rules a
// pull relies on (an index that lists one platform twice): pin refuses it
// rather than guess which entry a pull gets.
var ErrMalformed = errors.New("malformed")

// PlatformManifest is one image entry of an index, as the index lists it.
type PlatformManifest struct {
	// Platform is the platform the entry says it is for, "os/arch" or
	// "os/arch/variant" as written there.
	Platform string
	// OSVersion is the entry's os.version (Windows images list one
	// platform once per OS build); "" for none.
	OSVersion string
	// Digest is the entry's manifest digest.
	Digest string
}

// platformParts is a platform string read the way engines match them:
// os and architecture lowercase, architecture aliases folded (x86_64 is
// amd64, aarch64 is arm64) and the variants a pull treats as the default
// dropped (amd64 v1, arm64 v8).
type platformParts struct{ os, arch, variant string }

func parsePlatform(s string) platformParts {
	parts := strings.Split(strings.ToLower(s), "/")
	var p platformParts
	p.os = parts[0]
	if len(parts) > 1 {
		p.arch = parts[1]
	}
	if len(parts) > 2 {
		p.variant = parts[2]
	}
	switch p.arch {
	case "x86_64", "x86-64":
		p.arch = "amd64"
	case "aarch64":
		p.arch = "arm64"
	}
	switch {
	case p.arch == "amd64" && p.variant == "v1":
		p.variant = ""
	case p.arch == "arm64" && (p.variant == "v8" || p.variant == "8"):
		p.variant = ""
	}
	return p
}

// MatchesPlatform reports whether an index entry for platform have is one
// a pull for platform want may take: the same OS and architecture, and
// the same variant when want names one ("linux/arm64" takes
// "linux/arm64/v8"; "linux/arm/v7" does not take "linux/arm/v6").
func MatchesPlatform(have, want string) bool {
	h, w := parsePlatform(have), parsePlatform(want)
	return h.os == w.os && h.arch == w.arch && (w.variant == "" || h.variant == w.variant)
}

// samePlatform reports whether two index entries are for one platform:
// what a pull could not tell apart.
func samePlatform(a, b PlatformManifest) bool {
	return parsePlatform(a.Platform) == parsePlatform(b.Platform) && a.OSVersion == b.OSVersion
}

// FirstFor returns, of entries in the order an index lists them, the
// first whose platform a pull for want takes: what Docker, containerd and
// go-containerregistry pull. ok is false when none is.
func FirstFor(entries []PlatformManifest, want string) (PlatformManifest, bool) {
	for _, e := range entries {
		if MatchesPlatform(e.Platform, want) {
			return e, true
		}
	}
	return PlatformManifest{}, false
}

// CheckIndex refuses an index that lists one platform twice (the same OS,
// architecture, variant and os.version): which entry a pull gets then
// depends on the puller, and what pin judges might not be what runs. The
// error, wrapping ErrMalformed, names both entries.
func CheckIndex(entries []PlatformManifest) error {
	for i, a := range entries {
		for j := i + 1; j < len(entries); j++ {
			if b := entries[j]; samePlatform(a, b) {
				what := a.Platform
				if a.OSVersion != "" {
					what += " (os.version " + a.OSVersion + ")"
				}
				return fmt.Errorf("it lists %s twice, as entry %d (%s) and entry %d (%s): a pull takes the first, and which of them pin judges must be what runs, so pin refuses the index; push an index that lists each platform once: %w",
					what, i+1, Short(a.Digest), j+1, Short(b.Digest), ErrMalformed)
			}
		}
	}
	return nil
}

// ManifestFor returns the manifest digest a pull of this index for
// platform gets: the first matching entry of Manifests, in the index's
// order. An image that knows only its Platforms map (a lock entry's
// lines) takes the entry named exactly platform, else the first matching
// one by name. ok is false for an image that is not an index, or an
// index without the platform.
func (i Image) ManifestFor(platform string) (string, bool) {
	if len(i.Manifests) > 0 {
		e, ok := FirstFor(i.Manifests, platform)
		return e.Digest, ok
	}
	if d, ok := i.Platforms[platform]; ok && d != "" {
		return d, true
	}
	keys := make([]string, 0, len(i.Platforms))
	for k := range i.Platforms {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if MatchesPlatform(k, platform) {
			return i.Platforms[k], true
		}
	}
	return "", false
}
