package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// A fleet is the registry content and the catalogue the bench measures:
// repositories shaped like real projects, each with the module that
// checks it and the tag that module must end up locking.
//
// Generation is deterministic: the same N, T and seed give the same tags,
// versions, dates and labels, so two runs of the bench compare.

// Shapes of projects, in the proportions a fleet of self-hosted services
// shows: mostly plain semver, some "v"-prefixed, some publishing -alpine
// variants next to the default build, some calendar-versioned, some
// multi-arch, a few followed by a floating tag.
const (
	shapeSemver    = "semver"
	shapeV         = "v-semver"
	shapeAlpine    = "alpine"
	shapeCalver    = "calver"
	shapeMultiArch = "multi-arch"
	shapeFloating  = "floating"
)

// shapeFor spreads shapes over repositories: 35% semver, 15% v-prefixed,
// 15% alpine variants, 15% calendar versions, 15% multi-arch, 5% floating.
func shapeFor(i int) string {
	switch i % 20 {
	case 0, 1, 2, 3, 4, 5, 6:
		return shapeSemver
	case 7, 8, 9:
		return shapeV
	case 10, 11, 12:
		return shapeAlpine
	case 13, 14, 15:
		return shapeCalver
	case 16, 17, 18:
		return shapeMultiArch
	}
	return shapeFloating
}

// imageSpec is one distinct image of a project: what its config says.
type imageSpec struct {
	Version string    // org.opencontainers.image.version
	Created time.Time // config created (and the created label unless Epoch)
	// Epoch builds (ko, Bazel, reproducible builds) stamp 1970-01-01 as
	// created and carry no created label.
	Epoch bool
	// Arches is the platforms' architectures; more than one makes an index.
	Arches []string
	// Shared images carry nothing of their repository: the same version
	// gives the same content in every repository, so seeding uploads its
	// config once and mounts it elsewhere. Only images pin never fetches
	// are shared (not the newest release, the pin or what runs), so that
	// one module's fetches never warm another's cache.
	Shared bool
}

func (s *imageSpec) index() bool { return len(s.Arches) > 1 }

// project is one repository and the module that checks it.
type project struct {
	Repo   string // path under the registry: "fleet/app-0042"
	Module string
	Shape  string
	Policy string // track-upstream or at-least-running
	Images []*imageSpec
	// Tags in push order; Tag[i] names Images[TagImage[i]].
	Tags     []string
	TagImage []int
	// Pin is the tag the catalogue pins (an older release).
	Pin string
	// Follow is the floating tag a floating module follows ("latest").
	Follow     string
	Versioning string
	// Want is the tag the lock must name; Running the tag the host runs
	// (at-least-running modules).
	Want    string
	Running string
}

func (p *project) image(tag string) *imageSpec {
	for i, t := range p.Tags {
		if t == tag {
			return p.Images[p.TagImage[i]]
		}
	}
	return nil
}

// release is one published version: its version core and its image.
type release struct {
	core  [3]int
	image int
}

// newest dates end before the bench's clock: dates in the future are not
// plausible build dates, and the clock is not trusted beyond that.
var lastRelease = time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC)

// genProject makes repository i of a fleet with t tags per repository.
// Track-upstream repositories are "fleet/app-NNNN"; at-least-running ones
// (running = true) are "fleet/svc-NNNN", semver, and run their newest
// release on host fleet-1.
func genProject(i, t int, running bool, seed uint64) *project {
	r := rand.New(rand.NewPCG(seed, uint64(i)<<1|b2u(running)))
	p := &project{Policy: "track-upstream"}
	if running {
		p.Repo = fmt.Sprintf("fleet/svc-%04d", i)
		p.Module = fmt.Sprintf("svc-%04d", i)
		p.Shape = shapeSemver
		p.Policy = "at-least-running"
	} else {
		p.Repo = fmt.Sprintf("fleet/app-%04d", i)
		p.Module = fmt.Sprintf("app-%04d", i)
		p.Shape = shapeFor(i)
	}
	if p.Shape == shapeAlpine && t < 12 {
		p.Shape = shapeSemver // too few tags for two variants
	}
	nrel := max(3, t/3)
	epoch := r.IntN(10) == 0 // one project in ten builds reproducibly

	// Release dates, oldest first, ending at lastRelease minus up to 60 days.
	dates := make([]time.Time, nrel)
	d := lastRelease.AddDate(0, 0, -r.IntN(60))
	for k := nrel - 1; k >= 0; k-- {
		dates[k] = d
		d = d.AddDate(0, 0, -(7 + r.IntN(35)))
	}
	add := func(s *imageSpec) int {
		s.Epoch = s.Epoch || epoch
		p.Images = append(p.Images, s)
		return len(p.Images) - 1
	}
	tag := func(name string, img int) {
		if len(p.Tags) < t && p.image(name) == nil {
			p.Tags = append(p.Tags, name)
			p.TagImage = append(p.TagImage, img)
		}
	}
	amd64 := []string{"amd64"}

	if p.Shape == shapeCalver {
		p.Versioning = "calver"
		var imgs []int
		for k, dt := range dates {
			v := dt.Format("2006.01.02")
			img := add(&imageSpec{Version: v, Created: dt, Arches: amd64, Shared: k != nrel-1 && k != nrel/3})
			imgs = append(imgs, img)
			tag(v, img)
		}
		newest := imgs[len(imgs)-1]
		tag("latest", newest)
		tag("stable", newest)
		tag(dates[len(dates)-1].Format("2006.01"), newest) // month alias
		fill(p, r, t, imgs)
		p.Pin = p.Tags[nrel/3]
		p.Want = p.Tags[nrel-1]
		return p
	}

	prefix := ""
	if p.Shape == shapeV {
		prefix = "v"
	}
	// Versions: a major, a starting minor, then patches and minors upwards.
	core := [3]int{1 + r.IntN(9), r.IntN(6), 0} // a small space: old releases shared across repositories
	rels := make([]release, nrel)
	for k := range rels {
		if k > 0 {
			if r.IntN(3) == 0 {
				core = [3]int{core[0], core[1] + 1, 0}
			} else {
				core[2]++
			}
		}
		arches := amd64
		if p.Shape == shapeMultiArch && k >= nrel-3 {
			arches = []string{"amd64", "arm64"} // multi-arch from the newest three on
		}
		spec := &imageSpec{Version: fmt.Sprintf("%d.%d.%d", core[0], core[1], core[2]), Created: dates[k], Arches: arches}
		if k != nrel-1 && k != nrel/3 { // not the newest, not the pin
			spec.Shared, spec.Created = true, sharedDate(core)
		}
		rels[k] = release{core: core, image: add(spec)}
	}
	name := func(c [3]int) string { return fmt.Sprintf("%s%d.%d.%d", prefix, c[0], c[1], c[2]) }
	var imgs []int
	for _, rl := range rels {
		tag(name(rl.core), rl.image)
		imgs = append(imgs, rl.image)
	}
	newest := rels[nrel-1]
	tag("latest", newest.image)
	p.Pin = name(rels[nrel/3].core)
	p.Want = name(newest.core)

	if p.Shape == shapeAlpine {
		// -alpine builds of the newer half of the releases.
		first := nrel / 2
		for k, rl := range rels[first:] {
			v := p.Images[rl.image]
			spec := &imageSpec{Version: v.Version, Created: v.Created.Add(time.Hour), Arches: amd64, Shared: v.Shared}
			if k == 0 { // the alpine pin
				spec.Shared, spec.Created = false, dates[first].Add(time.Hour)
			}
			img := add(spec)
			tag(name(rl.core)+"-alpine", img)
			imgs = append(imgs, img)
		}
		tag("alpine", len(p.Images)-1)
		if i%2 == 0 { // half of the modules follow the -alpine variant
			p.Pin = name(rels[first].core) + "-alpine"
			p.Want = name(newest.core) + "-alpine"
		}
	}
	// Minor and major aliases, pointing at the newest release of each.
	for _, rl := range rels {
		tag(fmt.Sprintf("%s%d.%d", prefix, rl.core[0], rl.core[1]), lastOfMinor(rels, rl.core).image)
	}
	tag(fmt.Sprintf("%s%d", prefix, newest.core[0]), newest.image)
	// A release candidate of the next minor: a pre-release, never picked.
	next := [3]int{newest.core[0], newest.core[1] + 1, 0}
	rc := add(&imageSpec{Version: fmt.Sprintf("%d.%d.0-rc.1", next[0], next[1]), Created: sharedDate(next), Arches: amd64, Shared: true})
	tag(fmt.Sprintf("%s%d.%d.0-rc.1", prefix, newest.core[0], newest.core[1]+1), rc)
	fill(p, r, t, imgs)

	if p.Shape == shapeFloating {
		p.Follow = "latest"
		p.Want = "latest"
	}
	if running {
		p.Running = p.Want
	}
	return p
}

// sharedDate is the build date of a shared image: a function of its
// version alone, before every repository's own releases.
func sharedDate(c [3]int) time.Time {
	return time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, c[0]*100+c[1]*10+c[2])
}

func lastOfMinor(rels []release, c [3]int) release {
	var last release
	for _, rl := range rels {
		if rl.core[0] == c[0] && rl.core[1] == c[1] {
			last = rl
		}
	}
	return last
}

// fill adds CI tags ("sha-1a2b3c4") pointing at existing images until the
// project has t tags: tags that are no version, which pin must skip.
func fill(p *project, r *rand.Rand, t int, imgs []int) {
	for tries := 0; len(p.Tags) < t && tries < 10*t; tries++ {
		name := fmt.Sprintf("sha-%07x", r.Uint32()&0xfffffff)
		if p.image(name) == nil {
			p.Tags = append(p.Tags, name)
			p.TagImage = append(p.TagImage, imgs[r.IntN(len(imgs))])
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// floor is the least a module costs by docs/design.md's cost model, cold and
// warm, for command: a tag list, one manifest (two for an index) and one
// config cold; a tag list and a HEAD warm. A floating tag needs no tag
// list. For resolve, an at-least-running module whose host runs a newer
// image than its pin needs the running image described once (its manifest
// and config, by digest) cold, and the pin too: content beats claims, so
// the pin is ordered by what its digest names, not by its tag. Warm, both
// come from the cache. pin outdated also finds every module's newest
// upstream candidate, at-least-running ones included: a tag list and a
// description for each (the running image, when it is the candidate, is
// read once). The per-registry ping and token are added once for the
// whole run.
func (p *project) floor(command string) (cold, warm int) {
	describe := func(tag string) int {
		if img := p.image(tag); img != nil && img.index() {
			return 3
		}
		return 2
	}
	manifests := 1
	if p.image(p.Want).index() {
		manifests = 2
	}
	switch {
	case p.Policy == "at-least-running" && command == "resolve":
		return manifests + 1 + describe(p.Pin), 0
	case p.Policy == "at-least-running":
		return 1 + manifests + 1 + describe(p.Pin), 2
	case p.Follow != "":
		return manifests + 1, 1
	}
	return 1 + manifests + 1, 2
}
