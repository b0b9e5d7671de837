package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"
)

// Seeding through the registry's API costs about 65 requests per
// repository, and distribution spends ~2 ms of CPU on each: 11,000
// repositories would take some 20 minutes. With -storage, pinbench writes
// the fleet straight into the registry's storage folder instead, in
// distribution's filesystem layout (docs/content/storage-drivers/ of
// distribution, registry/storage/paths.go):
//
//	docker/registry/v2/blobs/sha256/<first two hex>/<hex>/data
//	docker/registry/v2/repositories/<name>/_layers/sha256/<hex>/link
//	docker/registry/v2/repositories/<name>/_manifests/revisions/sha256/<hex>/link
//	docker/registry/v2/repositories/<name>/_manifests/tags/<tag>/current/link
//	docker/registry/v2/repositories/<name>/_manifests/tags/<tag>/index/sha256/<hex>/link
//
// A link file holds "sha256:<hex>", no newline. The registry reads these
// per request (its blob descriptor cache is filled lazily, in memory), so
// the files may be written while it runs, before anything asks for them.
// What it then serves is byte for byte what a push would have stored:
// the manifests and configs are the same bytes go-containerregistry
// pushes (TestStorageLayout reads them back through a real registry).

// writeStorage writes every image and tag of fleet under root, the
// registry's rootdirectory, workers repositories at a time.
func writeStorage(ctx context.Context, root string, fleet []*seeded, workers int, logf func(string, ...any)) (seedStats, error) {
	start := time.Now()
	w := &storageWriter{v2: filepath.Join(root, "docker", "registry", "v2"), dirs: map[string]bool{}}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var mu sync.Mutex
	var st seedStats
	for _, s := range fleet {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			n, files, err := w.project(s)
			if err != nil {
				return fmt.Errorf("writing %s: %w", s.p.Repo, err)
			}
			mu.Lock()
			st.Repos++
			st.Tags += len(s.p.Tags)
			st.Manifests += n.manifests
			st.Configs += n.configs
			st.Files += files
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	st.Took = time.Since(start)
	if err == nil {
		logf("%s", st)
	}
	return st, err
}

type storageWriter struct {
	v2   string
	mu   sync.Mutex
	dirs map[string]bool // folders made, and blobs written (by path)
}

// project writes one repository: its blobs, links and tags.
func (w *storageWriter) project(s *seeded) (n seedCounts, files int64, err error) {
	repo := filepath.Join(w.v2, "repositories", filepath.FromSlash(s.p.Repo))
	put := func(kind string, raw []byte, digest string) error {
		hex, ok := strings.CutPrefix(digest, "sha256:")
		if !ok {
			return fmt.Errorf("digest %q is not sha256", digest)
		}
		wrote, err := w.blob(hex, raw)
		if err != nil {
			return err
		}
		if wrote {
			files++
		}
		return w.link(filepath.Join(repo, kind, "sha256", hex, "link"), digest, &files)
	}
	layerDone := false
	manifest := func(img v1.Image) error {
		raw, err := img.RawManifest()
		if err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		cfg, err := img.RawConfigFile()
		if err != nil {
			return err
		}
		cd, err := img.ConfigName()
		if err != nil {
			return err
		}
		if err := put("_layers", cfg, cd.String()); err != nil {
			return err
		}
		n.configs++
		if !layerDone {
			layers, err := img.Layers()
			if err != nil {
				return err
			}
			for _, l := range layers {
				ld, err := l.Digest()
				if err != nil {
					return err
				}
				rc, err := l.Compressed()
				if err != nil {
					return err
				}
				b, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					return err
				}
				if err := put("_layers", b, ld.String()); err != nil {
					return err
				}
			}
			layerDone = true
		}
		n.manifests++
		return put(filepath.Join("_manifests", "revisions"), raw, d.String())
	}
	for _, bi := range s.images {
		for _, img := range bi.images {
			if err := manifest(img); err != nil {
				return n, files, err
			}
		}
		if idx, ok := bi.taggable.(v1.ImageIndex); ok {
			raw, err := idx.RawManifest()
			if err != nil {
				return n, files, err
			}
			if err := put(filepath.Join("_manifests", "revisions"), raw, bi.digest); err != nil {
				return n, files, err
			}
			n.manifests++
		}
	}
	for i, t := range s.p.Tags {
		d := s.images[s.p.TagImage[i]].digest
		tag := filepath.Join(repo, "_manifests", "tags", t)
		if err := w.link(filepath.Join(tag, "current", "link"), d, &files); err != nil {
			return n, files, err
		}
		hex := strings.TrimPrefix(d, "sha256:")
		if err := w.link(filepath.Join(tag, "index", "sha256", hex, "link"), d, &files); err != nil {
			return n, files, err
		}
	}
	return n, files, nil
}

// blob writes a blob's data once for the whole storage; wrote is false
// when another repository wrote it.
func (w *storageWriter) blob(hex string, raw []byte) (wrote bool, err error) {
	dir := filepath.Join(w.v2, "blobs", "sha256", hex[:2], hex)
	w.mu.Lock()
	done := w.dirs[dir]
	w.dirs[dir] = true
	w.mu.Unlock()
	if done {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(filepath.Join(dir, "data"), raw, 0o644)
}

// link writes a link file naming digest.
func (w *storageWriter) link(path, digest string, files *int64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	*files++
	return os.WriteFile(path, []byte(digest), 0o644)
}
