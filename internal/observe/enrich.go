package observe

import (
	"context"
	"errors"
	"fmt"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
)

// Describer describes an image of a repository by tag or digest, an index
// resolved to platform: what Enrich needs of a registry.
type Describer interface {
	Image(ctx context.Context, repo, ref, platform string) (image.Image, error)
}

// needsDescription reports whether a host said of an image only where it
// comes from: a registry digest, but no build date, no labels and no
// platform. A Kubernetes host says no more (the kubelet reports the
// repository digest a container runs, not its config); a Docker Engine
// always reports the platform, and a date or labels with it.
func needsDescription(img image.Image) bool {
	return img.Digest != "" && img.Created.IsZero() && len(img.Labels) == 0 && img.Platform == "" && img.ConfigDigest == ""
}

// mayBeIndex reports whether a host named an image by a digest that may be
// an index without saying its platforms: Docker's containerd image store
// reports the index (or manifest) digest as the image ID, with the
// platform's date and labels. Without the index's platforms, the same
// build run by its platform manifest's digest on another host would not be
// recognised as the same content.
func mayBeIndex(img image.Image) bool {
	return img.Digest != "" && img.ImageID == img.Digest && img.Platforms == nil
}

// Enrich describes, through reg, the observations of module m whose host
// said only which registry digest they run (see needsDescription), so that
// they can be ordered by version label and build date like those of a
// Docker host. It fills Created, Labels, ConfigDigest and Platforms, and
// the Platform of a single-platform image; an index is resolved to the
// module's platform. Of an image a host named by a digest that may be an
// index (see mayBeIndex) it fills only Platforms. Each digest is asked
// once, however many replicas run it.
//
// A digest the registry does not hold (image.ErrNotFound), or cannot give
// offline (image.ErrUnavailable), leaves its observations as they were:
// ordering then rests on their tags, or is unknown. Any other error is
// returned, naming the observation. With reg nil nothing is asked.
func Enrich(ctx context.Context, reg Describer, m *catalogue.Module, obs []Observation) error {
	if reg == nil {
		return nil
	}
	type answer struct {
		img image.Image
		ok  bool
	}
	described := map[string]answer{}
	for i := range obs {
		o := &obs[i]
		full := needsDescription(o.Image)
		if !full && !mayBeIndex(o.Image) {
			continue
		}
		a, asked := described[o.Image.Digest]
		if !asked {
			img, err := reg.Image(ctx, m.Image, o.Image.Digest, m.Platform())
			switch {
			case err == nil:
				a = answer{img: img, ok: true}
			case errors.Is(err, image.ErrNotFound) || errors.Is(err, image.ErrUnavailable):
			default:
				return fmt.Errorf("describing what %s runs (%s): %w", o.Where(), image.Short(o.Image.Digest), &SourceError{Source: "registry of " + m.Image, Err: err})
			}
			described[o.Image.Digest] = a
		}
		if !a.ok {
			continue
		}
		if !full {
			// The host said what its platform's build is; the index's
			// platforms are all it did not say.
			o.Image.Platforms = a.img.Platforms
			continue
		}
		o.Image.Created = a.img.Created
		o.Image.Labels = a.img.Labels
		o.Image.ConfigDigest = a.img.ConfigDigest
		o.Image.Platforms = a.img.Platforms
		if a.img.Platforms == nil {
			o.Image.Platform = a.img.Platform
		}
	}
	return nil
}
