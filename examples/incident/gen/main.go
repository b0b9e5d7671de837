// Command gen writes the incident example: an OCI layout with the images of
// forge, the package registry and the analytics service, and a snapshot of
// host mesh-1 running the newer builds. Everything is deterministic: the
// same program writes the same bytes.
package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/pin-tool/pin/internal/host"
)

const (
	forge     = "registry.example.org/forge/forgejo"
	packages  = "registry.example.org/packages/registry"
	analytics = "registry.example.org/analytics/web"
)

func main() {
	if err := run("registry", "mesh-1.json"); err != nil {
		log.Fatal(err)
	}
}

type built struct {
	img      v1.Image
	digest   string // what the layout index points at (index digest for multi-arch)
	configID string // config digest of linux/amd64: the classic store's image ID
}

func run(layoutDir, snapshotPath string) error {
	if err := os.RemoveAll(layoutDir); err != nil {
		return err
	}
	p, err := layout.Write(layoutDir, empty.Index)
	if err != nil {
		return err
	}
	add := func(repo, tag string, b built, idx v1.ImageIndex) error {
		ann := map[string]string{}
		if tag != "" {
			ann["io.containerd.image.name"] = repo + ":" + tag
			ann["org.opencontainers.image.ref.name"] = tag
		}
		if idx != nil {
			return p.AppendIndex(idx, layout.WithAnnotations(ann))
		}
		return p.AppendImage(b.img, layout.WithAnnotations(ann))
	}
	images := map[string]built{}

	forgeVersions := []struct {
		v    string
		date string
	}{{"1.22.6", "2024-12-12"}, {"1.23.5", "2025-03-02"}, {"1.24.2", "2025-06-10"}, {"1.25.1", "2025-09-20"}, {"1.26.1", "2026-03-04"}, {"1.27.3", "2026-09-01"}}
	for _, fv := range forgeVersions {
		if fv.v == "1.27.3" {
			// The newest forge is multi-platform: an index of two images.
			amd := mustImage(forge, fv.v, fv.date, "amd64")
			arm := mustImage(forge, fv.v, fv.date, "arm64")
			idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
				mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
				mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}}},
			)
			d, err := idx.Digest()
			if err != nil {
				return err
			}
			b := built{img: amd, digest: d.String(), configID: configDigest(amd)}
			images[forge+":"+fv.v] = b
			if err := add(forge, fv.v, b, idx); err != nil {
				return err
			}
			continue
		}
		b := single(forge, fv.v, fv.date)
		images[forge+":"+fv.v] = b
		if err := add(forge, fv.v, b, nil); err != nil {
			return err
		}
	}
	for i, v := range []string{"6.10.1", "6.10.2", "6.10.3"} {
		b := single(packages, v, fmt.Sprintf("2026-0%d-15", 6+i))
		images[packages+":"+v] = b
		if err := add(packages, v, b, nil); err != nil {
			return err
		}
	}
	// analytics has no version at all: only build dates. The registry's
	// "latest" moved from the 2026-08-20 build to the 2026-09-17 one; the
	// older build stays reachable by digest.
	old := single(analytics, "", "2026-08-20")
	cur := single(analytics, "", "2026-09-17")
	if err := add(analytics, "", old, nil); err != nil {
		return err
	}
	if err := add(analytics, "latest", cur, nil); err != nil {
		return err
	}

	snap := host.Snapshot{Schema: host.SnapshotSchema, Host: "mesh-1", ImageStore: "classic"}
	running := []struct {
		name, ref string
		b         built
	}{
		{"forgejo", forge + ":1.27.3", images[forge+":1.27.3"]},
		{"packages", packages + ":6.10.3", images[packages+":6.10.3"]},
		{"analytics", analytics + ":latest", cur},
	}
	for i, r := range running {
		repo := r.ref[:len(r.ref)-len(tagOf(r.ref))-1]
		snap.Containers = append(snap.Containers, host.Container{
			ID: fmt.Sprintf("%064x", i+1), Name: r.name, Image: r.ref, ImageID: r.b.configID, State: "running",
		})
		cf, err := r.b.img.ConfigFile()
		if err != nil {
			return err
		}
		snap.Images = append(snap.Images, host.Image{
			ID: r.b.configID, RepoTags: []string{r.ref}, RepoDigests: []string{repo + "@" + r.b.digest},
			Created: cf.Created.Time.UTC(), Labels: cf.Config.Labels, OS: cf.OS, Arch: cf.Architecture,
		})
	}
	out, err := snap.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(snapshotPath, out, 0o644); err != nil {
		return err
	}
	for _, k := range []string{forge + ":1.22.6", packages + ":6.10.1"} {
		fmt.Printf("%s@%s\n", k, images[k].digest)
	}
	fmt.Printf("%s (2026-08-20 build)@%s\n", analytics, old.digest)
	return nil
}

func tagOf(ref string) string {
	for i := len(ref) - 1; i >= 0; i-- {
		if ref[i] == ':' {
			return ref[i+1:]
		}
	}
	return ""
}

func single(repo, version, date string) built {
	img := mustImage(repo, version, date, "amd64")
	d, err := img.Digest()
	if err != nil {
		log.Fatal(err)
	}
	return built{img: img, digest: d.String(), configID: configDigest(img)}
}

func configDigest(img v1.Image) string {
	h, err := img.ConfigName()
	if err != nil {
		log.Fatal(err)
	}
	return h.String()
}

// mustImage builds a one-layer image whose only file says what it is.
func mustImage(repo, version, date, arch string) v1.Image {
	created, err := time.Parse("2006-01-02", date)
	if err != nil {
		log.Fatal(err)
	}
	content := fmt.Sprintf("%s %s built %s for linux/%s\n", repo, version, date, arch)
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarOf("/etc/build-info", content))), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		log.Fatal(err)
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		log.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	if arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   filepath.Base(repo),
		"org.opencontainers.image.created": created.Format(time.RFC3339),
	}
	if version != "" {
		cf.Config.Labels["org.opencontainers.image.version"] = version
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		log.Fatal(err)
	}
	img, err = mutate.CreatedAt(img, v1.Time{Time: created})
	if err != nil {
		log.Fatal(err)
	}
	return img
}

func tarOf(name, content string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	_ = tw.WriteHeader(&tar.Header{Name: name[1:], Mode: 0o644, Size: int64(len(content)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX})
	_, _ = tw.Write([]byte(content))
	_ = tw.Close()
	return buf.Bytes()
}
