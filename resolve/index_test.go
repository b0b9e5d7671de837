package resolve

import (
	"context"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
)

// TestMixedIndexIsNotTheSameContent: an exact pin names an index whose
// linux/amd64 entry is the 1.22.6 manifest and whose linux/arm64 entry is
// the 1.27.3 manifest a linux/amd64 host runs. A pull on that host gets
// 1.22.6: resolve refuses it, plan does not call it SAME, outdated does
// not call it current, and Judge (pin admit, pin authz) refuses it. Same
// content for an index is the entry a pull on the host's platform gets,
// never "any entry".
func TestMixedIndexIsNotTheSameContent(t *testing.T) {
	ctx := context.Background()
	old, cur := "1.22.6/2024-12-12+1.22.6", "1.27.3/2026-09-01+1.27.3"
	reg := newIndexRegistry(newFakeRegistry(repo, old, cur))
	idx := reg.add("", map[string]string{"linux/amd64": old, "linux/arm64": cur})
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: catalogue.Pin{Text: idx, Digest: idx}}
	seen := observed(m, []run{{host: "host-0", word: cur, platform: "linux/amd64"}}, nil)
	in := inputOf(m, reg, nil, seen)

	d := Resolve(ctx, in).Decisions[0]
	if d.Refusal() == nil || d.Refusal().Kind != KindDowngrade {
		t.Errorf("resolve: new %v (reason %q), refusal %v; want a downgrade refused: a linux/amd64 pull of the index gets 1.22.6", digestOf(d.New()), reasonOf(d.New()), d.Refusal())
	}

	in.Old = &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "exact", Image: repo, Digest: idx,
		Platforms: reg.indexes[idx]["linux/amd64"].Platforms, Version: "1.22.6", Created: word(repo, old).Created, Source: lock.SourcePin}}}
	if c := cutoverOf(t, in, "host-0"); c.Verdict != VerdictDowngrade {
		t.Errorf("plan host-0: %s (%s); want downgrade", c.Verdict, c.Order.Detail)
	}
	if s := Outdated(ctx, in, nil)[0]; !s.Has(StatusBehindRunning) {
		t.Errorf("outdated: %v %v; want behind-running", s.Statuses, s.Findings)
	}
	j, err := Judge(ctx, in, m, image.Image{Repository: repo, Digest: idx}, Override{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Allowed() || j.Verdict != VerdictDowngrade {
		t.Errorf("Judge: verdict %s, allowed %v (%s)", j.Verdict, j.Allowed(), j.Order.Detail)
	}

	// The index the other way round gives the host the 1.27.3 it runs:
	// the same content, locked.
	same := reg.add("", map[string]string{"linux/amd64": cur, "linux/arm64": old})
	m.Pin = catalogue.Pin{Text: same, Digest: same}
	in.Old = nil
	if d := Resolve(ctx, in).Decisions[0]; d.New() == nil || d.New().Digest != same || d.New().Rule != "content" {
		t.Errorf("an index whose linux/amd64 entry is what runs: new %v, refusal %v", d.New(), d.Refusal())
	}
}

// TestFirstMatchingEntry: of two entries a pull may take, the first the
// index lists is what it gets (Docker, containerd, go-containerregistry),
// not the first by name; an image known only by a lock's platforms map
// takes the one named exactly.
func TestFirstMatchingEntry(t *testing.T) {
	img := image.Image{Manifests: []image.PlatformManifest{
		{Platform: "linux/arm/v7", Digest: "sha256:7"},
		{Platform: "linux/arm/v6", Digest: "sha256:6"},
		{Platform: "linux/arm64/v8", Digest: "sha256:8"},
	}}
	for want, d := range map[string]string{"linux/arm": "sha256:7", "linux/arm/v6": "sha256:6", "linux/arm64": "sha256:8", "linux/aarch64": "sha256:8", "linux/amd64": ""} {
		if got, ok := img.ManifestFor(want); got != d || ok != (d != "") {
			t.Errorf("ManifestFor(%s) = %q, %v; want %q", want, got, ok, d)
		}
	}
	lines := image.Image{Platforms: map[string]string{"linux/amd64": "sha256:a", "linux/arm64/v8": "sha256:8"}}
	if got, _ := lines.ManifestFor("linux/arm64"); got != "sha256:8" {
		t.Errorf("from a lock's platforms: %q", got)
	}
}

// TestWindowsBuildsKeepTheirLock: an index listing windows/amd64 once per
// OS build is not malformed; the lock's platforms name its first entry,
// and an entry written when pin kept the last one still reads as the
// same index, not as a hand edit.
func TestWindowsBuildsKeepTheirLock(t *testing.T) {
	img := image.Image{Platforms: map[string]string{"windows/amd64": "sha256:1"}, Manifests: []image.PlatformManifest{
		{Platform: "windows/amd64", OSVersion: "10.0.17763.1", Digest: "sha256:1"},
		{Platform: "windows/amd64", OSVersion: "10.0.20348.1", Digest: "sha256:2"},
	}}
	if err := image.CheckIndex(img.Manifests); err != nil {
		t.Fatal(err)
	}
	for locked, same := range map[string]bool{"sha256:1": true, "sha256:2": true, "sha256:3": false} {
		if got := samePlatforms(map[string]string{"windows/amd64": locked}, img); got != same {
			t.Errorf("locked %s: same %v, want %v", locked, got, same)
		}
	}
}

// TestOneImageByIndexAndByManifest: two hosts run one release, one pulled
// by its index's digest (Docker's classic store does not say it is an
// index), the other by its linux/amd64 manifest; neither carries a build
// date that orders. They are one image: resolve locks it rather than
// refuse an unknown order, reading the index by digest to see so.
func TestOneImageByIndexAndByManifest(t *testing.T) {
	reg := newIndexRegistry(newFakeRegistry(repo))
	idx := reg.add("1.27.3", map[string]string{"linux/amd64": "1.27.3+1.27.3", "linux/arm64": "1.27.3/2026-09-02+1.27.3"})
	manifest := reg.indexes[idx]["linux/amd64"].Platforms["linux/amd64"]
	reg.byDigest[manifest] = word(repo, "1.27.3+1.27.3")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	seen := observed(m, []run{{host: "host-0", word: "1.27.3+1.27.3", platform: "linux/amd64"}, {host: "host-1", word: "1.27.3+1.27.3", platform: "linux/amd64"}}, nil)
	seen.Snapshots["host-0"].Images[0].RepoDigests = []string{repo + "@" + idx}
	d := Resolve(context.Background(), inputOf(m, reg, nil, seen)).Decisions[0]
	if d.New() == nil || (d.New().Digest != idx && d.New().Digest != manifest) {
		t.Errorf("one release, by its index and by its manifest: new %v, refusal %v", d.New(), d.Refusal())
	}
}
