package observe

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
)

// indexDescriber serves one index: asked by its digest, it answers with
// the index's platforms and, as a registry does, the build of the platform
// asked for. It counts what it is asked.
type indexDescriber struct {
	index string
	img   image.Image
	asked int
}

func (d *indexDescriber) Image(_ context.Context, repo, ref, _ string) (image.Image, error) {
	d.asked++
	if ref != d.index {
		return image.Image{}, fmt.Errorf("%s@%s: %w", repo, ref, image.ErrNotFound)
	}
	return d.img, nil
}

// TestEnrichContainerdIndex: Docker's containerd store names an image by
// its index digest and says its platform's date and labels, not the
// index's platforms. Enrich asks for those (once per digest) and keeps
// what the host said of its own build, so that the same build run by its
// platform manifest's digest elsewhere is recognised as the same content.
func TestEnrichContainerdIndex(t *testing.T) {
	const index = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	platforms := map[string]string{
		"linux/amd64": "sha256:2222222222222222222222222222222222222222222222222222222222222222",
		"linux/arm64": "sha256:3333333333333333333333333333333333333333333333333333333333333333",
	}
	hostDate := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	d := &indexDescriber{index: index, img: image.Image{Digest: index, Platforms: platforms, Platform: "linux/amd64",
		Created: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Labels: map[string]string{image.LabelVersion: "9.9.9"}}}
	m := &catalogue.Module{Name: "svc", Image: "registry.example.org/svc"}
	run := func(h string) Observation {
		return Observation{Host: h, Container: "svc", Image: image.Image{Repository: m.Image, Tag: "1.27.3", Digest: index, ImageID: index,
			Platform: "linux/arm64", Created: hostDate, Labels: map[string]string{image.LabelVersion: "1.27.3"}}}
	}
	obs := []Observation{run("h1"), run("h2")}
	if err := Enrich(context.Background(), d, m, obs); err != nil {
		t.Fatal(err)
	}
	if d.asked != 1 {
		t.Errorf("asked %d times for one digest, want 1", d.asked)
	}
	for _, o := range obs {
		if !maps.Equal(o.Image.Platforms, platforms) {
			t.Errorf("%s: platforms %v, want the index's", o.Where(), o.Image.Platforms)
		}
		if o.Image.Platform != "linux/arm64" || !o.Image.Created.Equal(hostDate) || o.Image.VersionLabel() != "1.27.3" {
			t.Errorf("%s: the host's own build was overwritten: %s %s %s", o.Where(), o.Image.Platform, o.Image.Created, o.Image.VersionLabel())
		}
	}

	// A classic-store image (its ID a config digest) is not asked about.
	classic := []Observation{run("h3")}
	classic[0].Image.ImageID = "sha256:4444444444444444444444444444444444444444444444444444444444444444"
	if err := Enrich(context.Background(), d, m, classic); err != nil || d.asked != 1 || classic[0].Image.Platforms != nil {
		t.Errorf("classic store: err %v, asked %d, platforms %v", err, d.asked, classic[0].Image.Platforms)
	}
}
