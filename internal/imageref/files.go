package imageref

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ManifestFiles lists the YAML files under dir, sorted, leaving out
// kustomization files (they configure kustomize; they are not objects).
func ManifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := filepath.Ext(p)
		if d.IsDir() || (ext != ".yaml" && ext != ".yml") || isKustomization(p) {
			return nil
		}
		files = append(files, p)
		return nil
	})
	slices.Sort(files)
	return files, err
}

func isKustomization(p string) bool {
	b := filepath.Base(p)
	return b == "kustomization.yaml" || b == "kustomization.yml" || b == "Kustomization"
}

// ReadManifests reads the container images of the manifests under dir,
// and the kind of each object ("deployment/forge" → "Deployment"). A file
// that is not YAML, or a document that is not a Kubernetes object, is an
// error naming file:line.
func ReadManifests(dir string) ([]Ref, map[string]string, error) {
	files, err := ManifestFiles(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading manifests: %w", err)
	}
	var refs []Ref
	kinds := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		r, objs, err := ManifestRefs(f, b)
		if err != nil {
			return nil, nil, err
		}
		for _, o := range objs {
			kinds[strings.ToLower(o.Kind)+"/"+o.Name] = o.Kind
		}
		refs = append(refs, r...)
	}
	return refs, kinds, nil
}
