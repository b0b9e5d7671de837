package propose

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/export"
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
	// The flags' files as named (less the Compose project of no file:
	// --export-env alone names none), else the block.
	e, err := cat.Export.Override(r.paths.exports)
	if err != nil {
		return e, fmt.Errorf("%w: --export-project-name, --export-profile or --export-in-place without --export-compose: %s", ErrBadInput, r.inRepo(err.Error()))
	}
	if r.paths.exports.Names() {
		return e, nil
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
// tree root (e's paths are relative to it), sorted, the references they
// write, and what they found: a reference whose tag and digest disagree
// (file:line). They are read as pin export reads them (export.Read).
func exportFiles(ctx context.Context, e Exports, root string, cat *catalogue.Catalogue, lk *lock.Lock) ([]export.File, []export.Entry, []export.Finding, error) {
	var projects []*compose.Project
	for _, c := range e.Compose {
		files := make([]string, len(c.Files))
		for i, f := range c.Files {
			files[i] = filepath.Join(root, f)
		}
		p, err := compose.Load(ctx, compose.Options{Files: files, ProjectName: c.ProjectName, Profiles: c.Profiles})
		if err != nil {
			return nil, nil, nil, inputError("compose export", err)
		}
		projects = append(projects, p)
	}
	res, err := export.Read(export.Request{Exports: e, Projects: projects, Root: root}, export.NewCoverage(cat, lk))
	var ie *export.InputError
	if errors.As(err, &ie) {
		return nil, nil, nil, inputError(ie.What, ie.Err)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	slices.SortFunc(res.Files, func(a, b export.File) int { return strings.Compare(a.Path, b.Path) })
	return res.Files, res.Entries, res.Findings, nil
}

func inputError(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrBadInput, what, err)
}
