package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/enforce"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
)

// Engine is what the plugin reads of the Engine beyond what its
// containers run (the catalogue's host adapter, Observe): the image a
// reference names in its store, and a swarm service's specs. The Docker
// host adapter (internal/host/docker.Host) is one.
type Engine interface {
	// InspectImage reads the image ref names in the Engine's store (a
	// reference, an image ID, or a prefix of one), resolved as the Engine
	// resolves the image of a container it creates; an image it does not
	// hold is an error wrapping image.ErrNotFound.
	InspectImage(ctx context.Context, ref string) (host.Image, error)
	// InspectService reads a swarm service's container spec now and
	// before its last update (Name: the service's; Image, Labels: the
	// spec's); previous is zero when there is none.
	InspectService(ctx context.Context, id string) (current, previous host.Container, err error)
}

// newImage is the image a request puts under a name: the reference as the
// request gives it, and what the Engine holds under it when pin read it.
type newImage struct {
	ref string
	// local is the Engine's image ref names; nil when the Engine was not
	// read (a swarm service's tasks pull on their own nodes) or does not
	// hold it (the create then fails there).
	local *host.Image
}

// ErrImageID is a request that names its image by an image ID (or a prefix
// of one) that the Engine does not hold, or that pin cannot read from the
// Engine: there is nothing to judge.
var ErrImageID = errors.New("an image ID pin cannot read from the Engine")

// isImageID reports whether ref is written as an image ID: "sha256:" and
// hex digits, as `docker run sha256:3f2a…` sends it. (A bare prefix,
// "3f2a", is a repository name first; the Engine tries it as an ID only
// when no such repository is held, and so does InspectImage.)
func isImageID(ref string) bool {
	hex, ok := strings.CutPrefix(ref, "sha256:")
	return ok && hex != "" && strings.Trim(hex, "0123456789abcdef") == ""
}

// read reads ref from the Engine's store: the image a create will run.
// Without an Engine, or for an image the Engine does not hold, the
// reference is judged as its registry serves it; an image ID is then
// ErrImageID.
func (s *Server) read(ctx context.Context, ref string) (newImage, error) {
	if s.Engine == nil {
		if isImageID(ref) {
			return newImage{}, fmt.Errorf("%w: %s (this plugin reads no Engine)", ErrImageID, ref)
		}
		return newImage{ref: ref}, nil
	}
	hi, err := s.Engine.InspectImage(ctx, ref)
	switch {
	case errors.Is(err, image.ErrNotFound) && isImageID(ref):
		return newImage{}, fmt.Errorf("%w: the Engine holds no image %s", ErrImageID, ref)
	case errors.Is(err, image.ErrNotFound):
		return newImage{ref: ref}, nil
	case err != nil:
		return newImage{}, err
	}
	return newImage{ref: ref, local: &hi}, nil
}

// byID reports whether the request named the image by an image ID, or a
// prefix of one, that the Engine resolved.
func (n newImage) byID() bool {
	return n.local != nil && (isImageID(n.ref) || strings.HasPrefix(strings.TrimPrefix(n.local.ID, "sha256:"), n.ref))
}

// forModule is the image to judge for module m. Read from the Engine, it
// is the registry digest the Engine holds the image by: of m's
// repository, else of the reference's, else the first it holds; with the
// reference's tag when that digest is of the reference's repository (a
// claim resolve checks, so a tag moved or retagged locally is not
// believed). An image the Engine holds by no registry digest (built,
// loaded or committed on it) is its image ID alone: only the same content
// as a floor orders it. Not read, it is the reference as its registry
// serves it.
func (n newImage) forModule(m *catalogue.Module) (image.Image, error) {
	if n.local == nil {
		return enforce.ParseRef(n.ref)
	}
	var askedRepo, askedTag string
	if !n.byID() {
		if img, err := enforce.ParseRef(n.ref); err == nil {
			askedRepo, askedTag = img.Repository, img.Tag
		}
	}
	var chosen *name.Digest
	for _, rd := range n.local.RepoDigests {
		d, err := name.NewDigest(rd)
		if err != nil {
			continue
		}
		repo := d.Context().Name()
		switch {
		case repo == m.Image:
			chosen = &d
		case chosen == nil, repo == askedRepo && chosen.Context().Name() != askedRepo:
			chosen = &d
		}
		if repo == m.Image {
			break
		}
	}
	if chosen == nil {
		return image.Image{Repository: m.Image, ImageID: n.local.ID}, nil
	}
	img := image.Image{Repository: chosen.Context().Name(), Digest: chosen.DigestStr()}
	if img.Repository == askedRepo {
		img.Tag = askedTag
	}
	return img, nil
}
