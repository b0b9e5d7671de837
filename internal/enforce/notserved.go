package enforce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/resolve"
)

// Judgement is resolve's judgement of a new image, with what enforce
// found of the reference as deployed.
type Judgement struct {
	*resolve.Judgement
	// NotServed is set when the image was refused and its registry has no
	// image by the reference as deployed (a tag it does not have, a
	// digest it does not serve): nothing then orders it, and the refusal
	// says so rather than ordering an image of no name.
	NotServed *NotServedError
}

// RefusalText is the refusal people read; "" when the image is allowed.
func (j *Judgement) RefusalText() string {
	switch {
	case j.Refusal == nil:
		return ""
	case j.NotServed != nil:
		return j.NotServed.refusal(j.Refusal)
	}
	return j.Refusal.Error()
}

// NotServedError is a reference its registry has no image by.
type NotServedError struct {
	// Module is the module the image was judged for.
	Module string
	// Image is the reference as deployed: repository, tag and digest.
	Image image.Image
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("%s has no image %s (%s)", registryOf(e.Image.Repository), e.Image.Ref(), e.what())
}

func (e *NotServedError) Unwrap() error { return image.ErrNotFound }

// what says what the registry lacks: "no tag 9.9.9 in forge/forgejo",
// "no manifest sha256:… in forge/forgejo".
func (e *NotServedError) what() string {
	repo := e.Image.Repository
	if r, err := name.NewRepository(repo); err == nil {
		repo = r.RepositoryStr()
	}
	if e.Image.Digest != "" {
		return fmt.Sprintf("no manifest %s in %s", e.Image.Digest, repo)
	}
	return fmt.Sprintf("no tag %s in %s", e.Image.Tag, repo)
}

// refusal is r's refusal in the words of a reference nothing serves: the
// module, what the registry lacks, the floor, and what to deploy.
func (e *NotServedError) refusal(r *resolve.Refusal) string {
	var b strings.Builder
	runs := floorRuns(r.Floor)
	fmt.Fprintf(&b, "module %q: refusing: %s: it cannot be ordered against what %s", r.Module, e.Error(), runs)
	fmt.Fprintf(&b, "\n  %s: %s", runs, r.Floor.Image.Ref())
	fix := []string{fmt.Sprintf("push %s first, or deploy a tag the registry has", e.Image.Ref())}
	if e.Image.Digest != "" {
		fix = []string{"deploy a digest the registry serves (this one was never pushed there, or was deleted)"}
	}
	if f := r.Floor.Image; f.Digest != "" {
		fix = append(fix, fmt.Sprintf("to run what %s, deploy %s", runs, f.Ref()))
	}
	fmt.Fprintf(&b, "\n  to decide, %s", strings.Join(fix, "; "))
	return b.String()
}

// floorRuns says what a floor runs, as resolve's refusals do.
func floorRuns(f resolve.Floor) string {
	switch f.Kind {
	case resolve.FloorLocked:
		return "the previous lock names"
	case resolve.FloorRecorded:
		return f.Observation.Where() + " ran (recorded in the lock)"
	}
	return f.Observation.Where() + " runs"
}

// registryOf is a repository's registry host, as in image names.
func registryOf(repo string) string {
	if r, err := name.NewRepository(repo); err == nil {
		return r.RegistryStr()
	}
	host, _, _ := strings.Cut(repo, "/")
	return host
}

// watched is the registries resolve.Judge asks, noting whether the
// registry of img answered that it has no image by img's reference (the
// digest when it names one, else the tag): the one request Judge makes
// to describe it.
type watched struct {
	img     image.Image
	ref     string
	missing atomic.Bool
}

func watch(img image.Image) *watched {
	ref := img.Digest
	if ref == "" {
		ref = img.Tag
	}
	return &watched{img: img, ref: ref}
}

func (w *watched) registries(next func(string) resolve.Registry) func(string) resolve.Registry {
	if next == nil || w.ref == "" {
		return next
	}
	return func(repo string) resolve.Registry {
		r := next(repo)
		if r == nil || repo != w.img.Repository {
			return r
		}
		return watchedRegistry{w: w, next: r}
	}
}

type watchedRegistry struct {
	w    *watched
	next resolve.Registry
}

func (r watchedRegistry) Tags(ctx context.Context, repo string) ([]string, error) {
	return r.next.Tags(ctx, repo)
}

func (r watchedRegistry) Image(ctx context.Context, repo, ref, platform string) (image.Image, error) {
	img, err := r.next.Image(ctx, repo, ref, platform)
	if ref == r.w.ref && errors.Is(err, image.ErrNotFound) {
		r.w.missing.Store(true)
	}
	return img, err
}
