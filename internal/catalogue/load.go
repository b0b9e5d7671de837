package catalogue

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// DefaultPath is the catalogue read when none is named.
const DefaultPath = "catalogue.hcl"

var (
	rootSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "min_age"}}, Blocks: []hcl.BlockHeaderSchema{
		{Type: "host", LabelNames: []string{"name"}},
		{Type: "registry", LabelNames: []string{"host"}},
		{Type: "module", LabelNames: []string{"name"}},
		{Type: "export"},
		{Type: "propose"},
		{Type: "environment", LabelNames: []string{"name"}},
	}}
)

// Load reads the catalogue at path: one HCL file, or every *.hcl file in a
// folder. It returns every problem found, in every file, as diagnostics.
func Load(path string) (*Catalogue, hcl.Diagnostics) {
	files, err := catalogueFiles(path)
	if err != nil {
		return &Catalogue{}, hcl.Diagnostics{noCatalogue(path, err)}
	}
	srcs := make([]Source, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return &Catalogue{}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read catalogue", Detail: err.Error() + "."}}
		}
		srcs = append(srcs, Source{Filename: f, Bytes: b})
	}
	return Parse(srcs...)
}

// Source is one catalogue file's name and content.
type Source struct {
	Filename string
	Bytes    []byte
}

// Parse reads a catalogue from its files' contents; relative paths are taken
// relative to each file's folder.
//
// A catalogue is first read a top-level block at a time (parseInBlocks),
// which keeps one block's syntax tree in memory instead of every file's:
// parsing a file whole holds its tokens and tree at once, 128 MiB of heap
// for 11,000 modules. When that meets any diagnostic, or the
// file does not split cleanly, the files are parsed whole, as before, and
// the diagnostics are those of a whole parse.
func Parse(srcs ...Source) (*Catalogue, hcl.Diagnostics) {
	if c, ok := parseInBlocks(srcs); ok {
		return c, nil
	}
	return parseWhole(srcs)
}

// parseWhole parses each file whole and decodes it.
func parseWhole(srcs []Source) (*Catalogue, hcl.Diagnostics) {
	p := hclparse.NewParser()
	c := &Catalogue{}
	l := newLoader(c)
	var diags hcl.Diagnostics
	for _, src := range srcs {
		file, d := p.ParseHCL(src.Bytes, src.Filename)
		diags = append(diags, d...)
		if file != nil {
			diags = append(diags, l.file(file, filepath.Dir(src.Filename))...)
		}
	}
	diags = append(diags, l.crossCheck()...)
	c.Files = p.Files()
	if len(diags) == 0 {
		c.Files = withoutSyntax(c.Files)
	}
	c.sort()
	return c, diags
}

// parseInBlocks parses and decodes each file one top-level block at a time;
// ok is false at the first diagnostic, or when a file does not split into
// blocks that parse on their own (a line starting with "module " inside a
// heredoc, say: the pieces around it do not parse).
func parseInBlocks(srcs []Source) (*Catalogue, bool) {
	c := &Catalogue{Files: map[string]*hcl.File{}}
	l := newLoader(c)
	for _, src := range srcs {
		if _, dup := c.Files[src.Filename]; dup {
			return nil, false // as hclparse: the second is not read
		}
		dir := filepath.Dir(src.Filename)
		for _, piece := range splitBlocks(src.Bytes) {
			b := src.Bytes[piece.Byte:piece.end]
			f, ok := fastBlock(b, src.Filename, piece.Pos) // a plain block, hclsyntax's tree without its lexer
			if !ok {
				var d hcl.Diagnostics
				if f, d = hclsyntax.ParseConfig(b, src.Filename, piece.Pos); len(d) > 0 || f == nil {
					return nil, false
				}
			}
			if d := l.file(f, dir); len(d) > 0 {
				return nil, false
			}
		}
		c.Files[src.Filename] = &hcl.File{Bytes: src.Bytes}
	}
	if d := l.crossCheck(); len(d) > 0 {
		return nil, false
	}
	c.sort()
	return c, true
}

// piece is a part of a file: from Pos to end (a byte offset).
type piece struct {
	hcl.Pos
	end int
}

// splitBlocks cuts src before every line that starts (in its first column)
// with a top-level block's type and a space: "host ", "registry ",
// "module ". A cut inside a string, a comment or a heredoc leaves pieces
// that do not parse, which parseInBlocks tells.
func splitBlocks(src []byte) []piece {
	var out []piece
	start := hcl.Pos{Line: 1, Column: 1, Byte: 0}
	line := 1
	for i := 0; i < len(src); {
		nl := bytes.IndexByte(src[i:], '\n')
		next := len(src)
		if nl >= 0 {
			next = i + nl + 1
		}
		if i > start.Byte && blockStart(src[i:next]) {
			out = append(out, piece{Pos: start, end: i})
			start = hcl.Pos{Line: line, Column: 1, Byte: i}
		}
		i = next
		line++
	}
	return append(out, piece{Pos: start, end: len(src)})
}

func blockStart(line []byte) bool {
	for _, t := range rootSchema.Blocks {
		if len(line) > len(t.Type) && string(line[:len(t.Type)]) == t.Type && line[len(t.Type)] == ' ' {
			return true
		}
	}
	return false
}

func newLoader(c *Catalogue) loader {
	return loader{c: c, hosts: map[string]*Host{}, regs: map[string]*Registry{}, mods: map[string]*Module{}, envs: map[string]*envDecl{}}
}

// sort orders hosts, registries, modules and environments by name.
func (c *Catalogue) sort() {
	sort.Slice(c.Hosts, func(i, j int) bool { return c.Hosts[i].Name < c.Hosts[j].Name })
	sort.Slice(c.Registries, func(i, j int) bool { return c.Registries[i].Host < c.Registries[j].Host })
	sort.Slice(c.Modules, func(i, j int) bool { return c.Modules[i].Name < c.Modules[j].Name })
	sort.Slice(c.Environments, func(i, j int) bool { return c.Environments[i].Name < c.Environments[j].Name })
}

// withoutSyntax keeps each file's bytes and drops its syntax tree, which
// is most of a loaded catalogue's memory (3 of 4.4 MiB live for 1,100
// modules) and is needed only to say which block a diagnostic is in. A
// catalogue that loaded without a diagnostic needs neither more: a later
// diagnostic still quotes its source, without the "in module" context.
func withoutSyntax(files map[string]*hcl.File) map[string]*hcl.File {
	out := make(map[string]*hcl.File, len(files))
	for name, f := range files {
		out[name] = &hcl.File{Bytes: f.Bytes}
	}
	return out
}

// errNoHCLFiles is a catalogue folder that holds no *.hcl file.
var errNoHCLFiles = errors.New("holds no *.hcl file")

// noCatalogue is the diagnostic of a catalogue that is not there (or a
// folder of none): pin init writes one, and it says with which command
// lines (with --catalogue PATH when path is not the default).
func noCatalogue(path string, err error) *hcl.Diagnostic {
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNoHCLFiles) {
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read catalogue",
			Detail: fmt.Sprintf("%v. Name a catalogue file or folder with --catalogue.", err)}
	}
	flag, file, what := "", path, path+" does not exist"
	if path != DefaultPath {
		flag = " --catalogue " + shellWord(path)
	}
	if errors.Is(err, errNoHCLFiles) {
		file, what = filepath.Join(path, "init.hcl"), fmt.Sprintf("the catalogue folder %s holds no *.hcl file", path)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No catalogue",
		Detail: fmt.Sprintf(`%s. pin init writes one from what it finds:
  pin init%s --compose compose.yaml
      a module per service of a Compose file (repeat --compose to merge several)
  pin init%s --manifests DIR
      a module per image of the Kubernetes manifests under DIR
  pin init%s --from-host local
      a module per container a Docker Engine runs, once %s holds host "local" {}
      (the engine the docker CLI reaches; or write docker = "unix:///var/run/docker.sock" in it)
Or name another catalogue file or folder with --catalogue.`, what, flag, flag, flag, file)}
}

// shellWord quotes s for a shell where it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func catalogueFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.hcl"))
	if err != nil {
		return nil, err
	}
	// The lockfile may live in the catalogue folder; it is not a catalogue.
	// Nor is an environment's (pin.lock.staging.hcl).
	out := files[:0]
	for _, f := range files {
		if !strings.HasSuffix(f, ".lock.hcl") && !environmentLock.MatchString(f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("folder %s %w", path, errNoHCLFiles)
	}
	sort.Strings(out)
	return out, nil
}

// environmentLock is the name of an environment's lock file.
var environmentLock = regexp.MustCompile(`\.lock\.[a-z0-9][a-z0-9_-]*\.hcl$`)

type loader struct {
	c     *Catalogue
	hosts map[string]*Host
	regs  map[string]*Registry
	mods  map[string]*Module
	// envs are the environment blocks by name, envOrder as read.
	envs     map[string]*envDecl
	envOrder []*envDecl
	// minAgeAt is where the catalogue's min_age was read; nil: not yet.
	minAgeAt *hcl.Range
}

func errorf(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	r := rng
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(detail, args...), Subject: &r}
}

func warnf(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	d := errorf(rng, summary, detail, args...)
	d.Severity = hcl.DiagWarning
	return d
}

func (l *loader) file(f *hcl.File, dir string) hcl.Diagnostics {
	content, diags := f.Body.Content(rootSchema)
	diags = append(diags, l.catalogueMinAge(content.Attributes["min_age"])...)
	for _, b := range content.Blocks {
		switch b.Type {
		case "host":
			diags = append(diags, l.host(b, dir)...)
		case "registry":
			diags = append(diags, l.registry(b, dir)...)
		case "module":
			diags = append(diags, l.module(b, dir)...)
		case "export":
			diags = append(diags, l.export(b, dir)...)
		case "propose":
			diags = append(diags, l.propose(b)...)
		case "environment":
			diags = append(diags, l.environment(b)...)
		}
	}
	return diags
}

// crossCheck checks what spans blocks: runs_on naming a defined host,
// environments and their hosts.
func (l *loader) crossCheck() hcl.Diagnostics {
	diags := l.checkEnvironments()
	l.inheritMinAge()
	for _, m := range l.c.Modules {
		// A module without a verify block inherits its registry's.
		if m.Verify == nil {
			if reg, err := name.NewRepository(m.Image); err == nil {
				if r := l.regs[reg.RegistryStr()]; r != nil {
					m.Verify = r.Verify
				}
			}
		}
		diags = append(diags, unverifiedWithoutPolicy(m)...)
		for _, ro := range m.RunsOn {
			h, ok := l.hosts[ro.Host]
			if !ok {
				diags = append(diags, errorf(ro.DeclRange, "Undefined host", "Module %q runs on %q, but no host block defines it. Add host %q { docker = \"unix:///var/run/docker.sock\" } or { snapshot = \"<file>\" }, or fix the name.%s", m.Name, ro.Host, ro.Host, suggest(ro.Host, l.hosts)))
				continue
			}
			// A snapshot may have been taken of a cluster: only a live
			// Docker host cannot have workloads.
			if (ro.Workload != "" || ro.SelectorText != "") && h.Kubernetes == nil && h.Snapshot == "" {
				diags = append(diags, errorf(ro.DeclRange, "Workload on a Docker host", "Module %q takes over a workload or selector on %q, which is a Docker host. Write container = \"<name>\" for a Docker host, or make %q a Kubernetes host with kubernetes = { context = \"…\", namespace = \"…\" }.", m.Name, ro.Host, ro.Host))
			}
			if ro.Compose != "" && h.Kubernetes != nil {
				diags = append(diags, errorf(ro.DeclRange, "Compose service on a Kubernetes host", "Module %q takes over the Compose service %q on %q, which is a Kubernetes host. Write workload = \"<kind>/<name>\" for a Kubernetes host, or name a Docker host.", m.Name, ro.Compose, ro.Host))
			}
		}
	}
	return diags
}

func suggest(s string, hosts map[string]*Host) string {
	names := make([]string, 0, len(hosts))
	for n := range hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(" Defined hosts: %s.", strings.Join(names, ", "))
}
