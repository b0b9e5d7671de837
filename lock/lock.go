package lock

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/renameio/v2"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// DefaultPath is the lockfile used when none is named.
const DefaultPath = "pin.lock.hcl"

// Sources: which side won a module's decision.
const (
	SourcePin      = "pin"
	SourceRunning  = "running"
	SourceUpstream = "upstream"
)

// Lock is the whole lockfile.
type Lock struct {
	Modules []*Module
}

// Module is the decision for one module.
type Module struct {
	Name   string
	Policy string
	// Image is the full repository name.
	Image string
	// Tag is the tag as written upstream ("v1.2" stays "v1.2"); may be empty.
	Tag string
	// Digest is the registry digest to run: the index digest for a
	// multi-platform image.
	Digest string
	// Config is the config digest of the locked platform, when known.
	Config string
	// Platforms maps each platform of an index to its manifest digest.
	Platforms map[string]string
	// Version is the image's version under the module's scheme, when known.
	Version string
	// Created is the image's build date, when known.
	Created time.Time
	// Source is the side that won: SourcePin, SourceRunning or SourceUpstream.
	Source string
	// Rule is the ordering rule that decided (content, version, created).
	Rule string
	// Reason says in words why this image was chosen.
	Reason string
	// AllowDowngrade is the catalogue's stated reason when a downgrade was
	// accepted; Restore the backup it restores from.
	AllowDowngrade string
	Restore        string
	// Observed are the images hosts ran when this entry was decided.
	Observed []Observation
}

// Observation is what one container on one host ran.
type Observation struct {
	Host      string
	Container string
	Tag       string
	// Digest is the registry digest the host knows the image by; empty for
	// a loaded or locally built image.
	Digest string
	// ImageID is the host's image ID (config digest or manifest digest,
	// depending on the image store).
	ImageID string
	Version string
	Created time.Time
}

// Module returns the entry for name, or nil.
func (l *Lock) Module(name string) *Module {
	if l == nil {
		return nil
	}
	for _, m := range l.Modules {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Ref renders the locked image as "repository:tag@digest".
func (m *Module) Ref() string {
	s := m.Image
	if m.Tag != "" {
		s += ":" + m.Tag
	}
	if m.Digest != "" {
		s += "@" + m.Digest
	}
	return s
}

// normalise sorts what Format writes in a fixed order.
func (l *Lock) normalise() {
	slices.SortFunc(l.Modules, func(a, b *Module) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range l.Modules {
		slices.SortFunc(m.Observed, func(a, b Observation) int {
			if c := strings.Compare(a.Host, b.Host); c != 0 {
				return c
			}
			return strings.Compare(a.Container, b.Container)
		})
	}
}

const header = `# This file is maintained by pin. It records, for every module of the
# catalogue, the image to run and why. Edit the catalogue, not this file,
# and run "pin resolve" to update it.
`

// Format renders a lock as HCL. The same lock always gives the same bytes.
//
// It writes the layout hclwrite's formatter would (attributes aligned on
// "=" within runs of one-line attributes, a blank line before each nested
// block) directly: formatting through hclwrite cost a scanner per token,
// which dominated pin's memory on large fleets. The golden files and the
// format → parse → format fuzz target hold the bytes to that layout;
// values are quoted by hclwrite itself.
func Format(l *Lock) []byte {
	l.normalise()
	var b bytes.Buffer
	b.WriteString(header)
	for _, m := range l.Modules {
		b.WriteString("\nmodule ")
		b.Write(quote(m.Name))
		b.WriteString(" {\n")
		var run attrRun
		run.add("policy", m.Policy)
		run.add("image", m.Image)
		run.add("tag", m.Tag)
		run.add("digest", m.Digest)
		run.add("config", m.Config)
		run.add("version", m.Version)
		run.add("created", formatTime(m.Created))
		if len(m.Platforms) > 0 {
			run.write(&b, "  ")
			b.WriteString("  platforms = {\n")
			var entries attrRun
			for _, p := range slices.Sorted(maps.Keys(m.Platforms)) {
				entries.addKey(quote(p), m.Platforms[p])
			}
			entries.write(&b, "    ")
			b.WriteString("  }\n")
		}
		run.add("source", m.Source)
		run.add("rule", m.Rule)
		run.add("reason", m.Reason)
		run.add("allow_downgrade", m.AllowDowngrade)
		run.add("restore", m.Restore)
		run.write(&b, "  ")
		for _, o := range m.Observed {
			b.WriteString("\n  observed ")
			b.Write(quote(o.Host))
			b.WriteString(" {\n")
			var or attrRun
			or.add("container", o.Container)
			or.add("tag", o.Tag)
			or.add("digest", o.Digest)
			or.add("image_id", o.ImageID)
			or.add("version", o.Version)
			or.add("created", formatTime(o.Created))
			or.write(&b, "    ")
			b.WriteString("  }\n")
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// attrRun is a run of one-line attributes, aligned on "=" when written.
// Empty values are left out.
type attrRun struct {
	keys   [][]byte
	values []string
	width  int
}

func (r *attrRun) add(k, v string) {
	if v != "" {
		r.addKey([]byte(k), v)
	}
}

func (r *attrRun) addKey(k []byte, v string) {
	r.keys = append(r.keys, k)
	r.values = append(r.values, v)
	r.width = max(r.width, utf8.RuneCount(k))
}

// write writes the run at indent and empties it.
func (r *attrRun) write(b *bytes.Buffer, indent string) {
	for i, k := range r.keys {
		b.WriteString(indent)
		b.Write(k)
		b.WriteString(strings.Repeat(" ", r.width-utf8.RuneCount(k)))
		b.WriteString(" = ")
		b.Write(quote(r.values[i]))
		b.WriteString("\n")
	}
	*r = attrRun{}
}

// quote renders s as an HCL string literal, escaped as hclwrite escapes it.
func quote(s string) []byte {
	return hclwrite.TokensForValue(cty.StringVal(s)).Bytes()
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

var (
	fileSchema   = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "module", LabelNames: []string{"name"}}}}
	moduleSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "policy", Required: true}, {Name: "image", Required: true},
			{Name: "tag"}, {Name: "digest", Required: true}, {Name: "config"},
			{Name: "version"}, {Name: "created"}, {Name: "platforms"},
			{Name: "source", Required: true}, {Name: "rule"}, {Name: "reason"},
			{Name: "allow_downgrade"}, {Name: "restore"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "observed", LabelNames: []string{"host"}}},
	}
	observedSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "container"}, {Name: "tag"}, {Name: "digest"}, {Name: "image_id"},
		{Name: "version"}, {Name: "created"},
	}}
)

// Parse reads a lockfile. Every problem is a diagnostic with its source
// range; the lock returned holds what could be read.
func Parse(src []byte, filename string) (*Lock, hcl.Diagnostics) {
	l := &Lock{}
	file, diags := hclparse.NewParser().ParseHCL(src, filename)
	if file == nil || diags.HasErrors() {
		return l, diags
	}
	content, d := file.Body.Content(fileSchema)
	diags = append(diags, d...)
	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		m, d := parseModule(b)
		diags = append(diags, d...)
		if prev, ok := seen[m.Name]; ok {
			diags = append(diags, diag(b.LabelRanges[0], "Duplicate module in lock", "Module %q is already locked at %s. Remove one of the blocks, or delete the lock and run \"pin resolve\".", m.Name, prev))
			continue
		}
		seen[m.Name] = b.DefRange
		l.Modules = append(l.Modules, m)
	}
	l.normalise()
	return l, diags
}

func diag(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	r := rng
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(detail, args...), Subject: &r}
}

func parseModule(b *hcl.Block) (*Module, hcl.Diagnostics) {
	m := &Module{Name: b.Labels[0]}
	content, diags := b.Body.Content(moduleSchema)
	a := content.Attributes
	r := reader{attrs: a}
	m.Policy = r.str("policy")
	m.Image = r.repository("image")
	m.Tag = r.str("tag")
	m.Digest = r.digest("digest")
	m.Config = r.digest("config")
	m.Version = r.str("version")
	m.Created = r.time("created")
	m.Platforms = r.platforms("platforms")
	m.Source = r.str("source")
	m.Rule = r.str("rule")
	m.Reason = r.str("reason")
	m.AllowDowngrade = r.str("allow_downgrade")
	m.Restore = r.str("restore")
	for _, kv := range [][2]string{{"policy", m.Policy}, {"image", m.Image}, {"digest", m.Digest}, {"source", m.Source}} {
		k, v := kv[0], kv[1]
		if attr := a[k]; attr != nil && v == "" && !r.diags.HasErrors() {
			r.diags = append(r.diags, diag(attr.Expr.Range(), "Empty value in lock", "%s must not be empty. Run \"pin resolve\" to rewrite the lock.", k))
		}
	}
	if attr := a["source"]; attr != nil && m.Source != "" && m.Source != SourcePin && m.Source != SourceRunning && m.Source != SourceUpstream {
		r.diags = append(r.diags, diag(attr.Expr.Range(), "Invalid source", "source is %q, %q or %q; this lock says %q. Run \"pin resolve\" to rewrite it.", SourcePin, SourceRunning, SourceUpstream, m.Source))
	}
	for _, ob := range content.Blocks {
		oc, d := ob.Body.Content(observedSchema)
		diags = append(diags, d...)
		or := reader{attrs: oc.Attributes}
		m.Observed = append(m.Observed, Observation{
			Host:      ob.Labels[0],
			Container: or.str("container"),
			Tag:       or.str("tag"),
			Digest:    or.digest("digest"),
			ImageID:   or.digest("image_id"),
			Version:   or.str("version"),
			Created:   or.time("created"),
		})
		diags = append(diags, or.diags...)
	}
	return m, append(diags, r.diags...)
}

// reader reads attributes as literal strings, collecting diagnostics.
type reader struct {
	attrs hcl.Attributes
	diags hcl.Diagnostics
}

func (r *reader) str(k string) string {
	a := r.attrs[k]
	if a == nil {
		return ""
	}
	v, d := a.Expr.Value(nil)
	if d.HasErrors() {
		r.diags = append(r.diags, d...)
		return ""
	}
	if v.Type() != cty.String || v.IsNull() || !v.IsKnown() {
		r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid lock value", "%s must be a quoted string. Run \"pin resolve\" to rewrite the lock.", k))
		return ""
	}
	return v.AsString()
}

func (r *reader) digest(k string) string {
	s := r.str(k)
	if s == "" {
		return ""
	}
	if h, err := v1.NewHash(s); err != nil || h.Algorithm != "sha256" || h.String() != s {
		r.diags = append(r.diags, diag(r.attrs[k].Expr.Range(), "Invalid digest in lock", "%s must be sha256: followed by 64 lowercase hex digits; the lock says %q. Run \"pin resolve\" to rewrite it.", k, s))
		return ""
	}
	return s
}

func (r *reader) repository(k string) string {
	s := r.str(k)
	if s == "" {
		return ""
	}
	repo, err := name.NewRepository(s, name.StrictValidation)
	if err != nil || repo.Name() != s {
		want := ""
		if err == nil {
			want = fmt.Sprintf(" (%q)", repo.Name())
		}
		r.diags = append(r.diags, diag(r.attrs[k].Expr.Range(), "Image not in canonical form", "image must be the full repository name%s; the lock says %q. Run \"pin resolve\" to rewrite it.", want, s))
		return ""
	}
	return s
}

func (r *reader) time(k string) time.Time {
	s := r.str(k)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || formatTime(t) != s {
		r.diags = append(r.diags, diag(r.attrs[k].Expr.Range(), "Invalid date in lock", "%s must be an RFC 3339 date in UTC, such as \"2026-09-17T00:00:00Z\"; the lock says %q.", k, s))
		return time.Time{}
	}
	return t
}

func (r *reader) platforms(k string) map[string]string {
	a := r.attrs[k]
	if a == nil {
		return nil
	}
	v, d := a.Expr.Value(nil)
	if d.HasErrors() || !(v.Type().IsObjectType() || v.Type().IsMapType()) || v.IsNull() {
		r.diags = append(r.diags, d...)
		r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid platforms", "platforms must map \"os/arch\" to a digest. Run \"pin resolve\" to rewrite the lock."))
		return nil
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		kv, dv := it.Element()
		if kv.Type() != cty.String || dv.Type() != cty.String || dv.IsNull() {
			r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid platforms", "platforms must map \"os/arch\" to a digest."))
			return nil
		}
		h, err := v1.NewHash(dv.AsString())
		if err != nil || h.String() != dv.AsString() {
			r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid digest in lock", "platform %s has digest %q; write sha256: followed by 64 lowercase hex digits.", kv.AsString(), dv.AsString()))
			return nil
		}
		out[kv.AsString()] = dv.AsString()
	}
	return out
}

// Load reads the lockfile at path. A missing file is an empty lock.
func Load(path string) (*Lock, []byte, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil, nil
	}
	if err != nil {
		return &Lock{}, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read lockfile", Detail: err.Error() + "."}}
	}
	l, diags := Parse(src, path)
	return l, src, diags
}

// Save writes the lock to path atomically, and only when its bytes differ
// from what the file holds. It reports whether it wrote.
func Save(path string, l *Lock) (bool, error) {
	return WriteFile(path, Format(l))
}

// RemoveStale removes the temporary files that writes of the lock at path
// left in its folder when they were killed before renaming them (renameio
// names them "." + the lock's name + a random number), and returns the
// paths removed. Only call it while no write of that lock can be under way:
// pin holds a lock on the folder.
func RemoveStale(path string) ([]string, error) {
	dir, base := filepath.Dir(path), "."+filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), base)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// WriteFile is Save for a lock already formatted: b is Format's output,
// written atomically (a temporary file in the lock's own folder, renamed
// over it) and only when it differs from what the file holds.
func WriteFile(path string, b []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	if err := renameio.WriteFile(path, b, 0o644, renameio.WithExistingPermissions(), renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return false, fmt.Errorf("writing lockfile %s: %w", path, err)
	}
	return true, nil
}
