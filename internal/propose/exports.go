package propose

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/export"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/lock"
)

// Exports are the files a repository keeps in step with its lock, written
// as "pin export" writes them, and committed with the lock: the
// catalogue's export block (read on the base), or what the command line
// names instead (catalogue.Export.Override).
type Exports = catalogue.Export

// ComposeExport is one Compose project to export to.
type ComposeExport = catalogue.ComposeExport

// mapPaths returns e with every path passed through f.
func mapPaths(e Exports, f func(string) (string, error)) (Exports, error) {
	out := e
	var err error
	each := func(in []string) []string {
		var o []string
		for _, p := range in {
			r, ferr := f(p)
			err = errors.Join(err, ferr)
			o = append(o, r)
		}
		return o
	}
	out.Compose = nil
	for _, c := range e.Compose {
		c.Files = each(c.Files)
		out.Compose = append(out.Compose, c)
	}
	out.Manifests = each(e.Manifests)
	out.Kustomize = each(e.Kustomize)
	out.Env = each(e.Env)
	return out, err
}

// exports are what the run writes: the flags' exports when they name a
// file, else the catalogue's export block as the base has it (cat was
// loaded in the work tree), with the flags' Compose settings; paths
// relative to the work tree, every one inside it.
func (r *run) exports(cat *catalogue.Catalogue) (Exports, error) {
	if r.paths.exports.Names() {
		return r.paths.exports, nil
	}
	e, err := cat.Export.Override(r.paths.exports)
	if err != nil {
		return e, fmt.Errorf("%w: --export-project-name, --export-profile or --export-in-place without --export-compose: %s", ErrBadInput, r.inRepo(err.Error()))
	}
	if !e.Names() {
		return e, nil
	}
	if diags := cat.Export.Check(); diags.HasErrors() {
		var msgs []string
		for _, d := range diags {
			msgs = append(msgs, fmt.Sprintf("%s:%d:%d: %s: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail))
		}
		return e, fmt.Errorf("%w: the export block on %s: %s", ErrBadInput, r.res.Base, r.inRepo(strings.Join(msgs, "; ")))
	}
	return mapPaths(e, func(p string) (string, error) {
		rel, err := filepath.Rel(r.wt, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			written, _ := filepath.Rel(filepath.Dir(cat.Export.DeclRange.Filename), p) // as the block has it
			return "", fmt.Errorf("%w: the export block at %s names %s, outside the repository: pin propose commits only files of the repository", ErrBadInput, r.inRepo(cat.Export.DeclRange.String()), written)
		}
		return rel, nil
	})
}

// exportFiles are the files the exports write for lock lk, in the work
// tree root (e's paths are relative to it), the references they write,
// and what they found: a reference whose tag and digest disagree
// (file:line).
func exportFiles(ctx context.Context, e Exports, root string, cat *catalogue.Catalogue, lk *lock.Lock) ([]export.File, []export.Entry, []export.Finding, error) {
	cov := export.NewCoverage(cat, lk)
	in := func(p string) string { return filepath.Join(root, p) }
	var results []export.Result
	for _, c := range e.Compose {
		files := make([]string, len(c.Files))
		for i, f := range c.Files {
			files[i] = in(f)
		}
		p, err := compose.Load(ctx, compose.Options{Files: files, ProjectName: c.ProjectName, Profiles: c.Profiles})
		if err != nil {
			return nil, nil, nil, inputError("compose export", err)
		}
		if c.InPlace {
			srcs, err := readAll(p.Files)
			if err != nil {
				return nil, nil, nil, err
			}
			r, err := export.InPlace(p, cov, srcs)
			if err != nil {
				return nil, nil, nil, inputError("compose export", err)
			}
			results = append(results, r)
		} else {
			old, err := readIfExists(export.OverridePath(p.Files[0]))
			if err != nil {
				return nil, nil, nil, err
			}
			results = append(results, export.Override(p, cov, old))
		}
	}
	for _, dir := range e.Manifests {
		files, err := manifestFiles(in(dir))
		if err != nil {
			return nil, nil, nil, err
		}
		srcs, err := readAll(files)
		if err != nil {
			return nil, nil, nil, err
		}
		r, err := export.Manifests(cov, files, srcs)
		if err != nil {
			return nil, nil, nil, inputError("manifests export", err)
		}
		results = append(results, r)
	}
	for _, dir := range e.Kustomize {
		files, err := manifestFiles(in(dir))
		if err != nil {
			return nil, nil, nil, err
		}
		var refs []imageref.Ref
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, nil, nil, inputError("kustomize export", err)
			}
			r, _, err := imageref.ManifestRefs(f, b)
			if err != nil {
				return nil, nil, nil, inputError("kustomize export", err)
			}
			refs = append(refs, r...)
		}
		path := filepath.Join(in(dir), "kustomization.yaml")
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, nil, inputError("kustomize export", err)
		}
		r, err := export.Kustomize(path, cov, refs, old)
		if err != nil {
			return nil, nil, nil, inputError("kustomize export", err)
		}
		results = append(results, r)
	}
	for _, f := range e.Env {
		old, err := readIfExists(in(f))
		if err != nil {
			return nil, nil, nil, err
		}
		results = append(results, export.Env(in(f), cov, old))
	}
	var files []export.File
	var entries []export.Entry
	var findings []export.Finding
	seen := map[string]bool{}
	for _, r := range results {
		entries = append(entries, r.Entries...)
		for _, f := range r.Files {
			if !seen[f.Path] {
				seen[f.Path] = true
				files = append(files, f)
			}
		}
		findings = append(findings, r.Findings...)
	}
	slices.SortFunc(files, func(a, b export.File) int { return strings.Compare(a.Path, b.Path) })
	return files, entries, findings, nil
}

func inputError(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrBadInput, what, err)
}

func readAll(paths []string) (map[string][]byte, error) {
	srcs := make(map[string][]byte, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, inputError("export", err)
		}
		srcs[p] = b
	}
	return srcs, nil
}

func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, inputError("export", err)
	}
	return b, nil
}

// manifestFiles are the YAML files under dir, kustomizations left out, as
// pin export and pin init read a folder of manifests.
func manifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := filepath.Ext(p)
		b := filepath.Base(p)
		if d.IsDir() || (ext != ".yaml" && ext != ".yml") || b == "kustomization.yaml" || b == "kustomization.yml" || b == "Kustomization" {
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, inputError("reading manifests", err)
	}
	slices.Sort(files)
	return files, nil
}
