package export

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/imageref"
)

// OverridePath is the override file written beside a Compose file:
// compose.yaml → compose.pin.yaml.
func OverridePath(composeFile string) string {
	ext := filepath.Ext(composeFile)
	return strings.TrimSuffix(composeFile, ext) + ".pin" + ext
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
	fmt.Fprintf(&b, "# Written by pin export from the lock; pin export rewrites it, do not edit.\n")
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
		r.Entries = append(r.Entries, Entry{Where: filepath.Base(path) + ", service " + s.Name, Module: m.Name, Old: s.Image, New: ref})
		lines = append(lines, fmt.Sprintf("  %s:\n    image: %s\n", yamlKey(s.Name), ref))
	}
	if len(lines) == 0 {
		b.WriteString("services: {}\n")
	} else {
		b.WriteString("services:\n")
		b.WriteString(strings.Join(lines, ""))
	}
	r.Files = append(r.Files, File{Path: path, Bytes: b.Bytes(), Old: old})
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
// service, keeping every other byte. An image set through a variable is
// skipped: rewriting it would drop the variable.
func InPlace(p *compose.Project, cov *Coverage, srcs map[string][]byte) (Result, error) {
	var r Result
	for _, f := range p.Files {
		refs, err := imageref.ComposeRefs(f, srcs[f])
		if err != nil {
			return r, err
		}
		err = r.rewrite(cov, f, srcs[f], refs, "the image is set through a variable; write the override file or an --env file instead",
			func(ref imageref.Ref) (string, *catalogue.Module, string) {
				m, why := cov.Compose(p.Name, ref.Service, ref.Value)
				return ref.Where() + ", service " + ref.Service, m, why
			})
		if err != nil {
			return r, err
		}
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
		err = r.rewrite(cov, f, srcs[f], refs, "the image holds a variable", func(ref imageref.Ref) (string, *catalogue.Module, string) {
			m, why := cov.Workload(ref.Object, ref.Container, ref.Value)
			return containerOf(ref), m, why
		})
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// rewrite adds to r file f (bytes src) with each of its references refs
// replaced, in place, by the locked reference of the module cover finds
// for it (cover also says what the reference is, for a skip). A reference
// holding a variable is skipped, saying varWhy.
func (r *Result) rewrite(cov *Coverage, f string, src []byte, refs []imageref.Ref, varWhy string,
	cover func(imageref.Ref) (what string, m *catalogue.Module, why string)) error {
	var edits []imageref.Edit
	for _, ref := range refs {
		what, m, why := cover(ref)
		if strings.Contains(ref.Value, "$") {
			r.Skipped = append(r.Skipped, Skip{What: what, Why: varWhy})
			continue
		}
		e := r.locked(cov, m, why, what, ref.Where(), ref.Value)
		if e == nil {
			continue
		}
		ref2 := Reference(e, ref.Value)
		r.Entries = append(r.Entries, Entry{Where: ref.Where(), Module: m.Name, Old: ref.Value, New: ref2})
		if ref2 != ref.Value {
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

// containerOf says which container of a manifest ref is, for a skip.
func containerOf(ref imageref.Ref) string {
	return fmt.Sprintf("%s, %s container %s", ref.Where(), ref.Object, ref.Container)
}
