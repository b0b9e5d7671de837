package resolve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
)

// claims holds a module's tags to account where a tag is all that says an
// image's version. An image's version label is content (its digest names
// it); a tag written next to a digest is a claim: in a catalogue pin
// ("1.30.0@sha256:…"), a lock entry's lines, an admission request's
// reference. Where the label can contradict the tag, order.VersionOf does
// (the version is then unknown). Where the image has no label, nothing in
// the content can, so a claim that takes part in an order is believed
// only when a source vouches for it: the registry named this digest when
// asked for the tag (a candidate fetched by tag, or a check by HEAD here),
// or a host reported the container running it under that tag (started
// from the tag, not from "repo:tag@digest", which is pulled by digest).
//
// A claim made for an image pin is asked to choose (the catalogue's pin,
// an admission request's image) matters only where it wins: one that says
// less than the truth makes pin choose something else, never go below a
// floor. A claim on a floor (a lock entry, what the lock recorded of a
// host) matters both ways: one that says less lets an older image past it.
//
// The check costs one HEAD per claim that decides by version, and only for
// images without a version label (a manifest GET more where the tag names
// an index and the claim a platform's manifest); offline, the cache's
// record of the tag answers, and without one the claim is not believed.
type claims struct {
	reg Registry
	m   *catalogue.Module
	// vouched: "tag@id" (id a digest or an image ID) a source vouches for.
	vouched map[string]bool
	// checked: "tag@digest" asked of the registry, and why it is not
	// believed ("" when it is).
	checked map[string]string
	// offered: "tag@digest" of images offered to be chosen, whose claims
	// are checked only where they win.
	offered map[string]bool
}

func newClaims(reg Registry, m *catalogue.Module) *claims {
	return &claims{reg: reg, m: m, vouched: map[string]bool{}, checked: map[string]string{}, offered: map[string]bool{}}
}

// vouch records that a source says img's tag names img's content.
func (c *claims) vouch(img image.Image) {
	if img.Tag == "" {
		return
	}
	for _, id := range []string{img.Digest, img.ImageID} {
		if id != "" {
			c.vouched[img.Tag+"@"+id] = true
		}
	}
}

// vouchHosts vouches for the tags hosts resolved: those of containers
// started from a tag, not from "repo:tag@digest" (pulled by digest, whose
// tag is the deployer's word).
func (c *claims) vouchHosts(obs []observe.Observation) {
	for _, o := range obs {
		if !o.TagClaimed {
			c.vouch(o.Image)
		}
	}
}

// offer records img as offered to be chosen: its tag claim is checked only
// where it would win.
func (c *claims) offer(img image.Image) {
	c.offered[img.Tag+"@"+img.Digest] = true
}

// vouchRef vouches for img fetched by ref when ref is a tag: the registry
// resolved it.
func (c *claims) vouchRef(ref string, img image.Image) {
	if ref != "" && !strings.HasPrefix(ref, "sha256:") {
		img.Tag = ref
		c.vouch(img)
	}
}

// compare orders a against b (as read, ra and rb: an index's build for the
// other's platform) and returns the result unless a version that only an
// unvouched tag says took part in it (deciding, or making two images one
// version's builds that their dates then order); then the order is
// unknown, and the detail says why.
func (c *claims) compare(ctx context.Context, a, b, ra, rb image.Image, opts order.Options) order.Result {
	res := order.Compare(ra, rb, opts)
	if res.Cmp == order.Unknown || res.Rule == order.RuleContent {
		return res
	}
	for i, side := range [][2]image.Image{{a, ra}, {b, rb}} {
		named, read := side[0], side[1]
		if !tagDecides(opts.VersionOf(read)) {
			continue
		}
		wins := (i == 0) == (res.Cmp == order.Newer)
		if !wins && c.offered[named.Tag+"@"+named.Digest] {
			continue
		}
		if why := c.confirm(ctx, named); why != "" {
			return order.Result{Cmp: order.Unknown, Rule: order.RuleNone, Detail: why}
		}
	}
	return res
}

// tagDecides reports whether the version a claim orders by is the tag's
// word: the image has no version label, or its label is less precise than
// the tag ("1.27" against "1.27.9": the patch level is the tag's alone).
func tagDecides(c order.Claim) bool {
	return c.Kind == order.FromTag || (c.Kind == order.FromBoth && c.Tag.Precision() > c.Label.Precision())
}

// confirm reports why img's tag is not believed to name its content, or ""
// when a source vouches for it or the registry confirms it.
func (c *claims) confirm(ctx context.Context, img image.Image) string {
	for _, id := range []string{img.Digest, img.ImageID} {
		if id != "" && c.vouched[img.Tag+"@"+id] {
			return ""
		}
	}
	key := img.Tag + "@" + img.Digest
	if why, ok := c.checked[key]; ok {
		return why
	}
	why := c.ask(ctx, img)
	c.checked[key] = why
	return why
}

// ask checks with the registry that img's tag names img's digest.
func (c *claims) ask(ctx context.Context, img image.Image) string {
	only := fmt.Sprintf("only the tag %s says the version of %s (the image has no version label, or a less precise one)", img.Tag, image.Short(img.Digest))
	if img.Digest == "" {
		return only + ", and without a registry digest the tag cannot be checked: pin does not believe it"
	}
	if c.reg == nil {
		return only + ", and no registry may be asked whether the tag names it: pin does not believe it"
	}
	now := ""
	if h, ok := c.reg.(Header); ok {
		d, err := h.Head(ctx, c.m.Image, img.Tag)
		switch {
		case err == nil && d == img.Digest:
			return ""
		case err == nil:
			now = d
		case errors.Is(err, image.ErrNotFound):
			return only + ", and the registry has no such tag: pin does not believe it"
		case !errors.Is(err, image.ErrUnavailable):
			return fmt.Sprintf("%s, and asking the registry whether the tag names it failed (%v): pin does not believe it", only, err)
		}
	}
	if now == "" || len(img.Platforms) == 0 {
		// Offline the cache's record of the tag answers; online, a tag
		// that names an index may name img as one of its platforms.
		got, err := c.reg.Image(ctx, c.m.Image, img.Tag, img.Platform)
		switch {
		case err == nil && (got.Digest == img.Digest || slices.Contains(slices.Collect(maps.Values(got.Platforms)), img.Digest)):
			return ""
		case err == nil:
			now = got.Digest
		case errors.Is(err, image.ErrUnavailable) && now == "":
			return only + ", and offline nothing records what the tag names: pin does not believe it"
		case errors.Is(err, image.ErrNotFound) && now == "":
			return only + ", and the registry has no such tag: pin does not believe it"
		case now == "":
			return fmt.Sprintf("%s, and asking the registry whether the tag names it failed (%v): pin does not believe it", only, err)
		}
	}
	return fmt.Sprintf("%s, and the registry says the tag names %s: pin does not believe it", only, image.Short(now))
}
