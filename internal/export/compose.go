package export

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/lock"
)

// OverridePath is the override file written beside a Compose file:
// compose.yaml → compose.pin.yaml.
func OverridePath(composeFile string) string {
	ext := filepath.Ext(composeFile)
	return strings.TrimSuffix(composeFile, ext) + ".pin" + ext
}

// OverrideHeader is the first line of every override file pin writes: how
// pin tells its own override from one a person wrote (see IsOverride).
const OverrideHeader = "# Written by pin export from the lock; pin export rewrites it, do not edit.\n"

// IsOverride reports whether content is an override file pin wrote: it
// starts with OverrideHeader's words (a Windows editor may have made its
// line end \r\n).
func IsOverride(content []byte) bool {
	return bytes.HasPrefix(content, []byte(strings.TrimSuffix(OverrideHeader, "\n")))
}

// Override makes the Compose override file of project p: for each enabled
// service a module covers, services.<name>.image set to the locked
// reference, so that "docker compose -f <file> -f <override> up -d" runs
// exactly the lock. Services are sorted by name. old is the override's
// current content (nil when absent).
func Override(p *compose.Project, cov *Coverage, old []byte) Result {
	var r Result
	path := OverridePath(p.Files[0])
	var b bytes.Buffer
	b.WriteString(OverrideHeader)
	fmt.Fprintf(&b, "# docker compose")
	for _, f := range p.Files {
		fmt.Fprintf(&b, " -f %s", filepath.Base(f))
	}
	fmt.Fprintf(&b, " -f %s up -d\n", filepath.Base(path))
	b.WriteString("# runs exactly the locked images.\n")
	var lines []string
	for _, s := range p.Services {
		what := "service " + s.Name
		if s.Image == "" {
			r.Skipped = append(r.Skipped, Skip{What: what, Why: "it is only built: there is no image to pin"})
			continue
		}
		m, why := cov.Compose(p.Name, s.Name, s.Image)
		e := r.locked(cov, m, why, what, s.Ref.Where(), s.Image)
		if e == nil {
			continue
		}
		ref := Reference(e, s.Image)
		at := s.Ref.Where()
		if s.Ref.File == "" {
			at = "service " + s.Name
		}
		r.Entries = append(r.Entries, Entry{Where: filepath.Base(path) + ", service " + s.Name, Module: m.Name, Old: s.Image, New: ref, Named: []Named{{s.Image, at}}})
		lines = append(lines, fmt.Sprintf("  %s:\n    image: %s\n", yamlKey(s.Name), ref))
	}
	if len(lines) == 0 {
		b.WriteString("services: {}\n")
	} else {
		b.WriteString("services:\n")
		b.WriteString(strings.Join(lines, ""))
	}
	r.Files = append(r.Files, File{Path: path, Bytes: b.Bytes(), Old: old, Owned: IsOverride})
	return r
}

// yamlKey quotes a service name when YAML would not read it as the same
// plain string.
func yamlKey(s string) string {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Sprintf("%q", s)
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
		return fmt.Sprintf("%q", s)
	}
	return s
}

// InPlace rewrites the image: of each Compose file of p (srcs holds their
// bytes by path) to the locked reference of the module that covers its
// service, keeping every other byte. What cannot be rewritten where it is
// written is skipped, and unwritten when a module covers it and the file
// does not already name the locked image: an image set through a variable
// (rewriting it would drop the variable), written as a YAML alias or block
// scalar, or not written on an image: line of these files at all (merged
// from an anchor, extends, include).
func InPlace(p *compose.Project, cov *Coverage, srcs map[string][]byte) (Result, error) {
	var r Result
	image := map[string]string{} // service → its image as Compose reads it
	for _, s := range p.Services {
		image[s.Name] = s.Image
	}
	written := map[string]bool{}
	for _, f := range p.Files {
		refs, err := imageref.ComposeRefs(f, srcs[f])
		if err != nil {
			return r, err
		}
		for _, ref := range refs {
			written[ref.Service] = true
		}
		err = r.rewrite(cov, f, srcs[f], refs, "the image is set through a variable; write the override file (pin export --compose without --in-place) or an --env file instead",
			func(ref imageref.Ref) (string, string, *catalogue.Module, string) {
				value := ref.Value
				if strings.Contains(value, "$") && image[ref.Service] != "" {
					value = image[ref.Service] // as Compose reads it here
				}
				m, why := cov.Compose(p.Name, ref.Service, value)
				return ref.Where() + ", service " + ref.Service, value, m, why
			})
		if err != nil {
			return r, err
		}
	}
	for _, s := range p.Services {
		if s.Image == "" || written[s.Name] {
			continue
		}
		m, why := cov.Compose(p.Name, s.Name, s.Image)
		e := r.locked(cov, m, why, "service "+s.Name, "service "+s.Name, s.Image)
		if e == nil || Reference(e, s.Image) == s.Image {
			continue
		}
		r.Skipped = append(r.Skipped, Skip{What: "service " + s.Name, Unwritten: true,
			Why: "its image is not written on an image: line of these files (a merge key <<:, extends or include sets it), so it cannot be rewritten in place; write the override file (pin export --compose without --in-place)"})
	}
	return r, nil
}

// Manifests rewrites, in place, the container images of the Kubernetes
// manifests srcs (bytes by path) to the locked reference of the module
// that covers each.
func Manifests(cov *Coverage, paths []string, srcs map[string][]byte) (Result, error) {
	var r Result
	for _, f := range paths {
		refs, _, err := imageref.ManifestRefs(f, srcs[f])
		if err != nil {
			return r, err
		}
		err = r.rewrite(cov, f, srcs[f], refs, "the image holds a variable", func(ref imageref.Ref) (string, string, *catalogue.Module, string) {
			m, why := cov.Workload(ref.Object, ref.Container, ref.Value)
			return containerOf(ref), ref.Value, m, why
		})
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// rewrite adds to r file f (bytes src) with each of its references refs
// replaced, in place, by the locked reference of the module cover finds
// for it (cover also says what the reference is, for a skip, and its value
// as the deploy reads it: interpolated, for Compose). A reference holding
// a variable is skipped, saying varWhy; one written as an alias or a block
// scalar too. Either is unwritten when a module covers it, unless the
// deploy reads the locked image there already (a variable set to it, an
// alias of an anchor rewritten in this run).
func (r *Result) rewrite(cov *Coverage, f string, src []byte, refs []imageref.Ref, varWhy string,
	cover func(imageref.Ref) (what, value string, m *catalogue.Module, why string)) error {
	var edits []imageref.Edit
	anchored := map[string]string{} // anchor → the value this run gives it
	for _, ref := range refs {
		what, value, m, why := cover(ref)
		if strings.Contains(ref.Value, "$") {
			why := varWhy
			if e, _ := lockedOf(cov, m); e != nil {
				if Reference(e, value) == value {
					r.Entries = append(r.Entries, Entry{Where: ref.Where(), Module: m.Name, Old: value, New: value})
					continue
				}
				if value != ref.Value {
					why = fmt.Sprintf("it reads %s here, not the locked %s, and %s", value, Reference(e, value), varWhy)
				}
			}
			r.Skipped = append(r.Skipped, Skip{What: what, Why: why, Unwritten: m != nil})
			continue
		}
		e := r.locked(cov, m, why, what, ref.Where(), ref.Value)
		if e == nil {
			continue
		}
		ref2 := Reference(e, ref.Value)
		if ref.Form != "" && ref2 != ref.Value && (ref.Alias == "" || anchored[ref.Alias] != ref2) {
			how := "write it as a plain value on its image: line"
			if ref.Alias != "" {
				how = fmt.Sprintf("write it as a plain value on its image: line, or give the anchor &%s the value %s", ref.Alias, ref2)
			}
			r.Skipped = append(r.Skipped, Skip{What: what, Unwritten: true,
				Why: fmt.Sprintf("the image is written as %s, which pin does not rewrite, and it names %s, not the locked %s; %s", ref.Form, ref.Value, ref2, how)})
			continue
		}
		r.Entries = append(r.Entries, Entry{Where: ref.Where(), Module: m.Name, Old: ref.Value, New: ref2, Named: []Named{{ref.Value, ref.Where()}}})
		if ref.Anchor != "" {
			anchored[ref.Anchor] = ref2
		}
		if ref2 != ref.Value && ref.Form == "" {
			edits = append(edits, imageref.Edit{Ref: ref, New: ref2})
		}
	}
	out, err := imageref.Apply(src, edits)
	if err != nil {
		return err
	}
	r.Files = append(r.Files, File{Path: f, Bytes: out, Old: src})
	return nil
}

// lockedOf is the lock entry of m, nil when m is nil or not locked.
func lockedOf(cov *Coverage, m *catalogue.Module) (*lock.Module, string) {
	if m == nil {
		return nil, ""
	}
	return cov.Locked(m)
}

// containerOf says which container of a manifest ref is, for a skip.
func containerOf(ref imageref.Ref) string {
	return fmt.Sprintf("%s, %s container %s", ref.Where(), ref.Object, ref.Container)
}
