package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"
)

// builtImage is an imageSpec made into real content: an image, or an
// index of one image per architecture.
type builtImage struct {
	taggable remote.Taggable
	digest   string
	// images are the platform images (one for a plain image).
	images []v1.Image
	// configDigest and manifestDigest of the linux/amd64 image.
	configDigest   string
	amd64          v1.Image
	amd64Manifest  string
	childManifests []string
}

// builder makes tiny images that all share one layer.
type builder struct {
	layer  v1.Layer
	base   v1.Image
	baseCF *v1.ConfigFile
}

func newBuilder() (*builder, error) {
	layer, err := tinyLayer()
	if err != nil {
		return nil, err
	}
	base, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, err
	}
	return &builder{layer: layer, base: base, baseCF: cf}, nil
}

// tinyLayer is a reproducible layer holding one small file.
func tinyLayer() (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	content := []byte("pinbench: a tiny image for pin's benchmark\n")
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/pinbench", Mode: 0o644, Size: int64(len(content)), ModTime: time.Unix(0, 0)}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.DockerLayer))
}

// build makes the content of image spec s of project p.
func (b *builder) build(p *project, s *imageSpec) (*builtImage, error) {
	out := &builtImage{}
	for _, arch := range s.Arches {
		cf := b.baseCF.DeepCopy()
		cf.OS, cf.Architecture = "linux", arch
		if arch == "arm64" {
			cf.Variant = "v8"
		}
		labels := map[string]string{"org.opencontainers.image.version": s.Version}
		entrypoint := "/usr/local/bin/app"
		if !s.Shared {
			labels["org.opencontainers.image.title"] = p.Module
			labels["org.opencontainers.image.source"] = "https://git.example.org/" + p.Repo
			labels["org.opencontainers.image.revision"] = revision(p.Repo, s.Version)
			entrypoint = "/usr/local/bin/" + p.Module
		}
		cf.Created = v1.Time{Time: s.Created}
		if s.Epoch {
			cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
		} else {
			labels["org.opencontainers.image.created"] = s.Created.Format(time.RFC3339)
		}
		cf.Config.Labels = labels
		cf.Config.Entrypoint = []string{entrypoint}
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		img, err := mutate.ConfigFile(b.base, cf)
		if err != nil {
			return nil, err
		}
		out.images = append(out.images, img)
		if arch == "amd64" {
			out.amd64 = img
		}
	}
	if !s.index() {
		out.taggable = out.images[0]
	} else {
		idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
		for i, img := range out.images {
			cf, _ := img.ConfigFile()
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
				Platform: &v1.Platform{OS: "linux", Architecture: s.Arches[i], Variant: cf.Variant},
			}})
			d, err := img.Digest()
			if err != nil {
				return nil, err
			}
			out.childManifests = append(out.childManifests, d.String())
		}
		out.taggable = idx
	}
	d, err := digestOf(out.taggable)
	if err != nil {
		return nil, err
	}
	out.digest = d
	cd, err := out.amd64.ConfigName()
	if err != nil {
		return nil, err
	}
	out.configDigest = cd.String()
	md, err := out.amd64.Digest()
	if err != nil {
		return nil, err
	}
	out.amd64Manifest = md.String()
	return out, nil
}

func digestOf(t remote.Taggable) (string, error) {
	switch x := t.(type) {
	case v1.Image:
		d, err := x.Digest()
		return d.String(), err
	case v1.ImageIndex:
		d, err := x.Digest()
		return d.String(), err
	}
	return "", fmt.Errorf("%T is neither an image nor an index", t)
}

func revision(repo, version string) string {
	sum := sha256.Sum256([]byte(repo + "@" + version))
	return hex.EncodeToString(sum[:20])
}

// seeded is what seeding learnt of a project: the content of each image.
type seeded struct {
	p      *project
	images []*builtImage
}

func (s *seeded) at(tag string) *builtImage {
	for i, t := range s.p.Tags {
		if t == tag {
			return s.images[s.p.TagImage[i]]
		}
	}
	return nil
}

// countingTransport counts requests, for the seeding summary.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// seedStats summarises a seeding.
type seedStats struct {
	Repos, Tags, Manifests, Configs int
	Requests                        int64
	// Files is set instead of Requests when the fleet was written into
	// the registry's storage folder (-storage).
	Files int64
	Took  time.Duration
}

// seed pushes every project to the registry at addr (host:port, plain
// http), workers repositories at a time, with go-containerregistry: the
// shared layer is uploaded once and mounted everywhere, each distinct
// config uploaded once per repository, index children put by digest, and
// every tag put (tags naming the same image cost one PUT each).
//
// With push false the registry already holds the fleet (an earlier seeding
// with the same -n, -tags and -seed): the content is built, not pushed.
func seed(ctx context.Context, addr string, projects []*project, workers int, push bool, logf func(string, ...any)) ([]*seeded, seedStats, error) {
	start := time.Now()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * workers
	ct := &countingTransport{next: tr}
	reg, err := name.NewRegistry(addr, name.Insecure)
	if err != nil {
		return nil, seedStats{}, err
	}
	var pusher *remote.Pusher
	if push {
		// Pinged once for the registry: a transport.Wrapper tells
		// go-containerregistry that the handshake is done, so that it does
		// not ping again for every repository.
		wt, err := transport.NewWithContext(ctx, reg, authn.Anonymous, ct, []string{reg.Scope(transport.PushScope)})
		if err != nil {
			return nil, seedStats{}, fmt.Errorf("pinging %s: %w", addr, err)
		}
		if pusher, err = remote.NewPusher(remote.WithTransport(wt), remote.WithContext(ctx), remote.WithJobs(4)); err != nil {
			return nil, seedStats{}, err
		}
	}
	b, err := newBuilder()
	if err != nil {
		return nil, seedStats{}, err
	}
	shared := &sharedBlobs{m: map[string]*sharedBlob{}}

	out := make([]*seeded, len(projects))
	var mu sync.Mutex
	var st seedStats
	var done atomic.Int64
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-tick.C:
				logf("seeded %d of %d repositories, %d requests", done.Load(), len(projects), ct.n.Load())
			case <-stop:
				return
			}
		}
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i, p := range projects {
		g.Go(func() error {
			s, n, err := seedProject(gctx, pusher, b, shared, reg.Repo(p.Repo), p, push)
			if err != nil {
				return fmt.Errorf("seeding %s: %w", p.Repo, err)
			}
			out[i] = s
			done.Add(1)
			mu.Lock()
			st.Repos++
			st.Tags += len(p.Tags)
			st.Manifests += n.manifests
			st.Configs += n.configs
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, st, err
	}
	st.Requests = ct.n.Load()
	st.Took = time.Since(start)
	return out, st, nil
}

type seedCounts struct{ manifests, configs int }

func seedProject(ctx context.Context, pusher *remote.Pusher, b *builder, shared *sharedBlobs, repo name.Repository, p *project, push bool) (*seeded, seedCounts, error) {
	var n seedCounts
	s := &seeded{p: p}
	for _, spec := range p.Images {
		bi, err := b.build(p, spec)
		if err != nil {
			return nil, n, err
		}
		s.images = append(s.images, bi)
	}
	if !push {
		return s, n, nil
	}
	if err := shared.upload(ctx, pusher, repo, b.layer); err != nil {
		return nil, n, fmt.Errorf("the layer: %w", err)
	}
	for i, bi := range s.images {
		for _, img := range bi.images {
			cl, err := partial.ConfigLayer(img)
			if err != nil {
				return nil, n, err
			}
			if p.Images[i].Shared {
				err = shared.upload(ctx, pusher, repo, cl)
			} else {
				err = pusher.Upload(ctx, repo, cl)
			}
			if err != nil {
				return nil, n, fmt.Errorf("uploading a config: %w", err)
			}
			n.configs++
		}
		if len(bi.images) > 1 {
			for i, img := range bi.images {
				if err := pusher.Put(ctx, repo.Digest(bi.childManifests[i]), img); err != nil {
					return nil, n, fmt.Errorf("putting a platform manifest: %w", err)
				}
				n.manifests++
			}
		}
		n.manifests++
	}
	for i, t := range p.Tags {
		if err := pusher.Put(ctx, repo.Tag(t), s.images[p.TagImage[i]].taggable); err != nil {
			return nil, n, fmt.Errorf("putting tag %s: %w", t, err)
		}
	}
	return s, n, nil
}

// sharedBlobs uploads a blob shared by many repositories once, then
// mounts it from the repository that got it first: a HEAD and a POST
// instead of a HEAD, a POST, a PATCH and a PUT.
type sharedBlobs struct {
	mu sync.Mutex
	m  map[string]*sharedBlob
}

type sharedBlob struct {
	once sync.Once
	from name.Repository
	err  error
}

func (sb *sharedBlobs) upload(ctx context.Context, pusher *remote.Pusher, repo name.Repository, l v1.Layer) error {
	d, err := l.Digest()
	if err != nil {
		return err
	}
	sb.mu.Lock()
	e := sb.m[d.String()]
	if e == nil {
		e = &sharedBlob{}
		sb.m[d.String()] = e
	}
	sb.mu.Unlock()
	first := false
	e.once.Do(func() {
		first = true
		e.from, e.err = repo, pusher.Upload(ctx, repo, l)
	})
	if first || e.err != nil {
		return e.err
	}
	return pusher.Upload(ctx, repo, &remote.MountableLayer{Layer: l, Reference: e.from.Tag("mount")})
}

// summary is one line about the seeding.
func (st seedStats) String() string {
	var b strings.Builder
	if st.Files > 0 {
		fmt.Fprintf(&b, "wrote %d repositories, %d tags, %d distinct manifests, %d configs into the registry's storage folder: %d files in %.1fs",
			st.Repos, st.Tags, st.Manifests, st.Configs, st.Files, st.Took.Seconds())
		return b.String()
	}
	fmt.Fprintf(&b, "seeded %d repositories, %d tags, %d distinct manifests, %d configs: %d requests in %.1fs (%.0f/s)",
		st.Repos, st.Tags, st.Manifests, st.Configs, st.Requests, st.Took.Seconds(), float64(st.Requests)/st.Took.Seconds())
	return b.String()
}
