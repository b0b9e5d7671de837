package scaffold

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/version"
)

// Target is where a candidate runs: a host and one of a container name, a
// Compose service ("project/service") or a Kubernetes workload (with the
// container's name).
type Target struct {
	Host      string
	Container string
	Compose   string
	Workload  string
}

func (t Target) empty() bool { return t.Host == "" }

// Candidate is one module that init may add.
type Candidate struct {
	// Name is the module name wanted; Alt the one used when Name is taken
	// by a module of another image (empty: skip instead).
	Name, Alt string
	// Image is the repository as written (no tag, no digest).
	Image  string
	Policy catalogue.Policy
	// Pin is written as is when set: the tag as written, or tag@digest.
	Pin    string
	RunsOn Target
	// From says where the candidate was read, for the report and the
	// comment above the block ("compose.yaml:4, service web").
	From string
	// Notes are sentences written in the comment above the block: what
	// init read into the module that the file did not say in so many
	// words (a tagless image is :latest).
	Notes []string
}

// Skip is something read that init does not add, and why.
type Skip struct {
	What, Why string
	// Left: what was read is left out of the catalogue (no module covers
	// it); else a module covers it already, or it has no image to pin.
	Left bool
}

// Repository returns the repository part of an image reference as written
// ("postgres:16@sha256:…" → "postgres"), and the pin it names: the tag, or
// tag@digest, or the digest; "" for neither. An invalid reference is an
// error.
func Repository(ref string) (repo, pin string, err error) {
	if _, err := name.ParseReference(ref); err != nil {
		return "", "", fmt.Errorf("%q is not a valid image reference: %w", ref, err)
	}
	rest, digest, _ := strings.Cut(ref, "@")
	repo, tag := rest, ""
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		repo, tag = rest[:i], rest[i+1:]
	}
	switch {
	case tag != "" && digest != "":
		pin = tag + "@" + digest
	case digest != "":
		pin = digest
	default:
		pin = tag
	}
	return repo, pin, nil
}

// ModuleName makes a module name of s: lowercase letters, digits and '-'.
func ModuleName(s string) string {
	s = strings.ToLower(s)
	s = nameRe.ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

var nameRe = regexp.MustCompile(`[^a-z0-9-]+`)

// Plan sorts candidates into those to add and those to skip against the
// catalogue cat (nil for none). Candidates are taken in order; the first
// of two with the same target or name wins.
func Plan(cat *catalogue.Catalogue, cands []Candidate) (add []Candidate, skip []Skip) {
	var mods []*catalogue.Module
	if cat != nil {
		mods = cat.Modules
	}
	full := func(repo string) string {
		if r, err := name.NewRepository(repo); err == nil {
			return r.Name()
		}
		return repo
	}
	names := map[string]string{} // module name → its full repository
	for _, m := range mods {
		names[m.Name] = m.Image
	}
	type covered struct{ module, image string }
	targets := map[Target]covered{}
	repos := map[string]string{}
	// added: the candidates added this run that run nowhere, by
	// repository: a second image of one repository is a module of its
	// own, never merged into the first.
	added := map[string][]Candidate{}
	for _, m := range mods {
		repos[m.Image] = m.Name
		for _, ro := range m.RunsOn {
			t := Target{Host: ro.Host, Container: ro.Container, Compose: ro.Compose, Workload: ro.Workload}
			targets[t] = covered{m.Name, m.Image}
		}
	}
	for _, c := range cands {
		img := full(c.Image)
		if !c.RunsOn.empty() {
			if by, ok := targets[c.RunsOn]; ok {
				skip = append(skip, Skip{What: c.From, Why: fmt.Sprintf("module %q already takes it over", by.module)})
				continue
			}
		} else if same := slices.IndexFunc(added[img], func(a Candidate) bool { return a.Pin == c.Pin }); same >= 0 {
			skip = append(skip, Skip{What: c.From, Why: fmt.Sprintf("module %q already has image %s", added[img][same].Name, imageText(c))})
			continue
		} else if by, ok := repos[img]; ok && len(added[img]) == 0 {
			skip = append(skip, Skip{What: c.From, Why: fmt.Sprintf("module %q already has image %s", by, c.Image)})
			continue
		}
		n := c.Name
		if _, ok := names[n]; ok {
			n = c.Alt
		}
		if _, ok := names[n]; ok || n == "" {
			skip = append(skip, Skip{What: c.From, Left: true, Why: fmt.Sprintf("a module named %q already exists; add this one by hand under another name", c.Name)})
			continue
		}
		if c.RunsOn.empty() {
			for _, a := range added[img] {
				c.Notes = append(c.Notes, fmt.Sprintf("Module %q has this repository at another image (%s): each image is a module of its own, and pin export gives a reference the module whose pin has its tag.", a.Name, imageText(a)))
			}
			added[img] = append(added[img], c)
		}
		c.Name = n
		names[n] = img
		if !c.RunsOn.empty() {
			targets[c.RunsOn] = covered{n, img}
		}
		repos[img] = n
		add = append(add, c)
	}
	return add, skip
}

// imageText is c's image with its pin, as a file would name it.
func imageText(c Candidate) string {
	switch {
	case c.Pin == "":
		return c.Image
	case strings.HasPrefix(c.Pin, "sha256:"):
		return c.Image + "@" + c.Pin
	}
	return c.Image + ":" + c.Pin
}

// Written is what the block of c says of its pin: pin = "…" or tag =
// "…" (track-upstream's floating tag), at most one of them set.
func Written(c Candidate) (pin, tag string) {
	switch k, v := pinAttribute(c); k {
	case "pin":
		return v, ""
	case "tag":
		return "", v
	}
	return "", ""
}

// pinAttribute is how c's pin is written: pin = "<tag>@<digest>", except
// under track-upstream, where a pin's tag only chooses which versions to
// follow: a tag that is no version there ("latest") is the floating tag
// the module follows (tag = "latest"), and a digest alone is left out
// (the catalogue refuses either as a pin).
func pinAttribute(c Candidate) (key, value string) {
	if c.Pin == "" {
		return "", ""
	}
	if c.Policy != catalogue.TrackUpstream {
		return "pin", c.Pin
	}
	tag, _, _ := strings.Cut(c.Pin, "@")
	if strings.HasPrefix(c.Pin, "sha256:") {
		tag = ""
	}
	if _, ok := (version.Scheme{}).Parse(tag); ok {
		return "pin", c.Pin
	}
	if tag == "" {
		return "", ""
	}
	return "tag", tag
}

// Render returns src (a catalogue file, possibly empty) with a module
// block appended for each candidate, in order, indented with the file's
// indent unit. The bytes of src are kept as they are.
func Render(src []byte, add []Candidate) []byte {
	if len(add) == 0 {
		return src
	}
	var b bytes.Buffer
	for i, c := range add {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# Added by pin init from %s.\n", oneLine(c.From))
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "# %s\n", oneLine(n))
		}
		fmt.Fprintf(&b, "module %s {\n", quote(c.Name))
		fmt.Fprintf(&b, "image = %s\n", quote(c.Image))
		fmt.Fprintf(&b, "policy = %s\n", quote(string(c.Policy)))
		if k, v := pinAttribute(c); k != "" {
			fmt.Fprintf(&b, "%s = %s\n", k, quote(v))
		}
		if t := c.RunsOn; !t.empty() {
			var attrs []string
			if t.Compose != "" {
				attrs = append(attrs, "compose = "+string(quote(t.Compose)))
			}
			if t.Workload != "" {
				attrs = append(attrs, "workload = "+string(quote(t.Workload)))
			}
			if t.Container != "" {
				attrs = append(attrs, "container = "+string(quote(t.Container)))
			}
			if len(attrs) == 1 {
				fmt.Fprintf(&b, "runs_on %s { %s }\n", quote(t.Host), attrs[0])
			} else {
				fmt.Fprintf(&b, "runs_on %s {\n%s\n}\n", quote(t.Host), strings.Join(attrs, "\n"))
			}
		}
		b.WriteString("}\n")
	}
	blocks := hclwrite.Format(b.Bytes())
	if unit := indentUnit(src); unit != "  " {
		blocks = reindent(blocks, unit)
	}
	out := slices.Clone(src)
	switch {
	case len(out) == 0:
	case !bytes.HasSuffix(out, []byte("\n")):
		out = append(out, "\n\n"...)
	case !bytes.HasSuffix(out, []byte("\n\n")):
		out = append(out, '\n')
	}
	return append(out, blocks...)
}

func quote(s string) []byte {
	return hclwrite.TokensForValue(cty.StringVal(s)).Bytes()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// indentUnit guesses the file's indent: the leading whitespace of its
// first indented line; two spaces when none.
func indentUnit(src []byte) string {
	for _, l := range bytes.Split(src, []byte("\n")) {
		trimmed := bytes.TrimLeft(l, " \t")
		if len(trimmed) > 0 && len(trimmed) < len(l) && trimmed[0] != '#' {
			return string(l[:len(l)-len(trimmed)])
		}
	}
	return "  "
}

// reindent replaces each leading two-space step of hclwrite's output with
// unit.
func reindent(src []byte, unit string) []byte {
	lines := bytes.Split(src, []byte("\n"))
	for i, l := range lines {
		trimmed := bytes.TrimLeft(l, " ")
		steps := (len(l) - len(trimmed)) / 2
		lines[i] = append([]byte(strings.Repeat(unit, steps)), trimmed...)
	}
	return bytes.Join(lines, []byte("\n"))
}

// Resolver names the digest a tag names now: the registry's answer for
// repo:tag (repo the full repository name).
type Resolver func(ctx context.Context, repo, tag string) (digest string, err error)

// AddDigests turns each candidate's tag-only pin into "tag@digest", the
// digest the tag names now, by resolve. Candidates with no pin, or a pin
// with a digest already, are left as they are. The first failure is
// returned with the candidate it was for.
func AddDigests(ctx context.Context, cands []Candidate, resolve Resolver) error {
	for i, c := range cands {
		if c.Pin == "" || strings.Contains(c.Pin, "@") || strings.HasPrefix(c.Pin, "sha256:") {
			continue
		}
		repo, err := name.NewRepository(c.Image)
		if err != nil {
			return fmt.Errorf("%s: %w", c.From, err)
		}
		d, err := resolve(ctx, repo.Name(), c.Pin)
		if err != nil {
			return fmt.Errorf("%s: the digest of %s:%s: %w", c.From, c.Image, c.Pin, err)
		}
		cands[i].Pin = c.Pin + "@" + d
	}
	return nil
}
