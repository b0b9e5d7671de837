package export

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/helmvalues"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/lock"
)

// Helm writes the lock into the values files of chart c, in place: for
// each image its values name that a module covers (the module a "# pin:"
// comment names, else the one of its repository), only the tag and the
// digest change, never the registry or the repository, and every other
// byte stays. A map with a digest field gets the locked digest there (and
// its own tag the locked tag); one without gets "tag@sha256:…" in its
// tag; a whole reference becomes repository:tag@sha256:…. A tag another
// image reads too (borrowed: a component's map without a tag of its own)
// is written only when every image that reads it is locked at that very
// tag@digest; else each is refused, with what to add. A reference found
// inside a string (a container argument) a module covers cannot be
// written: it is said, and the run fails.
func Helm(cov *Coverage, c *helmvalues.Chart) (Result, error) {
	var r Result
	found := c.Images()
	edits := map[*helmvalues.File][]imageref.Edit{}
	set := func(f *helmvalues.Field, v string) {
		if f.Ref.Value == v {
			return
		}
		if f.Ref.Raw == f.Ref.Value && needsQuotes(v) {
			v = strconv.Quote(v)
		}
		edits[f.File] = append(edits[f.File], imageref.Edit{Ref: f.Ref, New: v})
	}
	// Every field to write, by where it is, with what each image that
	// reads it wants there: a tag another image borrows is written only
	// when all agree.
	type want struct {
		img   helmvalues.Image
		value string
	}
	pending := map[string][]want{}
	fields := map[string]*helmvalues.Field{}
	var order []string
	claim := func(f *helmvalues.Field, img helmvalues.Image, v string) {
		key := f.Where() + " " + f.Path + fmt.Sprint(f.Ref.Column)
		if _, ok := fields[key]; !ok {
			order = append(order, key)
		}
		fields[key] = f
		pending[key] = append(pending[key], want{img, v})
	}
	readers := map[string][]string{} // tag field → the images that read it
	for _, img := range found.Images {
		if img.Tag != nil {
			key := img.Tag.Where() + " " + img.Tag.Path + fmt.Sprint(img.Tag.Ref.Column)
			readers[key] = append(readers[key], img.Path)
		}
	}
	for _, img := range found.Images {
		what := fmt.Sprintf("%s, %s", img.Where, img.Path)
		m, why := helmModule(cov, img)
		e := r.locked(cov, m, why, what, img.Where, img.Ref)
		if e == nil {
			continue
		}
		if img.Whole == nil && img.Marker == nil || img.Marker != nil && img.Marker.Part == "" {
			if repo, ok := repositoryOf(img.Ref); !ok || repo != e.Image {
				r.Skipped = append(r.Skipped, Skip{What: what, Unwritten: true,
					Why: fmt.Sprintf("the values render %s, not module %s's repository %s: only the tag and digest are pin's to write; fix the repository, or name another module", img.Ref, m.Name, e.Image)})
				continue
			}
		}
		named := img.Ref
		if img.Marker != nil && img.Marker.Part == "tag" {
			named = m.Image + ":" + img.Ref
		} else if img.Marker != nil && img.Marker.Part == "digest" {
			named = m.Image + "@" + img.Ref
		}
		newRef := Reference(e, named)
		switch {
		case img.Whole != nil:
			claim(img.Whole, img, newRef)
		case img.Marker != nil && img.Marker.Part == "digest":
			claim(img.Digest, img, e.Digest)
		case img.Marker != nil && img.Marker.Part == "tag":
			claim(img.Tag, img, tagAt(e))
		case img.Digest != nil:
			claim(img.Digest, img, e.Digest)
			if img.Tag != nil && !img.TagBorrowed && img.Tag.Ref.Value != "" && e.Tag != "" {
				claim(img.Tag, img, e.Tag)
			}
		case img.Tag != nil:
			claim(img.Tag, img, tagAt(e))
		default:
			r.Skipped = append(r.Skipped, Skip{What: what, Unwritten: true,
				Why: fmt.Sprintf("its map has neither a tag nor a digest: the chart renders its tag from its %s, which is not in the values; add tag: \"\" (or digest: \"\", if the chart's templates read one) to %s", img.TagFrom, img.Path)})
			continue
		}
		r.Entries = append(r.Entries, Entry{Where: img.Where, Module: m.Name, Old: named, New: newRef, Named: []Named{{named, img.Where}}})
	}
	refused := map[string]bool{}
	for _, key := range order {
		ws := pending[key]
		agree := true
		for _, w := range ws {
			agree = agree && w.value == ws[0].value
		}
		// A tag read by an image that writes nothing there (its digest
		// field pins it) would take the value too, digest and all.
		for _, p := range readers[key] {
			agree = agree && slices.ContainsFunc(ws, func(w want) bool { return w.img.Path == p })
		}
		if agree {
			continue
		}
		f := fields[key]
		for _, w := range ws {
			refused[w.img.Where] = true
			r.Skipped = append(r.Skipped, Skip{What: fmt.Sprintf("%s, %s", w.img.Where, w.img.Path), Unwritten: true,
				Why: fmt.Sprintf("its tag is %s (%s), which %s read too: one value cannot pin them all at their own digests; add digest: \"\" (or tag: \"\") to %s so that it has its own", f.Path, f.Where(), strings.Join(readers[key], ", "), w.img.Path)})
		}
	}
	for _, key := range order {
		ws := pending[key]
		if !slices.ContainsFunc(ws, func(w want) bool { return refused[w.img.Where] }) {
			set(fields[key], ws[0].value)
		}
	}
	r.Entries = slices.DeleteFunc(r.Entries, func(e Entry) bool { return refused[e.Where] })
	for _, a := range found.Args {
		m, _ := cov.Image(a.Ref)
		if m == nil {
			continue
		}
		r.Skipped = append(r.Skipped, Skip{What: fmt.Sprintf("%s, %s", a.Where, a.Path), Unwritten: true,
			Why: fmt.Sprintf("it names %s in %q, a value pin does not read as an image (a container argument, a key not named image): pin does not write it there; give the image a key of its own, or mark the value with # pin: %s", a.Ref, a.Value, m.Name)})
	}
	for _, f := range c.Files {
		out, err := imageref.Apply(f.Src, edits[f])
		if err != nil {
			return r, err
		}
		r.Files = append(r.Files, File{Path: f.Path, Bytes: out, Old: f.Src})
	}
	return r, nil
}

// helmModule is the module that covers img: the one its marker names,
// else the one of its repository.
func helmModule(cov *Coverage, img helmvalues.Image) (*catalogue.Module, string) {
	if img.Marker != nil {
		if m := cov.cat.Module(img.Marker.Module); m != nil {
			return m, ""
		}
		return nil, fmt.Sprintf("its comment names module %q, which the catalogue does not have", img.Marker.Module)
	}
	return cov.Image(img.Ref)
}

// tagAt is the tag value that pins e: "tag@sha256:…".
func tagAt(e *lock.Module) string {
	if e.Tag == "" {
		return "@" + e.Digest
	}
	return e.Tag + "@" + e.Digest
}

func repositoryOf(ref string) (string, bool) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", false
	}
	return r.Context().Name(), true
}

// needsQuotes: a plain YAML scalar v would not read as the string v.
func needsQuotes(v string) bool {
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return true
	}
	switch strings.ToLower(v) {
	case "", "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n":
		return true
	}
	return false
}
