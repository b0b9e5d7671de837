package resolve

import (
	"context"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
)

// Advice is one thing a refusal says to write in the module to decide: a
// goal in words ("to run what mesh-1/forgejo runs"), and the attributes
// that reach it, in order. A value in angle brackets ("<why>") is the
// person's words. Each piece is written so that, written in, it decides:
// what it pins is at or above every floor, or it carries the
// allow_downgrade that accepts what is not; and it writes no tag next to
// a digest that pin does not believe names it (a claim pin has just
// disbelieved is never advised back).
type Advice struct {
	// Goal says what following it does; "" for an alternative to the
	// piece before ("or policy = …").
	Goal string
	Set  []Setting
}

// Setting is one attribute of a module and the value to write, unquoted.
type Setting struct{ Attr, Value string }

func (a Advice) String() string {
	set := make([]string, len(a.Set))
	for i, s := range a.Set {
		set[i] = fmt.Sprintf("%s = %q", s.Attr, s.Value)
	}
	if a.Goal == "" {
		return "or " + strings.Join(set, " and ")
	}
	return a.Goal + ", write " + strings.Join(set, " and ")
}

// advise says what the author can write to decide, where chosen (the
// pin or candidate the policy would lock when primary, else a floor that
// cannot be ordered against the others) fails against floor f, by res.
// text is the advice in words, "in module "forge" (catalogue.hcl:…): …".
func (dc *settled) advise(ctx context.Context, chosen image.Image, f Floor, res order.Result, primary bool) ([]Advice, string) {
	unknown := res.Cmp == order.Unknown
	var advice []Advice
	// The pin's tag, disbelieved, where the registry says which digest
	// it names now: the pin the author most likely meant.
	if v, ok := dc.claims.disbelieved(chosen); ok && primary && v.now != "" && dc.m.Pin.Text != "" && dc.m.Policy != catalogue.TrackUpstream {
		now := chosen
		now.Digest = v.now
		if dc.allAtLeast(ctx, now) {
			advice = append(advice, Advice{Goal: fmt.Sprintf("to pin what the tag %s names now", chosen.Tag), Set: []Setting{{"pin", chosen.Tag + "@" + v.now}}})
		}
	}
	if f.Image.Digest != "" {
		img, p := dc.asWritten(ctx, f.Image)
		names := "what the previous lock names"
		if f.Kind == FloorInherited {
			names = fmt.Sprintf("what the previous lock names for %s (its floor is this module's: a rename or removal frees no floor)", f.entryName())
		}
		a := Advice{Goal: fmt.Sprintf("to run what %s runs", f.Where())}
		if f.entry() {
			a.Goal = "to keep " + names
		}
		if dc.m.Policy == catalogue.TrackUpstream {
			// (track-upstream's pin chooses a variant, not an image.)
			a.Set = append(a.Set, Setting{"policy", string(catalogue.AtLeastRunning)})
		}
		a.Set = append(a.Set, Setting{"pin", p})
		top := dc.allAtLeast(ctx, img)
		if !top {
			a.Set = append(a.Set, dc.downgradeWords()...)
		}
		advice = append(advice, a)
		if dc.m.Policy == catalogue.Exact && !unknown && top {
			// at-least-running then locks the floor, the newest.
			advice = append(advice, Advice{Set: []Setting{{"policy", string(catalogue.AtLeastRunning)}}})
		}
	}
	// Locking chosen anyway: the words, and where chosen is not what the
	// catalogue names (a floor), or names it by a tag pin does not
	// believe, the pin that names it.
	img, p := dc.asWritten(ctx, chosen)
	anyway := Advice{Goal: fmt.Sprintf("to lock %s anyway", dc.label(img))}
	if !primary || (img.Tag != chosen.Tag && dc.m.Pin.Text != "" && dc.m.Policy != catalogue.TrackUpstream) {
		if dc.m.Policy == catalogue.TrackUpstream {
			anyway.Set = append(anyway.Set, Setting{"policy", string(catalogue.AtLeastRunning)})
		}
		anyway.Set = append(anyway.Set, Setting{"pin", p})
	}
	anyway.Set = append(anyway.Set, dc.downgradeWords()...)
	advice = append(advice, anyway)

	parts := make([]string, 0, len(advice)+1)
	for _, a := range advice {
		parts = append(parts, a.String())
	}
	if unknown && dc.m.Versioning.Kind == "" && (dc.notVersion(f.Image) || dc.notVersion(chosen)) {
		parts = append(parts, `if the tags are not semver, set versioning = "calver", "numeric" or "regex:…"`)
	}
	return advice, fmt.Sprintf("in module %q (%s): %s", dc.m.Name, dc.pinWhere(), strings.Join(parts, "; "))
}

// downgradeWords are the attributes that accept a downgrade: the reason,
// and for a one_way module the backup.
func (dc *decider) downgradeWords() []Setting {
	s := []Setting{{"allow_downgrade", "<why>"}}
	if dc.m.OneWay {
		s = append(s, Setting{"restore", "<the backup it restores from>"})
	}
	return s
}

// notVersion reports whether img has a tag its module's scheme reads no
// version in: the one case where another versioning may decide.
func (dc *decider) notVersion(img image.Image) bool {
	if img.Tag == "" {
		return false
	}
	_, ok := dc.m.Versioning.Parse(img.Tag)
	return !ok
}

// asWritten is img as a pin written from it names it, and that pin's
// text: "tag@digest" where pin believes the tag names the digest (its
// version label says so, a source vouches for it, or the registry
// confirms it), else the digest alone, without the tag: a tag pin does
// not believe is not advised back.
func (dc *decider) asWritten(ctx context.Context, img image.Image) (image.Image, string) {
	if img.Digest == "" {
		return img, img.Tag
	}
	if img.Tag == "" || !dc.believed(ctx, img) {
		img.Tag = ""
		return img, img.Digest
	}
	return img, img.Tag + "@" + img.Digest
}

// believed reports whether img's tag may be written next to its digest:
// it says no version, or not one the image's own label does not say, or
// a source vouches for it, or the registry confirms it (one HEAD, once
// per claim and run).
func (dc *decider) believed(ctx context.Context, img image.Image) bool {
	c := dc.opts.VersionOf(img)
	switch {
	case c.Kind == order.Conflicting:
		return false
	case !tagDecides(c):
		return true
	}
	return dc.claims.confirm(ctx, img, dc.opts).why == ""
}
