package resolve

import (
	"context"
	"errors"
	"fmt"
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
	// checked: "tag@digest" asked of the registry, and what it said.
	checked map[string]verdict
	// offered: "tag@digest" of images offered to be chosen, whose claims
	// are checked only where they win; hosted: those of containers a host
	// started from a tag, checked only where they win too (a host tag may
	// be a "docker tag" on the host: a person's word); floors: those of
	// floors (a lock entry, a recorded container), checked both ways even
	// when the same claim is also offered (a pin equal to the lock entry).
	offered, hosted, floors map[string]bool
	// heads: what the registry answered for a tag, by HEAD, this run.
	heads map[string]headAnswer
}

type headAnswer struct {
	digest string
	err    error
}

// head asks which digest tag names now, by one HEAD per tag however often
// it is asked (outdated's liveness check asks it too); ok is false when
// the registry is not a Header.
func (c *claims) head(ctx context.Context, tag string) (digest string, ok bool, err error) {
	h, isHeader := c.reg.(Header)
	if !isHeader {
		return "", false, nil
	}
	if a, done := c.heads[tag]; done {
		return a.digest, true, a.err
	}
	d, err := h.Head(ctx, c.m.Image, tag)
	c.heads[tag] = headAnswer{d, err}
	return d, true, err
}

func newClaims(reg Registry, m *catalogue.Module) *claims {
	return &claims{reg: reg, m: m, vouched: map[string]bool{}, checked: map[string]verdict{}, offered: map[string]bool{}, hosted: map[string]bool{}, floors: map[string]bool{}, heads: map[string]headAnswer{}}
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

// vouchHosts records the tags of the containers hosts report. None is
// vouched for: a tag the host holds may have been pulled from the
// registry, or given on the host ("docker tag"), and the engine does not
// say which. The tag of a container started from a tag is checked where
// it would decide in the image's favour (the container newer than what
// it is ordered against); that of a container started from
// "repo:tag@digest" (pulled by digest, the tag the deployer's word) both
// ways, as a floor's claim is.
func (c *claims) vouchHosts(obs []observe.Observation) {
	for _, o := range obs {
		if !o.TagClaimed {
			c.hosted[o.Image.Tag+"@"+o.Image.Digest] = true
		}
	}
}

// holdUp records the claims of floors: they are checked both ways.
func (c *claims) holdUp(fs []Floor) {
	for _, f := range fs {
		if f.Kind != FloorContainer {
			c.floors[f.Image.Tag+"@"+f.Image.Digest] = true
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
		if key := named.Tag + "@" + named.Digest; !wins && (c.offered[key] || c.hosted[key]) && !c.floors[key] {
			continue
		}
		v := c.confirm(ctx, named, opts)
		if v.why == "" {
			continue
		}
		if !wins && v.later {
			// The tag was re-published since this build (official
			// images are, with every base image update): an earlier
			// build under a tag is at most that tag's version, and it
			// loses here to something newer than that.
			continue
		}
		return order.Result{Cmp: order.Unknown, Rule: order.RuleNone, Detail: v.why}
	}
	return res
}

// tagDecides reports whether the version a claim orders by is the tag's
// word: the image has no version label, or its label is less precise than
// the tag ("1.27" against "1.27.9": the patch level is the tag's alone).
func tagDecides(c order.Claim) bool {
	return c.Kind == order.FromTag || (c.Kind == order.FromBoth && c.Tag.Precision() > c.Label.Precision())
}

// verdict is what the registry says of a tag claim: why it is not
// believed ("" when it is), and whether the tag has moved on to a later
// build (by plausible build dates) than the one claimed.
type verdict struct {
	why   string
	later bool
	// now is the digest the tag names now, when the registry named
	// another than the claim's.
	now string
}

// disbelieved is the verdict on img's tag claim when it was checked this
// run and not believed.
func (c *claims) disbelieved(img image.Image) (verdict, bool) {
	if img.Tag == "" {
		return verdict{}, false
	}
	v, ok := c.checked[img.Tag+"@"+img.Digest]
	return v, ok && v.why != ""
}

// confirm checks img's tag claim: believed when a source vouches for it or
// the registry confirms it.
func (c *claims) confirm(ctx context.Context, img image.Image, opts order.Options) verdict {
	for _, id := range []string{img.Digest, img.ImageID} {
		if id != "" && c.vouched[img.Tag+"@"+id] {
			return verdict{}
		}
	}
	key := img.Tag + "@" + img.Digest
	if v, ok := c.checked[key]; ok {
		return v
	}
	v := c.ask(ctx, img, opts)
	c.checked[key] = v
	return v
}

// ask checks with the registry that img's tag names img's digest.
func (c *claims) ask(ctx context.Context, img image.Image, opts order.Options) verdict {
	only := fmt.Sprintf("only the tag %s says the version of %s (the image has no version label, or a less precise one)", img.Tag, image.Short(img.Digest))
	no := func(format string, args ...any) verdict {
		return verdict{why: only + fmt.Sprintf(format, args...) + ": pin does not believe it"}
	}
	if img.Digest == "" {
		return no(", and without a registry digest the tag cannot be checked")
	}
	if c.reg == nil {
		return no(", and no registry may be asked whether the tag names it")
	}
	if d, ok, err := c.head(ctx, img.Tag); ok {
		switch {
		case err == nil && d == img.Digest:
			return verdict{}
		case errors.Is(err, image.ErrNotFound):
			return no(", and the registry has no such tag")
		case err != nil && !errors.Is(err, image.ErrUnavailable):
			return no(", and asking the registry whether the tag names it failed (%v)", err)
		}
	}
	// What the tag names now, as the registry (or offline, the cache's
	// record of the tag) describes it: an index may name img as the entry
	// a pull on img's platform gets (the first that matches, never "any
	// entry").
	platform := img.Platform
	if platform == "" {
		platform = c.m.Platform()
	}
	got, err := c.reg.Image(ctx, c.m.Image, img.Tag, platform)
	entry, isEntry := got.ManifestFor(platform)
	switch {
	case err == nil && (got.Digest == img.Digest || (isEntry && entry == img.Digest)):
		return verdict{}
	case errors.Is(err, image.ErrUnavailable):
		return no(", and offline nothing records what the tag names")
	case errors.Is(err, image.ErrNotFound):
		return no(", and the registry has no such tag")
	case err != nil:
		return no(", and asking the registry whether the tag names it failed (%v)", err)
	}
	then, now := opts.Created(img), opts.Created(got)
	return verdict{why: only + fmt.Sprintf(", and the registry says the tag names %s now: pin does not believe it", image.Short(got.Digest)),
		later: !then.IsZero() && !now.IsZero() && now.After(then), now: got.Digest}
}
