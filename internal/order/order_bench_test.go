package order

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

// benchImages is a deterministic mix of n images as a registry's tags
// name them: semver with and without "v", -alpine variants, pre-releases,
// two-part aliases and non-version tags, with digests, build dates and
// version labels.
func benchImages(n int) []image.Image {
	r := rand.New(rand.NewPCG(6, 7))
	imgs := make([]image.Image, 0, n)
	for i := range n {
		ma, mi, pa := r.IntN(5), r.IntN(40), r.IntN(20)
		var tag string
		switch r.IntN(8) {
		case 0, 1, 2:
			tag = fmt.Sprintf("%d.%d.%d", ma, mi, pa)
		case 3:
			tag = fmt.Sprintf("v%d.%d.%d", ma, mi, pa)
		case 4:
			tag = fmt.Sprintf("%d.%d.%d-alpine", ma, mi, pa)
		case 5:
			tag = fmt.Sprintf("%d.%d.%d-rc.%d", ma, mi, pa, r.IntN(4))
		case 6:
			tag = fmt.Sprintf("%d.%d", ma, mi)
		default:
			tag = fmt.Sprintf("sha-%07x", r.Uint32()&0xfffffff)
		}
		imgs = append(imgs, image.Image{
			Repository: "registry.example.org/team/svc", Tag: tag,
			Digest:       fmt.Sprintf("sha256:%064x", i+1),
			ConfigDigest: fmt.Sprintf("sha256:%064x", n+i+1),
			Created:      time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(1000*24)) * time.Hour),
			Labels:       map[string]string{image.LabelVersion: fmt.Sprintf("%d.%d.%d", ma, mi, pa)},
		})
	}
	return imgs
}

// BenchmarkOrderTags10000 parses the versions of 10,000 tags and sorts
// them by version within the most common variant, newest first: the work
// of ranking a large repository's tags.
func BenchmarkOrderTags10000(b *testing.B) {
	imgs := benchImages(10000)
	o := Options{}
	type cand struct {
		tag string
		v   version.Version
	}
	for b.Loop() {
		byVariant := map[string][]cand{}
		for _, img := range imgs {
			if c := o.VersionOf(img); c.HasTag && !c.Tag.Prerelease() {
				byVariant[c.Tag.Variant()] = append(byVariant[c.Tag.Variant()], cand{img.Tag, c.Tag})
			}
		}
		all := byVariant["{3}"]
		slices.SortFunc(all, func(x, y cand) int { return version.Compare(y.v, x.v) })
	}
	b.ReportMetric(10000, "tags/op")
}

// BenchmarkCompare orders two images (content, then version, then build
// date), with the sentence that says how.
func BenchmarkCompare(b *testing.B) {
	imgs := benchImages(10000)
	o := Options{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	i := 0
	for b.Loop() {
		Compare(imgs[i%len(imgs)], imgs[(i+1)%len(imgs)], o)
		i++
	}
}

// BenchmarkSortImages10000 sorts 10,000 images with Compare alone, every
// rule and its sentence included: an upper bound on ordering by images
// rather than by tags.
func BenchmarkSortImages10000(b *testing.B) {
	imgs := benchImages(10000)
	o := Options{AnyVariant: true, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	for b.Loop() {
		s := slices.Clone(imgs)
		slices.SortStableFunc(s, func(x, y image.Image) int {
			switch Compare(x, y, o).Cmp {
			case Newer:
				return -1
			case Older:
				return 1
			}
			return 0
		})
	}
	b.ReportMetric(10000, "images/op")
}
