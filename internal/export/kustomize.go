package export

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/pin-tool/pin/internal/imageref"
)

// KustomizeImage is one entry of a kustomization's images: list.
type KustomizeImage struct {
	Name    string `yaml:"name"`
	NewName string `yaml:"newName,omitempty"`
	NewTag  string `yaml:"newTag,omitempty"`
	Digest  string `yaml:"digest,omitempty"`
}

// Kustomize writes into kustomization.yaml (path, bytes old) an images:
// entry for each image the manifests refs name that a module covers:
// name as the manifests write the repository, newName the same, newTag
// and digest the lock's. Entries for other images are kept; the list is
// sorted by name and replaces the file's images: block (comments inside
// that block are not kept), every other line is kept.
func Kustomize(path string, cov *Coverage, refs []imageref.Ref, old []byte) (Result, error) {
	var r Result
	top, err := topLevelImages(path, old)
	if err != nil {
		return r, err
	}
	byName := map[string]KustomizeImage{}
	for _, e := range top.entries {
		byName[e.Name] = e
	}
	seen := map[string]string{} // image name → the digest written
	for _, ref := range refs {
		m, why := cov.Workload(ref.Object, ref.Container, ref.Value)
		e := r.locked(cov, m, why, containerOf(ref), ref.Where(), ref.Value)
		if e == nil {
			continue
		}
		n := repoAsWritten(ref.Value)
		k := KustomizeImage{Name: n, NewName: n, NewTag: e.Tag, Digest: e.Digest}
		if d, ok := seen[n]; ok {
			if d != e.Digest {
				return r, fmt.Errorf("%s: image %s is covered by modules locked at different digests; kustomize sets one per image name", ref.Where(), n)
			}
			continue
		}
		seen[n] = e.Digest
		old := byName[n]
		byName[n] = k
		r.Entries = append(r.Entries, Entry{Where: path + ", images " + n, Module: m.Name, Old: describe(old), New: describe(k)})
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	var block bytes.Buffer
	block.WriteString("images:\n")
	for _, n := range names {
		e := byName[n]
		fmt.Fprintf(&block, "- name: %s\n", e.Name)
		if e.NewName != "" {
			fmt.Fprintf(&block, "  newName: %s\n", e.NewName)
		}
		if e.NewTag != "" {
			fmt.Fprintf(&block, "  newTag: %q\n", e.NewTag)
		}
		if e.Digest != "" {
			fmt.Fprintf(&block, "  digest: %s\n", e.Digest)
		}
	}
	lines := bytes.SplitAfter(old, []byte("\n"))
	var out []byte
	if top.start < 0 {
		out = slices.Clone(old)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(out, block.Bytes()...)
	} else {
		out = append(out, bytes.Join(lines[:top.start], nil)...)
		out = append(out, block.Bytes()...)
		out = append(out, bytes.Join(lines[top.end:], nil)...)
	}
	sortEntries(r.Entries)
	r.Files = append(r.Files, File{Path: path, Bytes: out, Old: old})
	return r, nil
}

func describe(k KustomizeImage) string {
	if k.Name == "" {
		return ""
	}
	s := k.NewName
	if s == "" {
		s = k.Name
	}
	if k.NewTag != "" {
		s += ":" + k.NewTag
	}
	if k.Digest != "" {
		s += "@" + k.Digest
	}
	return s
}

// imagesBlock is the top-level images: block of a kustomization: its
// entries and its lines [start, end) (start -1 when absent).
type imagesBlock struct {
	entries    []KustomizeImage
	start, end int
}

func topLevelImages(path string, src []byte) (imagesBlock, error) {
	b := imagesBlock{start: -1}
	var doc struct {
		Images []KustomizeImage `yaml:"images"`
	}
	if _, err := imageref.Parse(path, src); err != nil {
		return b, err
	}
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return b, fmt.Errorf("%s: not a kustomization: %w", path, err)
	}
	b.entries = doc.Images
	lines := strings.SplitAfter(string(src), "\n")
	for i, l := range lines {
		if b.start < 0 {
			if strings.HasPrefix(l, "images:") {
				b.start, b.end = i, len(lines)
			}
			continue
		}
		t := strings.TrimRight(l, "\r\n")
		if t != "" && t[0] != ' ' && t[0] != '-' && t[0] != '#' && t[0] != '\t' {
			b.end = i
			break
		}
	}
	return b, nil
}
