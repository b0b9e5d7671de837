package export

import (
	"fmt"
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
	// shared: a tag field by where it is, with the values each image
	// reading it wants there.
	type want struct {
		img   helmvalues.Image
		value string
	}
	shared := map[string][]want{}
	sharedField := map[string]*helmvalues.Field{}
	set := func(f *helmvalues.Field, v string) {
		if f.Ref.Value == v {
			return
		}
		if f.Ref.Raw == f.Ref.Value && needsQuotes(v) {
			v = strconv.Quote(v)
		}
		edits[f.File] = append(edits[f.File], imageref.Edit{Ref: f.Ref, New: v})
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
		newRef := Reference(e, img.Ref)
		entry := Entry{Where: img.Where, Module: m.Name, Old: img.Ref, New: newRef, Named: img.Ref, At: img.Where}
		switch {
		case img.Whole != nil:
			set(img.Whole, newRef)
		case img.Marker != nil && img.Marker.Part == "digest":
			set(img.Digest, e.Digest)
		case img.Marker != nil && img.Marker.Part == "tag":
			set(img.Tag, tagAt(e))
		case img.Digest != nil:
			set(img.Digest, e.Digest)
			if img.Tag != nil && !img.TagBorrowed && img.Tag.Ref.Value != "" && e.Tag != "" {
				set(img.Tag, e.Tag)
			}
		case img.Tag != nil && !img.TagBorrowed:
			set(img.Tag, tagAt(e))
		case img.Tag != nil:
			key := img.Tag.Where() + " " + img.Tag.Path
			shared[key] = append(shared[key], want{img, tagAt(e)})
			sharedField[key] = img.Tag
			r.Entries = append(r.Entries, entry)
			continue
		default:
			r.Skipped = append(r.Skipped, Skip{What: what, Unwritten: true,
				Why: fmt.Sprintf("its map has neither a tag nor a digest: the chart renders its tag from its %s, which is not in the values; add tag: \"\" (or digest: \"\", if the chart's templates read one) to %s", img.TagFrom, img.Path)})
			continue
		}
		r.Entries = append(r.Entries, entry)
	}
	// A tag borrowed by another image, and the image it is borrowed from
	// when that writes it too: written only when all agree.
	for key, ws := range shared {
		f := sharedField[key]
		var readers []string
		agree := true
		for _, w := range ws {
			readers = append(readers, w.img.Path)
			if w.value != ws[0].value {
				agree = false
			}
		}
		for _, ed := range edits[f.File] {
			if ed.Ref.Line == f.Ref.Line && ed.Ref.Column == f.Ref.Column && ed.New != ws[0].value && strings.Trim(ed.New, `"`) != ws[0].value {
				agree = false
				readers = append(readers, f.Path)
			}
		}
		if agree {
			set(f, ws[0].value)
			continue
		}
		for _, w := range ws {
			r.Entries = dropEntry(r.Entries, w.img.Where)
			r.Skipped = append(r.Skipped, Skip{What: fmt.Sprintf("%s, %s", w.img.Where, w.img.Path), Unwritten: true,
				Why: fmt.Sprintf("its tag is %s (%s), which %s read too: one value cannot pin them all at their own digests; add digest: \"\" (or tag: \"\") to %s so that it has its own", f.Path, f.Where(), strings.Join(readers, ", "), w.img.Path)})
		}
	}
	for _, a := range found.Args {
		m, _ := cov.Image(a.Ref)
		if m == nil {
			continue
		}
		r.Skipped = append(r.Skipped, Skip{What: fmt.Sprintf("%s, %s", a.Where, a.Path), Unwritten: true,
			Why: fmt.Sprintf("it names %s inside a longer value (%q), as a container argument: pin cannot write it there; give the image a key of its own, or mark it with # pin: %s", a.Ref, a.Value, m.Name)})
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

func dropEntry(es []Entry, where string) []Entry {
	out := es[:0]
	for _, e := range es {
		if e.Where != where {
			out = append(out, e)
		}
	}
	return out
}
