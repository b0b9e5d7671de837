package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// world is a folder with an OCI layout mirror ("registry") and snapshot
// hosts, built from images whose bytes depend only on what they are
// given: the plans printed over it are the same on every run, for golden
// files.
type world struct {
	t     *testing.T
	dir   string
	p     layout.Path
	hosts map[string]*host.Snapshot
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	p, err := layout.Write(filepath.Join(dir, "registry"), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, dir: dir, p: p, hosts: map[string]*host.Snapshot{}}
}

// built is an image of the world.
type built struct {
	img    v1.Image
	digest string
	config string
}

// build makes a linux/amd64 image: content tells images apart, version
// (when not "") is its version label, created its build date (RFC 3339).
func (w *world) build(content, version, created string) built {
	w.t.Helper()
	o := testimage.Options{Content: content, Platform: testimage.Platform{OS: "linux", Architecture: "amd64"}}
	if version != "" {
		o.Labels = map[string]string{image.LabelVersion: version}
	}
	if created != "" {
		c, err := time.Parse(time.RFC3339Nano, created)
		if err != nil {
			w.t.Fatal(err)
		}
		o.Created = c
	}
	img := testimage.Build(w.t, o)
	return built{img: img, digest: digestOf(w.t, img), config: configOf(w.t, img)}
}

// tag puts b in the mirror as repo:tag.
func (w *world) tag(repo, tag string, b built) {
	w.t.Helper()
	if err := w.p.AppendImage(b.img, layout.WithAnnotations(map[string]string{"io.containerd.image.name": repo + ":" + tag})); err != nil {
		w.t.Fatal(err)
	}
}

// run makes host h run b in a container name, started from ref (a
// "repo:tag"), the engine knowing it as repo@digest.
func (w *world) run(h, name, repo, ref string, b built) {
	w.t.Helper()
	s := w.hosts[h]
	if s == nil {
		s = &host.Snapshot{Schema: 1, Host: h, ImageStore: "classic"}
		w.hosts[h] = s
	}
	cf, err := b.img.ConfigFile()
	if err != nil {
		w.t.Fatal(err)
	}
	s.Containers = append(s.Containers, host.Container{ID: fmt.Sprintf("%064d", len(s.Containers)+1), Name: name, Image: ref, ImageID: b.config, State: "running"})
	s.Images = append(s.Images, host.Image{ID: b.config, RepoTags: []string{ref}, RepoDigests: []string{repo + "@" + b.digest},
		Created: cf.Created.Time, Labels: cf.Config.Labels, OS: "linux", Arch: "amd64"})
}

// rename renames container from to to on host h, as a container
// recreated under another name.
func (w *world) rename(h, from, to string) {
	w.t.Helper()
	for i, c := range w.hosts[h].Containers {
		if c.Name == from {
			w.hosts[h].Containers[i].Name = to
			return
		}
	}
	w.t.Fatalf("no container %s on %s", from, h)
}

// write writes the snapshots and the catalogue: a host block per host
// (snapshot = "<host>.json"), the registry blocks of registries (each
// mirrored by the layout), then modules, as written.
func (w *world) write(registries []string, modules string) {
	w.t.Helper()
	cat := ""
	for _, h := range slices.Sorted(maps.Keys(w.hosts)) {
		b, err := w.hosts[h].Marshal()
		if err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.dir, h+".json"), b, 0o644); err != nil {
			w.t.Fatal(err)
		}
		cat += fmt.Sprintf("host %q {\n  snapshot = %q\n}\n\n", h, h+".json")
	}
	for _, r := range registries {
		cat += fmt.Sprintf("registry %q {\n  mirror = \"registry\"\n}\n\n", r)
	}
	writeFile(w.t, filepath.Join(w.dir, "catalogue.hcl"), cat+modules)
}
