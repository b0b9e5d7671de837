package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/pin-tool/pin/internal/image"
)

// Annotations that name a layout entry's image.
const (
	annotationImageName = "io.containerd.image.name"          // full reference
	annotationRefName   = "org.opencontainers.image.ref.name" // a tag, or a full reference
)

// Layout is an OCI image layout folder used as a registry mirror.
//
// An entry of the layout's index.json belongs to a repository when its
// io.containerd.image.name annotation, or an org.opencontainers.image.ref.name
// holding a full reference, names that repository; a ref.name that is a bare
// tag (as "crane pull --format=oci" or skopeo write for a single image)
// belongs to every repository the layout is asked about. Images and blobs
// are found by digest whatever repository asks.
type Layout struct {
	path    layout.Path
	entries []layoutEntry
	// Sightings keeps when pin first saw each digest under a tag of the
	// mirror (FirstSeen); nil keeps nothing.
	Sightings *Cache
}

type layoutEntry struct {
	repo   string // "" for a bare tag
	tag    string
	digest string
}

// OpenLayout reads the layout's index. It fails when dir is not a layout.
func OpenLayout(dir string) (*Layout, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("opening OCI layout %s: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("reading OCI layout %s: %w", dir, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading OCI layout %s: %w", dir, err)
	}
	l := &Layout{path: p}
	for _, d := range im.Manifests {
		e := layoutEntry{digest: d.Digest.String()}
		ref := d.Annotations[annotationImageName]
		if ref == "" {
			ref = d.Annotations[annotationRefName]
		}
		if ref == "" {
			continue // untagged: reachable by digest only
		}
		if t, err := name.NewTag(ref); err == nil && strings.ContainsAny(ref, "/:") {
			e.repo, e.tag = t.Context().Name(), t.TagStr()
		} else {
			e.tag = ref
		}
		l.entries = append(l.entries, e)
	}
	return l, nil
}

// Tags lists the tags the layout holds for repo, sorted.
func (l *Layout) Tags(_ context.Context, repo string) ([]string, error) {
	var tags []string
	for _, e := range l.entries {
		if e.repo == repo || e.repo == "" {
			tags = append(tags, e.tag)
		}
	}
	slices.Sort(tags)
	return slices.Compact(tags), nil
}

// Image describes repo:ref, ref being a tag or a digest.
func (l *Layout) Image(ctx context.Context, repo, ref, platform string) (image.Image, error) {
	return describe(ctx, l, repo, ref, platform)
}

func (l *Layout) manifest(_ context.Context, repo, ref string) ([]byte, string, error) {
	digest := ref
	if !strings.HasPrefix(ref, "sha256:") {
		digest = ""
		for _, e := range l.entries {
			if e.tag == ref && e.repo == repo {
				digest = e.digest
			}
		}
		for _, e := range l.entries {
			if digest == "" && e.tag == ref && e.repo == "" {
				digest = e.digest
			}
		}
		if digest == "" {
			return nil, "", fmt.Errorf("tag %s of %s in the layout mirror: %w", ref, repo, image.ErrNotFound)
		}
	}
	b, err := l.blob(context.Background(), repo, digest)
	if err != nil {
		return nil, "", fmt.Errorf("manifest %s of %s in the layout mirror: %w", digest, repo, err)
	}
	return b, digest, nil
}

func (l *Layout) blob(_ context.Context, _ string, digest string) ([]byte, error) {
	h, err := v1.NewHash(digest)
	if err != nil {
		return nil, err
	}
	b, err := l.path.Bytes(h)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("blob %s: %w", digest, image.ErrNotFound)
	case err != nil:
		// Not "not found": a blob the mirror has and cannot give is the
		// mirror's failure, named as such, not content out of reach.
		return nil, fmt.Errorf("reading blob %s from the OCI layout %s: %w", digest, string(l.path), err)
	}
	if err := verify(b, digest); err != nil {
		return nil, err
	}
	return b, nil
}
