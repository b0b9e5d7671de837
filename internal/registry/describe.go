package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/pin-tool/pin/internal/image"
)

// ErrDigestMismatch is returned when content does not match its digest.
var ErrDigestMismatch = errors.New("content does not match its digest")

// store is the least a source must offer to describe images: a manifest by
// tag or digest, and a blob by digest.
type store interface {
	// manifest returns the raw manifest and its digest.
	manifest(ctx context.Context, repo, ref string) (raw []byte, digest string, err error)
	// blob returns a blob's content, verified against its digest.
	blob(ctx context.Context, repo, digest string) ([]byte, error)
}

// describe resolves repo:ref (a tag or a digest) to an image.Image: the
// manifest or index, the manifest for platform when it is an index, and the
// config.
func describe(ctx context.Context, s store, repo, ref, platform string) (image.Image, error) {
	raw, digest, err := s.manifest(ctx, repo, ref)
	if err != nil {
		return image.Image{}, err
	}
	img := image.Image{Repository: repo, Digest: digest}
	if !strings.HasPrefix(ref, "sha256:") {
		img.Tag = ref
	}
	doc, err := parseManifest(raw)
	if err != nil {
		return image.Image{}, fmt.Errorf("manifest %s of %s: %w", digest, repo, err)
	}
	if doc.index() {
		img.Platforms = map[string]string{}
		for _, d := range doc.Manifests {
			if d.Platform == nil || d.Platform.OS == "unknown" || !d.MediaType.IsImage() {
				continue // attestations and nested indexes are not platforms
			}
			if !validDigest(d.Digest) {
				return image.Image{}, fmt.Errorf("index %s of %s: a manifest's digest %q is not a sha256 digest", digest, repo, d.Digest)
			}
			p := platformString(d.Platform)
			img.Manifests = append(img.Manifests, image.PlatformManifest{Platform: p, OSVersion: d.Platform.OSVersion, Digest: d.Digest})
			if _, dup := img.Platforms[p]; !dup {
				img.Platforms[p] = d.Digest // the first, as a pull takes it
			}
		}
		if err := image.CheckIndex(img.Manifests); err != nil {
			return image.Image{}, fmt.Errorf("index %s of %s: %w", digest, repo, err)
		}
		// What a pull for the platform takes: the first matching entry,
		// in the index's order.
		e, ok := image.FirstFor(img.Manifests, platform)
		if !ok {
			return image.Image{}, fmt.Errorf("index %s of %s has no manifest for %s (it has %s): %w", digest, repo, platform, strings.Join(sortedKeys(img.Platforms), ", "), image.ErrNotFound)
		}
		img.Platform = e.Platform
		raw, _, err = s.manifest(ctx, repo, e.Digest)
		if err != nil {
			return image.Image{}, err
		}
		if doc, err = parseManifest(raw); err != nil {
			return image.Image{}, fmt.Errorf("manifest of %s@%s: %w", repo, digest, err)
		}
	}
	if !validDigest(doc.Config.Digest) {
		return image.Image{}, fmt.Errorf("manifest of %s@%s: the config digest %q is not a sha256 digest", repo, digest, doc.Config.Digest)
	}
	img.ConfigDigest = doc.Config.Digest
	cb, err := s.blob(ctx, repo, img.ConfigDigest)
	if err != nil {
		return image.Image{}, fmt.Errorf("config of %s@%s: %w", repo, digest, err)
	}
	var cf configDoc
	if err := json.Unmarshal(cb, &cf); err != nil {
		return image.Image{}, fmt.Errorf("config %s of %s: %w", img.ConfigDigest, repo, err)
	}
	img.Created = cf.Created.Time.UTC()
	img.Labels = image.ReadLabels(cf.Config.Labels)
	if img.Platform == "" && cf.OS != "" {
		img.Platform = platformString(&v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant})
	}
	return img, nil
}

// manifestDoc is what describe reads of a manifest or an index, decoded
// once: go-containerregistry's v1.Manifest and v1.IndexManifest decode
// every field, which was most of a warm run's JSON time.
type manifestDoc struct {
	MediaType types.MediaType `json:"mediaType"`
	Config    struct {
		Digest string `json:"digest"`
	} `json:"config"`
	Manifests []struct {
		MediaType types.MediaType `json:"mediaType"`
		Digest    string          `json:"digest"`
		Platform  *v1.Platform    `json:"platform"`
	} `json:"manifests"`
}

// index reports whether the document is an index (an OCI index without
// a mediaType field is known by its manifests).
func (m *manifestDoc) index() bool {
	if m.MediaType == "" {
		return m.Manifests != nil
	}
	return m.MediaType.IsIndex()
}

func parseManifest(raw []byte) (*manifestDoc, error) {
	var m manifestDoc
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a manifest: %w", err)
	}
	return &m, nil
}

// configDoc is what describe reads of an image config.
type configDoc struct {
	Created      v1.Time `json:"created"`
	OS           string  `json:"os"`
	Architecture string  `json:"architecture"`
	Variant      string  `json:"variant"`
	Config       struct {
		Labels map[string]string `json:"Labels"`
	} `json:"config"`
}

// validDigest reports whether d is a well-formed sha256 digest.
func validDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	return ok && len(hex) == 64 && strings.Trim(hex, "0123456789abcdef") == ""
}

func platformString(p *v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// verify checks content against a sha256 digest.
func verify(b []byte, digest string) error {
	alg, want, ok := strings.Cut(digest, ":")
	if !ok || alg != "sha256" {
		return fmt.Errorf("unsupported digest %q", digest)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != want {
		return fmt.Errorf("%s: %w", digest, ErrDigestMismatch)
	}
	return nil
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
