package version

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// benchTags is a deterministic mix of n tags as registries list them:
// semver with and without "v", two-part aliases, -alpine variants,
// pre-releases, calendar versions, and tags that are no version at all.
func benchTags(n int) []string {
	r := rand.New(rand.NewPCG(6, 6))
	tags := make([]string, 0, n)
	for len(tags) < n {
		ma, mi, pa := r.IntN(5), r.IntN(40), r.IntN(20)
		switch r.IntN(10) {
		case 0, 1, 2:
			tags = append(tags, fmt.Sprintf("%d.%d.%d", ma, mi, pa))
		case 3:
			tags = append(tags, fmt.Sprintf("v%d.%d.%d", ma, mi, pa))
		case 4:
			tags = append(tags, fmt.Sprintf("%d.%d.%d-alpine", ma, mi, pa))
		case 5:
			tags = append(tags, fmt.Sprintf("%d.%d.%d-rc.%d", ma, mi, pa, r.IntN(4)))
		case 6:
			tags = append(tags, fmt.Sprintf("%d.%d", ma, mi))
		case 7:
			tags = append(tags, fmt.Sprintf("2026.%02d.%02d", 1+r.IntN(12), 1+r.IntN(28)))
		case 8:
			tags = append(tags, fmt.Sprintf("sha-%07x", r.Uint32()&0xfffffff))
		default:
			tags = append(tags, "latest")
		}
	}
	return tags
}

// BenchmarkParse reads one tag under semver; the tags vary.
func BenchmarkParse(b *testing.B) {
	tags := benchTags(10000)
	var s Scheme
	i := 0
	for b.Loop() {
		s.Parse(tags[i%len(tags)])
		i++
	}
}

// BenchmarkParseCalver reads one tag under calver.
func BenchmarkParseCalver(b *testing.B) {
	tags := benchTags(10000)
	s, err := ParseScheme("calver")
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		s.Parse(tags[i%len(tags)])
		i++
	}
}

// BenchmarkCompare compares two parsed versions.
func BenchmarkCompare(b *testing.B) {
	var vs []Version
	for _, t := range benchTags(10000) {
		if v, ok := (Scheme{}).Parse(t); ok {
			vs = append(vs, v)
		}
	}
	i := 0
	for b.Loop() {
		Compare(vs[i%len(vs)], vs[(i+1)%len(vs)])
		i++
	}
}

// BenchmarkSort10000 parses 10,000 tags and sorts the versions among
// them, newest first: what ranking a large repository's tags costs.
func BenchmarkSort10000(b *testing.B) {
	tags := benchTags(10000)
	var s Scheme
	for b.Loop() {
		vs := make([]Version, 0, len(tags))
		for _, t := range tags {
			if v, ok := s.Parse(t); ok {
				vs = append(vs, v)
			}
		}
		slices.SortFunc(vs, func(x, y Version) int { return Compare(y, x) })
	}
	b.ReportMetric(float64(len(tags)), "tags/op")
}
