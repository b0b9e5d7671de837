package resolve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// LockMismatchError is a lock entry whose lines disagree with what its
// digest names: a hand edit or a merge gone wrong. pin does not believe
// the lines; the user restores the entry.
type LockMismatchError struct {
	Module string
	// Field is the lock attribute that disagrees ("version", "config",
	// "created", "platforms"); Locked what the lock says, Content what the
	// digest's content says.
	Field, Locked, Content string
	Digest                 string
	// Where is "file:line" of the entry, when known.
	Where string
}

func (e *LockMismatchError) Error() string {
	where := ""
	if e.Where != "" {
		where = e.Where + ": "
	}
	content := e.Content
	if content == "" {
		content = "none"
	}
	return fmt.Sprintf("%sthe lock's entry for module %q says %s = %q, but %s names an image whose %s is %s: the entry was edited by hand or merged wrongly, and pin does not believe it; restore the lockfile from version control, or write the entry's digest back",
		where, e.Module, e.Field, e.Locked, image.Short(e.Digest), e.Field, content)
}

// PinMismatchError is a catalogue pin whose tag disagrees with what its
// digest names: pin = "1.30.0@sha256:…" where the image's own version label
// says 1.22.6.
type PinMismatchError struct {
	Module string
	Pin    string
	// Tag and Label are the two versions that disagree.
	Tag, Label string
	// Where is the pin's place in the catalogue.
	Where string
}

func (e *PinMismatchError) Error() string {
	return fmt.Sprintf("%s: module %q: the pin %q says version %s, but the image its digest names is labelled version %s: write the tag that names this digest, or the digest of %s",
		e.Where, e.Module, e.Pin, e.Tag, e.Label, e.Tag)
}

// describe asks reg for the content of digest, and says whether it could
// be had (see contentState); err is set where the registry failed.
func describe(ctx context.Context, reg Registry, m *catalogue.Module, digest, platform string) (image.Image, contentState, error) {
	if reg == nil || digest == "" {
		return image.Image{}, contentOffline, nil
	}
	img, err := reg.Image(ctx, m.Image, digest, platform)
	switch {
	case err == nil:
		return img, contentRead, nil
	case errors.Is(err, image.ErrUnavailable):
		return image.Image{}, contentOffline, nil
	case errors.Is(err, image.ErrNotFound):
		return image.Image{}, contentNotServed, nil
	}
	return image.Image{}, contentOffline, &observe.SourceError{Source: "registry of " + m.Image, Err: err}
}

// claimedImage is what a lock entry says of its image, for ordering where
// its content cannot be had.
func claimedImage(m *lock.Module) image.Image {
	img := image.Image{Repository: m.Image, Tag: m.Tag, Digest: m.Digest, ConfigDigest: m.Config, Platforms: m.Platforms, Created: m.Created}
	if m.Version != "" {
		img.Labels = map[string]string{image.LabelVersion: m.Version}
	}
	return img
}

// contentState says whether the content a digest names could be read.
type contentState int

const (
	// contentRead: read by digest (a lock entry's lines then checked
	// against it).
	contentRead contentState = iota
	// contentOffline: no registry may be asked (offline, no mirror), or
	// offline neither a mirror nor the cache holds the digest.
	contentOffline
	// contentNotServed: the registry answered that it does not serve the
	// digest (a running image it never held, locked as the host knew it;
	// a purged digest; a mirror that lags: "pin outdated" reports the
	// digest gone).
	contentNotServed
)

// lockedImage is the image a lock entry names, read from its content by
// digest, the entry's lines checked against it (a mismatch is a
// *LockMismatchError). Where the content cannot be had, the entry's lines
// are all there is, and state says why: they are claims, which may hold a
// floor up but never win (see unreadLock).
func lockedImage(ctx context.Context, reg Registry, m *catalogue.Module, e *lock.Module, opts order.Options, platform string) (img image.Image, state contentState, err error) {
	if platform == "" {
		platform = m.Platform()
	}
	img, state, err = describe(ctx, reg, m, e.Digest, platform)
	switch {
	case err != nil:
		return image.Image{}, state, fmt.Errorf("describing the locked image %s: %w", image.Short(e.Digest), err)
	case state != contentRead:
		return claimedImage(e), state, nil
	}
	img, err = checkEntry(img, e, opts)
	return img, contentRead, err
}

// checkEntry checks a lock entry's lines against img, the content its
// digest names.
func checkEntry(img image.Image, e *lock.Module, opts order.Options) (image.Image, error) {
	img.Tag = e.Tag
	mismatch := func(field, locked, content string) error {
		return &LockMismatchError{Module: e.Name, Field: field, Locked: locked, Content: content, Digest: e.Digest, Where: entryWhere(e)}
	}
	if e.Config != "" && img.Platforms == nil && img.ConfigDigest != "" && img.ConfigDigest != e.Config {
		return image.Image{}, mismatch("config", e.Config, img.ConfigDigest)
	}
	if len(img.Platforms) > 0 && len(e.Platforms) > 0 {
		// An index: its digest names its platforms, which must be the
		// entry's, and its version (the platforms' builds carry one
		// label); its build date is one platform's, and the entry may
		// have been written for another platform than the one read here.
		if !samePlatforms(e.Platforms, img) {
			return image.Image{}, mismatch("platforms", platformsText(e.Platforms), platformsText(img.Platforms))
		}
		if v := versionOf(opts, img); e.Version != "" && v != e.Version {
			return image.Image{}, mismatch("version", e.Version, v)
		}
		return img, nil
	}
	// An entry that records platforms names an index, and one that records
	// a config and no platforms a single manifest: the content must be
	// the same kind, with the same platforms.
	indexClaimed, indexNamed := len(e.Platforms) > 0, len(img.Platforms) > 0
	if (indexClaimed && !samePlatforms(e.Platforms, img)) || (!indexClaimed && indexNamed && e.Config != "" && e.Config != img.ConfigDigest) {
		return image.Image{}, mismatch("platforms", platformsText(e.Platforms), platformsText(img.Platforms))
	}
	if v := versionOf(opts, img); e.Version != "" && v != e.Version {
		return image.Image{}, mismatch("version", e.Version, v)
	}
	if !e.Created.IsZero() && !ownDate(img, e.Created) {
		return image.Image{}, mismatch("created", Created(e.Created), Created(img.Created))
	}
	return img, nil
}

// samePlatforms reports whether an entry's platforms are what img's index
// lists: the same platforms, each naming the digest img names for it (the
// first entry). Where the index lists a platform string more than once
// (Windows builds of several os.versions), an entry written when pin kept
// the last of them names one of its entries too.
func samePlatforms(locked map[string]string, img image.Image) bool {
	if maps.Equal(locked, img.Platforms) {
		return true
	}
	if len(locked) != len(img.Platforms) {
		return false
	}
	for p, d := range locked {
		if _, ok := img.Platforms[p]; !ok || !slices.ContainsFunc(img.Manifests, func(e image.PlatformManifest) bool { return e.Platform == p && e.Digest == d }) {
			return false
		}
	}
	return true
}

// ownDate reports whether t, as a lock line writes it (whole seconds, UTC),
// is one of img's own build dates (its config's, or its created label),
// whatever the reader's clock says of them: a lock written where a date was
// plausible reads back where the clock runs behind.
func ownDate(img image.Image, t time.Time) bool {
	for _, d := range []time.Time{img.Created, img.CreatedLabel()} {
		if !d.IsZero() && lock.SameSecond(d, t) {
			return true
		}
	}
	return false
}

// unreadDetail says why an order by a lock entry's lines alone is unknown.
func unreadDetail(e *lock.Module, by order.Result) string {
	return fmt.Sprintf("the registry does not serve the locked digest of %s (or, offline, nothing holds it), so what the deploy would pull cannot be read; by the lock's lines alone: %s", withDigest(e.Tag, claimedImage(e)), by.Detail)
}

func platformsText(p map[string]string) string {
	if p == nil {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, k+"="+image.Short(p[k]))
	}
	return strings.Join(parts, ", ")
}

// entryWhere is "file:line" of a lock entry, when the lock was read from a
// file.
func entryWhere(e *lock.Module) string {
	if e.DeclRange.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", e.DeclRange.Filename, e.DeclRange.Start.Line)
}

// firstPlatform is the platform of the first observation that says one,
// else the module's.
func firstPlatform(obs []observe.Observation, m *catalogue.Module) string {
	for _, o := range obs {
		if o.Image.Platform != "" {
			return o.Image.Platform
		}
	}
	return m.Platform()
}
