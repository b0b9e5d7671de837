package resolve

import (
	"slices"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// entry turns a choice into the module's new lock entry: the image and why,
// the downgrade the catalogue accepted, and the containers it was held
// against (with, in ModeFromHost, those the previous entry recorded on the
// hosts not read).
func (dc *settled) entry(c choice, dg *Refusal) *lock.Module {
	var e *lock.Module
	if c.keep {
		from := dc.old
		if c.from != nil {
			from = c.from
		}
		kept := *from
		e = &kept
		if c.from != nil {
			// Another module's entry, taken over: this module's from now
			// on, read from this module's registry.
			e.Name, e.DeclRange = dc.m.Name, lock.Module{}.DeclRange
			if e.Image != dc.m.Image {
				e.Image, e.Tags = dc.m.Image, nil
			}
		}
		e.Policy = lock.Policy(dc.m.Policy)
		e.Reason = c.reason
		e.Rule = lock.Rule(c.rule)
		e.AllowDowngrade, e.Restore = "", ""
		if dg != nil {
			e.AllowDowngrade, e.Restore = dc.m.AllowDowngrade, dc.m.Restore
		}
	} else {
		img := c.img
		e = &lock.Module{
			Name:      dc.m.Name,
			Policy:    lock.Policy(dc.m.Policy),
			Image:     dc.m.Image,
			Tag:       img.Tag,
			Tags:      dc.lockedTags(c),
			Digest:    img.Digest,
			Config:    img.ConfigDigest,
			Platforms: img.Platforms,
			Version:   versionOf(dc.opts, img),
			Created:   dc.opts.Created(img),
			Source:    c.source,
			Rule:      lock.Rule(c.rule),
			Reason:    c.reason,
		}
		if dg != nil {
			e.AllowDowngrade = dc.m.AllowDowngrade
			e.Restore = dc.m.Restore
		}
	}
	for _, p := range dc.previous() {
		if dg == nil && p.AllowDowngrade != "" && p.AllowDowngrade == dc.m.AllowDowngrade {
			// The words were spent on a downgrade (by this module, or by
			// one whose floor it takes over): the line stays while the
			// catalogue states them, so that they accept no other (a run
			// after the rollback is deployed needs none, and would
			// otherwise hand them back).
			e.AllowDowngrade, e.Restore = p.AllowDowngrade, p.Restore
			break
		}
	}
	e.Hosts = entryHosts(dc.m, dc.old, dc.in)
	e.Observed = nil
	for _, f := range dc.floors {
		if !f.container() {
			continue
		}
		o := f.Observation
		e.Observed = append(e.Observed, lock.Observation{Host: o.Host, Container: o.Container, Tag: o.Image.Tag, Digest: o.Image.Digest,
			ImageID: o.Image.ImageID, Created: dc.opts.Created(o.Image), Version: versionOf(dc.opts, o.Image)})
	}
	slices.SortStableFunc(e.Observed, func(a, b lock.Observation) int {
		if a.Host != b.Host {
			return cmpString(a.Host, b.Host)
		}
		return cmpString(a.Container, b.Container)
	})
	return e
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// versionOf renders an image's version as a lock entry records it: the
// version its tag and label agree on, "" when it has none or they conflict.
func versionOf(opts order.Options, img image.Image) string {
	c := opts.VersionOf(img)
	switch {
	case !c.Known():
		return ""
	case c.Kind == order.FromLabel:
		return c.Version.Original // the label as written
	}
	return c.Version.String()
}
