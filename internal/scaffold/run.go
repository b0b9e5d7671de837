package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/helmvalues"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/imageref"
)

// DefaultPlatform is the platform whose digest a tag is pinned at when
// nothing says another: no --platform, and no host read whose images
// agree on one.
const DefaultPlatform = "linux/amd64"

// Current is the catalogue init adds to, as it is.
type Current struct {
	// Target is the file init writes: the catalogue file, or init.hcl in
	// a catalogue folder.
	Target string
	// Files are the catalogue's files as read (none when it does not
	// exist yet); Catalogue what they load (nil then).
	Files     []catalogue.Source
	Catalogue *catalogue.Catalogue
}

// DiagnosticsError is a catalogue that does not load: as it is (Open), or
// with the modules init would add (Run). Files are the sources the
// diagnostics point into.
type DiagnosticsError struct {
	Msg         string
	Files       map[string]*hcl.File
	Diagnostics hcl.Diagnostics
}

func (e *DiagnosticsError) Error() string { return e.Msg }

// DigestError is a digest the registries could not give (--digest).
type DigestError struct{ Err error }

func (e *DigestError) Error() string { return e.Err.Error() }
func (e *DigestError) Unwrap() error { return e.Err }

// Open reads the catalogue at path: a file, or a folder of *.hcl files.
// An absent path is an empty catalogue, written at path. A catalogue with
// errors is a *DiagnosticsError.
func Open(path string) (*Current, error) {
	target, srcs, err := catalogueFiles(path)
	if err != nil {
		return nil, err
	}
	cur := &Current{Target: target, Files: srcs}
	if len(srcs) > 0 {
		c, diags := catalogue.Parse(srcs...)
		if diags.HasErrors() {
			return nil, &DiagnosticsError{Msg: fmt.Sprintf("catalogue %s has errors", path), Files: c.Files, Diagnostics: diags}
		}
		cur.Catalogue = c
	}
	return cur, nil
}

// ParsePolicy checks the policy of the modules from Compose files and
// manifests.
func ParsePolicy(s string) (catalogue.Policy, error) {
	policy := catalogue.Policy(s)
	if !slices.Contains(catalogue.Policies, policy) {
		return "", fmt.Errorf("--policy %q: write at-least-running, track-upstream or exact", s)
	}
	return policy, nil
}

// CheckHost says what to write when h, the host Compose services and
// manifests run on, is not in the catalogue.
func (c *Current) CheckHost(h string) error {
	if h != "" && (c.Catalogue == nil || c.Catalogue.Host(h) == nil) {
		return fmt.Errorf("--host %s: the catalogue has no host %q; add host %q { docker = \"unix:///var/run/docker.sock\" } first", h, h, h)
	}
	return nil
}

// Found is what init read to add modules from: what a host runs, a
// Compose project, the images of manifests (with their objects' kinds).
type Found struct {
	FromHost  string
	Snapshot  *host.Snapshot
	Project   *compose.Project
	Manifests []imageref.Ref
	Kinds     map[string]string
	// Charts are Helm charts whose values' images to add.
	Charts []*helmvalues.Chart
}

// Options say how init adds modules.
type Options struct {
	// Host is the catalogue host Compose services and manifests run on
	// ("": none); Policy their policy.
	Host   string
	Policy catalogue.Policy
	// Digests, when not nil, pins each tag at the digest it names now
	// (--digest).
	Digests Resolver
}

// Report is what init added, and skipped.
type Report struct {
	Target  string
	Added   []Candidate
	Skipped []Skip
	Written bool
}

// Run adds to the catalogue cur a module for each image found that no
// module covers yet: candidates from the host, the Compose project and the
// manifests, pinned at their digests when o.Digests says so, planned
// against the catalogue, appended to the target file's bytes, checked to
// load with the whole catalogue, and written only while the file still
// holds the bytes read (an edit made meanwhile is never lost). A
// candidate init cannot make is an error of the input; so is a result
// that does not load (a *DiagnosticsError); a digest not had a
// *DigestError.
func Run(ctx context.Context, cur *Current, f Found, o Options) (*Report, error) {
	var cands []Candidate
	var skips []Skip
	if f.FromHost != "" {
		c, sk := FromHost(cur.Catalogue, f.FromHost, f.Snapshot)
		cands, skips = append(cands, c...), append(skips, sk...)
	}
	if f.Project != nil {
		c, sk, err := FromCompose(f.Project, o.Host, o.Policy)
		if err != nil {
			return nil, err
		}
		cands, skips = append(cands, c...), append(skips, sk...)
	}
	if f.Manifests != nil || f.Kinds != nil {
		c, sk, err := FromManifests(f.Manifests, f.Kinds, o.Host, o.Policy)
		if err != nil {
			return nil, err
		}
		cands, skips = append(cands, c...), append(skips, sk...)
	}
	for _, ch := range f.Charts {
		c, sk, err := FromHelm(cur.Catalogue, ch, o.Policy)
		if err != nil {
			return nil, err
		}
		cands, skips = append(cands, c...), append(skips, sk...)
	}
	if o.Digests != nil {
		if err := AddDigests(ctx, cands, o.Digests); err != nil {
			return nil, &DigestError{Err: err}
		}
	}
	add, more := Plan(cur.Catalogue, cands)
	var old []byte
	for _, src := range cur.Files {
		if src.Filename == cur.Target {
			old = src.Bytes
		}
	}
	add, bad := cur.loadable(old, add)
	rep := &Report{Target: cur.Target, Added: add, Skipped: append(append(skips, more...), bad...)}
	rendered := Render(old, add)
	// What is written must load: check the whole catalogue with it.
	next := slices.DeleteFunc(slices.Clone(cur.Files), func(src catalogue.Source) bool { return src.Filename == cur.Target })
	next = append(next, catalogue.Source{Filename: cur.Target, Bytes: rendered})
	if c, diags := catalogue.Parse(next...); diags.HasErrors() {
		return nil, &DiagnosticsError{Msg: "the modules init would add do not load; nothing written", Files: c.Files, Diagnostics: diags}
	}
	if len(add) == 0 {
		return rep, nil
	}
	if _, err := atomicfile.Write(cur.Target, rendered, atomicfile.Options{Since: &old}); err != nil {
		switch {
		case errors.Is(err, atomicfile.ErrChanged):
			err = fmt.Errorf("%w: it changed while pin init ran; run pin init again", err)
		case errors.Is(err, atomicfile.ErrDanglingLink):
			err = fmt.Errorf("%w: create the file it names, or remove the link", err)
		}
		return nil, fmt.Errorf("writing catalogue %w; nothing written", err)
	}
	rep.Written = true
	return rep, nil
}

// loadable keeps of add the candidates whose module loads with the
// catalogue (appended alone to old, the target's bytes); each other is a
// skip left out, saying what the catalogue would say of its module and
// where it was read: one service init cannot write never stops the
// others.
func (c *Current) loadable(old []byte, add []Candidate) (ok []Candidate, bad []Skip) {
	others := slices.DeleteFunc(slices.Clone(c.Files), func(src catalogue.Source) bool { return src.Filename == c.Target })
	for _, cand := range add {
		next := append(slices.Clone(others), catalogue.Source{Filename: c.Target, Bytes: Render(old, []Candidate{cand})})
		_, diags := catalogue.Parse(next...)
		if !diags.HasErrors() {
			ok = append(ok, cand)
			continue
		}
		var says []string
		for _, d := range diags {
			if d.Severity == hcl.DiagError {
				says = append(says, d.Summary+": "+d.Detail)
			}
		}
		bad = append(bad, Skip{What: cand.From, Left: true, Why: "pin init cannot write a module that loads for it: " + strings.Join(says, " ")})
	}
	return ok, bad
}

// Left counts what was read and left out of the catalogue.
func (r *Report) Left() int {
	n := 0
	for _, s := range r.Skipped {
		if s.Left {
			n++
		}
	}
	return n
}

// Platform is the platform whose digest a tag is pinned at: the one
// given (--platform), else the one every running container of the host
// read runs an image of, else DefaultPlatform.
func Platform(given string, s *host.Snapshot) string {
	if given != "" {
		return given
	}
	seen := ""
	if s != nil {
		for _, c := range s.Containers {
			img, ok := s.Image(c.ImageID)
			if !c.Running() || !ok || img.Platform() == "" {
				continue
			}
			if seen != "" && seen != img.Platform() {
				return DefaultPlatform
			}
			seen = img.Platform()
		}
	}
	if seen == "" {
		return DefaultPlatform
	}
	return seen
}

// catalogueFiles returns the file init writes to (the catalogue file, or
// init.hcl in a catalogue folder) and the catalogue's files as they are
// (none when it does not exist yet).
func catalogueFiles(path string) (string, []catalogue.Source, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil, nil
	case err != nil:
		return "", nil, err
	case !fi.IsDir():
		b, err := os.ReadFile(path)
		if err != nil {
			return "", nil, err
		}
		return path, []catalogue.Source{{Filename: path, Bytes: b}}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.hcl"))
	if err != nil {
		return "", nil, err
	}
	slices.Sort(files)
	var srcs []catalogue.Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", nil, err
		}
		srcs = append(srcs, catalogue.Source{Filename: f, Bytes: b})
	}
	return filepath.Join(path, "init.hcl"), srcs, nil
}
