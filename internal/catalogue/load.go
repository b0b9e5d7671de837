package catalogue

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// DefaultPath is the catalogue read when none is named.
const DefaultPath = "catalogue.hcl"

var (
	rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "host", LabelNames: []string{"name"}},
		{Type: "registry", LabelNames: []string{"host"}},
		{Type: "module", LabelNames: []string{"name"}},
	}}
)

// Load reads the catalogue at path: one HCL file, or every *.hcl file in a
// folder. It returns every problem found, in every file, as diagnostics.
func Load(path string) (*Catalogue, hcl.Diagnostics) {
	files, err := catalogueFiles(path)
	if err != nil {
		return &Catalogue{}, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read catalogue",
			Detail:   fmt.Sprintf("%v. Name a catalogue file or folder with --catalogue, or create %s.", err, DefaultPath),
		}}
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
func Parse(srcs ...Source) (*Catalogue, hcl.Diagnostics) {
	p := hclparse.NewParser()
	c := &Catalogue{}
	l := loader{c: c, hosts: map[string]*Host{}, regs: map[string]*Registry{}, mods: map[string]*Module{}}
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
	sort.Slice(c.Hosts, func(i, j int) bool { return c.Hosts[i].Name < c.Hosts[j].Name })
	sort.Slice(c.Registries, func(i, j int) bool { return c.Registries[i].Host < c.Registries[j].Host })
	sort.Slice(c.Modules, func(i, j int) bool { return c.Modules[i].Name < c.Modules[j].Name })
	return c, diags
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
	out := files[:0]
	for _, f := range files {
		if !strings.HasSuffix(f, ".lock.hcl") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("folder %s holds no *.hcl file", path)
	}
	sort.Strings(out)
	return out, nil
}

type loader struct {
	c     *Catalogue
	hosts map[string]*Host
	regs  map[string]*Registry
	mods  map[string]*Module
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
	for _, b := range content.Blocks {
		switch b.Type {
		case "host":
			diags = append(diags, l.host(b, dir)...)
		case "registry":
			diags = append(diags, l.registry(b, dir)...)
		case "module":
			diags = append(diags, l.module(b, dir)...)
		}
	}
	return diags
}

// crossCheck checks what spans blocks: runs_on naming a defined host.
func (l *loader) crossCheck() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, m := range l.c.Modules {
		// A module without a verify block inherits its registry's.
		if m.Verify == nil {
			if reg, err := name.NewRepository(m.Image); err == nil {
				if r := l.regs[reg.RegistryStr()]; r != nil {
					m.Verify = r.Verify
				}
			}
		}
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
