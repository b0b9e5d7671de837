package export

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

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
		if m == nil {
			r.Skipped = append(r.Skipped, Skip{What: what, Why: why})
			continue
		}
		e, why := cov.Locked(m)
		if e == nil {
			r.Skipped = append(r.Skipped, Skip{What: what, Why: why})
			continue
		}
		if msg := Disagreement(s.Image, e); msg != "" {
			r.Findings = append(r.Findings, Finding{Where: s.Ref.Where(), Msg: msg})
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
		var edits []imageref.Edit
		for _, ref := range refs {
			what := ref.Where() + ", service " + ref.Service
			if strings.Contains(ref.Value, "$") {
				r.Skipped = append(r.Skipped, Skip{What: what, Why: "the image is set through a variable; write the override file or an --env file instead"})
				continue
			}
			m, why := cov.Compose(p.Name, ref.Service, ref.Value)
			if m == nil {
				r.Skipped = append(r.Skipped, Skip{What: what, Why: why})
				continue
			}
			e, why := cov.Locked(m)
			if e == nil {
				r.Skipped = append(r.Skipped, Skip{What: what, Why: why})
				continue
			}
			if msg := Disagreement(ref.Value, e); msg != "" {
				r.Findings = append(r.Findings, Finding{Where: ref.Where(), Msg: msg})
			}
			ref2 := Reference(e, ref.Value)
			r.Entries = append(r.Entries, Entry{Where: ref.Where(), Module: m.Name, Old: ref.Value, New: ref2})
			if ref2 != ref.Value {
				edits = append(edits, imageref.Edit{Ref: ref, New: ref2})
			}
		}
		out, err := imageref.Apply(srcs[f], edits)
		if err != nil {
			return r, err
		}
		r.Files = append(r.Files, File{Path: f, Bytes: out, Old: srcs[f]})
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
		var edits []imageref.Edit
		for _, ref := range refs {
			what := fmt.Sprintf("%s, %s container %s", ref.Where(), ref.Object, ref.Container)
			if strings.Contains(ref.Value, "$") {
				r.Skipped = append(r.Skipped, Skip{What: what, Why: "the image holds a variable"})
				continue
			}
			m, why := cov.Workload(ref.Object, ref.Container, ref.Value)
			if m == nil {
				r.Skipped = append(r.Skipped, Skip{What: what, Why: why})
				continue
			}
			e, why := cov.Locked(m)
			if e == nil {
				r.Skipped = append(r.Skipped, Skip{What: what, Why: why})
				continue
			}
			if msg := Disagreement(ref.Value, e); msg != "" {
				r.Findings = append(r.Findings, Finding{Where: ref.Where(), Msg: msg})
			}
			ref2 := Reference(e, ref.Value)
			r.Entries = append(r.Entries, Entry{Where: ref.Where(), Module: m.Name, Old: ref.Value, New: ref2})
			if ref2 != ref.Value {
				edits = append(edits, imageref.Edit{Ref: ref, New: ref2})
			}
		}
		out, err := imageref.Apply(srcs[f], edits)
		if err != nil {
			return r, err
		}
		r.Files = append(r.Files, File{Path: f, Bytes: out, Old: srcs[f]})
	}
	return r, nil
}
