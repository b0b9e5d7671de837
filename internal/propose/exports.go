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
// as "pin export" writes them, and committed with the lock.
type Exports struct {
	// Compose, when it names files, is one Compose project: its override
	// (compose.pin.yaml beside the first file) is written, or with
	// InPlace the files' own image: values.
	Compose ComposeExport
	// Manifests are folders of Kubernetes manifests rewritten in place.
	Manifests []string
	// Kustomize are folders whose kustomization.yaml gets images: entries.
	Kustomize []string
	// Env are env files of NAME_IMAGE= lines.
	Env []string
}

// ComposeExport is one Compose project to export to.
type ComposeExport struct {
	// Files are merged in order, as Compose merges them.
	Files       []string
	ProjectName string
	Profiles    []string
	InPlace     bool
}

// empty reports whether no export is declared.
func (e Exports) empty() bool {
	return len(e.Compose.Files) == 0 && len(e.Manifests) == 0 && len(e.Kustomize) == 0 && len(e.Env) == 0
}

// mapPaths returns e with every path passed through f.
func (e Exports) mapPaths(f func(string) (string, error)) (Exports, error) {
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
	out.Compose.Files = each(e.Compose.Files)
	out.Manifests = each(e.Manifests)
	out.Kustomize = each(e.Kustomize)
	out.Env = each(e.Env)
	return out, err
}

// exportFiles are the files the exports write for lock lk, in the work
// tree root (e's paths are relative to it), the references they write,
// and what they found: a reference whose tag and digest disagree
// (file:line).
func (e Exports) exportFiles(ctx context.Context, root string, cat *catalogue.Catalogue, lk *lock.Lock) ([]export.File, []export.Entry, []export.Finding, error) {
	cov := export.NewCoverage(cat, lk)
	in := func(p string) string { return filepath.Join(root, p) }
	var results []export.Result
	if len(e.Compose.Files) > 0 {
		files := make([]string, len(e.Compose.Files))
		for i, f := range e.Compose.Files {
			files[i] = in(f)
		}
		p, err := compose.Load(ctx, compose.Options{Files: files, ProjectName: e.Compose.ProjectName, Profiles: e.Compose.Profiles})
		if err != nil {
			return nil, nil, nil, inputError("compose export", err)
		}
		if e.Compose.InPlace {
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
