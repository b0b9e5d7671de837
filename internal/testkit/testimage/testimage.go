package testimage

import (
	"archive/tar"
	"bytes"
	"cmp"
	"io"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platform is an image's os/architecture/variant. The zero value means
// linux on the architecture of the test process.
type Platform struct {
	OS           string
	Architecture string
	Variant      string
}

// String formats p as os/arch[/variant].
func (p Platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

func (p Platform) orDefault() Platform {
	if p == (Platform{}) {
		return Platform{OS: "linux", Architecture: runtime.GOARCH}
	}
	return p
}

// Options describes an image for Build.
type Options struct {
	// Layer is the image's only layer; nil means a layer holding one file,
	// /content, whose text is Content.
	Layer   v1.Layer
	Content string
	// Created is the image's creation time; zero leaves it unset.
	Created    time.Time
	Labels     map[string]string
	Platform   Platform
	Entrypoint []string
}

// Build makes a one-layer image (Docker schema 2 media types) from opts.
func Build(t testing.TB, opts Options) v1.Image {
	t.Helper()
	layer := opts.Layer
	if layer == nil {
		layer = FileLayer(t, "content", 0o644, []byte(opts.Content))
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatalf("testimage: append layer: %v", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("testimage: read config: %v", err)
	}
	cf = cf.DeepCopy()
	p := opts.Platform.orDefault()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Entrypoint = opts.Entrypoint
	cf.Config.Labels = opts.Labels
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatalf("testimage: set config: %v", err)
	}
	if !opts.Created.IsZero() {
		if img, err = mutate.CreatedAt(img, v1.Time{Time: opts.Created}); err != nil {
			t.Fatalf("testimage: set created: %v", err)
		}
	}
	return img
}

// Index makes a multi-arch index of images, one manifest per platform, in a
// fixed order. Its media type follows the images': a Docker manifest list for
// Docker images, an OCI index otherwise.
func Index(t testing.TB, images map[Platform]v1.Image) v1.ImageIndex {
	t.Helper()
	platforms := slices.SortedFunc(maps.Keys(images), func(a, b Platform) int {
		return cmp.Or(cmp.Compare(a.OS, b.OS), cmp.Compare(a.Architecture, b.Architecture), cmp.Compare(a.Variant, b.Variant))
	})
	var idx v1.ImageIndex = empty.Index
	for i, p := range platforms {
		img := images[p]
		if i == 0 {
			mt, err := img.MediaType()
			if err != nil {
				t.Fatalf("testimage: media type of %s image: %v", p, err)
			}
			if mt == types.DockerManifestSchema2 {
				idx = mutate.IndexMediaType(idx, types.DockerManifestList)
			}
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{
				OS: p.OS, Architecture: p.Architecture, Variant: p.Variant,
			}},
		})
	}
	if _, err := idx.Digest(); err != nil {
		t.Fatalf("testimage: build index: %v", err)
	}
	return idx
}

// Push writes img (a v1.Image or a v1.ImageIndex) to ref over plain http and
// returns the pushed manifest's digest reference. auth, if given, is used
// instead of anonymous access.
func Push(t testing.TB, ref string, img remote.Taggable, auth ...authn.Authenticator) name.Digest {
	t.Helper()
	var opts []remote.Option
	if len(auth) > 0 {
		opts = append(opts, remote.WithAuth(auth[0]))
	}
	return push(t, ref, img, opts)
}

// PushTLS is Push to a registry served over TLS, through tr (such as
// testenv.TLSTransport's, which trusts the test CA and may present a
// client certificate).
func PushTLS(t testing.TB, ref string, img remote.Taggable, tr http.RoundTripper) name.Digest {
	t.Helper()
	return push(t, ref, img, []remote.Option{remote.WithTransport(tr)})
}

func push(t testing.TB, ref string, img remote.Taggable, opts []remote.Option) name.Digest {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatalf("testimage: parse %q: %v", ref, err)
	}
	var d v1.Hash
	switch x := img.(type) {
	case v1.ImageIndex:
		d, err = x.Digest()
	case v1.Image:
		d, err = x.Digest()
	default:
		t.Fatalf("testimage: push %s: %T is neither an image nor an index", ref, img)
	}
	if err != nil {
		t.Fatalf("testimage: digest for %s: %v", ref, err)
	}
	if err := remote.Push(r, img, opts...); err != nil {
		t.Fatalf("testimage: push %s: %v", ref, err)
	}
	return r.Context().Digest(d.String())
}

// FileLayer makes a reproducible layer holding one regular file at path
// (relative to /, owned by root, modified at the Unix epoch).
func FileLayer(t testing.TB, path string, mode int64, content []byte) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     path,
		Mode:     mode,
		Size:     int64(len(content)),
		ModTime:  time.Unix(0, 0),
	}
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatalf("testimage: tar header %s: %v", path, err)
	}
	if _, err := tw.Write(content); err != nil {
		t.Fatalf("testimage: tar %s: %v", path, err)
	}
	if err := tw.Close(); err != nil {
		t.Fatalf("testimage: tar %s: %v", path, err)
	}
	data := buf.Bytes()
	// LayerFromOpener gzips the tar itself; Go's gzip output is stable, so
	// the digest is too.
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.DockerLayer))
	if err != nil {
		t.Fatalf("testimage: layer %s: %v", path, err)
	}
	return layer
}

// PushRelease builds the image opts describes as version tag, labelled
// org.opencontainers.image.version=tag and created at midnight UTC on date
// (YYYY-MM-DD), pushes it to repo:tag over plain http, and returns its
// digest reference. opts' own Labels and Created are replaced.
func PushRelease(t testing.TB, repo, tag, date string, opts Options) name.Digest {
	t.Helper()
	created, err := time.Parse(time.DateOnly, date)
	if err != nil {
		t.Fatalf("testimage: release %s: date %q: %v", tag, date, err)
	}
	opts.Created = created
	opts.Labels = map[string]string{"org.opencontainers.image.version": tag}
	return Push(t, repo+":"+tag, Build(t, opts))
}
