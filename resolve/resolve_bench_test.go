package resolve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
)

// benchRegistry serves a fleet's tags and images from memory, as a warm
// cache would: what resolving costs once the network is out of the way.
type benchRegistry struct {
	tags   map[string][]string
	images map[string]image.Image // repo + "@" + tag or digest
}

func (r *benchRegistry) Tags(_ context.Context, repo string) ([]string, error) {
	return r.tags[repo], nil
}

func (r *benchRegistry) Image(_ context.Context, repo, ref, _ string) (image.Image, error) {
	img, ok := r.images[repo+"@"+ref]
	if !ok {
		return image.Image{}, fmt.Errorf("%s@%s: %w", repo, ref, image.ErrNotFound)
	}
	return img, nil
}

// benchFleet is n track-upstream modules with 30 tags each (releases,
// aliases, -alpine variants, a pre-release, CI tags) pinned at an older
// release, and n/10 at-least-running modules whose host runs a release
// newer than their pin.
func benchFleet(n int) (*catalogue.Catalogue, *benchRegistry, observe.Observed) {
	reg := &benchRegistry{tags: map[string][]string{}, images: map[string]image.Image{}}
	cat := &catalogue.Catalogue{Hosts: []*catalogue.Host{{Name: "fleet-1", Snapshot: "fleet-1.json"}}}
	snap := &host.Snapshot{Schema: 1, Host: "fleet-1", ImageStore: "classic"}
	// Digests are unique per repository and per image: two repositories
	// sharing digests would make one's running image another's, whose tag
	// and label disagree.
	digest := func(repo string, k int) string {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s#%d", repo, k))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	add := func(i int, running bool) {
		name := fmt.Sprintf("app-%04d", i)
		if running {
			name = fmt.Sprintf("svc-%04d", i)
		}
		repo := "registry.example.org/fleet/" + name
		var tags []string
		var newest, pin image.Image
		for k := range 12 {
			v := fmt.Sprintf("%d.%d.%d", 1+i%9, k/3, k%3)
			img := image.Image{Repository: repo, Tag: v, Digest: digest(repo, 2*k), ConfigDigest: digest(repo, 2*k+1),
				Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 20*k),
				Labels:  map[string]string{image.LabelVersion: v}, Platform: "linux/amd64"}
			reg.images[repo+"@"+v] = img
			reg.images[repo+"@"+img.Digest] = img
			tags = append(tags, v)
			if k < 6 {
				tags = append(tags, v+"-alpine")
			}
			if k == 3 {
				pin = img
			}
			newest = img
		}
		tags = append(tags, "latest", fmt.Sprintf("%d", 1+i%9), fmt.Sprintf("%d.3", 1+i%9), fmt.Sprintf("%d.4.0-rc.1", 1+i%9))
		for k := len(tags); k < 30; k++ {
			tags = append(tags, fmt.Sprintf("sha-%07x", i*31+k))
		}
		reg.tags[repo] = tags
		m := &catalogue.Module{Name: name, Image: repo, Policy: catalogue.TrackUpstream,
			Pin: catalogue.Pin{Text: pin.Tag + "@" + pin.Digest, Tag: pin.Tag, Digest: pin.Digest}}
		if running {
			m.Policy = catalogue.AtLeastRunning
			m.RunsOn = []catalogue.RunsOn{{Host: "fleet-1", Container: name}}
			snap.Containers = append(snap.Containers, host.Container{ID: fmt.Sprintf("%064x", i+1), Name: name,
				Image: repo + ":" + newest.Tag, ImageID: newest.ConfigDigest, State: "running"})
			snap.Images = append(snap.Images, host.Image{ID: newest.ConfigDigest, RepoTags: []string{repo + ":" + newest.Tag},
				RepoDigests: []string{repo + "@" + newest.Digest}, Created: newest.Created, Labels: newest.Labels, OS: "linux", Arch: "amd64"})
		}
		cat.Modules = append(cat.Modules, m)
	}
	for i := range n {
		add(i, false)
	}
	for i := range n / 10 {
		add(i, true)
	}
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{"fleet-1": snap}, Errors: map[string]error{}}
	seen.Index()
	return cat, reg, seen
}

func benchInput(n int) Input {
	cat, reg, seen := benchFleet(n)
	return Input{Catalogue: cat, Observed: seen, Registry: func(string) Registry { return reg },
		Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
}

// TestBenchFleetRefusesNothing keeps the benchmark's fleet honest: every
// module resolves, each track-upstream module to its newest release and
// each at-least-running module to what its host runs, so the benchmark
// measures resolving and not refusing.
func TestBenchFleetRefusesNothing(t *testing.T) {
	in := benchInput(100)
	p := Resolve(context.Background(), in)
	if len(p.Decisions) != 110 {
		t.Fatalf("%d decisions, want 110", len(p.Decisions))
	}
	for _, d := range p.Decisions {
		if d.Err() != nil || d.Refusal() != nil {
			t.Fatalf("module %s: err %v, refusal %v", d.Module.Name, d.Err(), d.Refusal())
		}
		if d.New() == nil {
			t.Fatalf("module %s: nothing chosen", d.Module.Name)
		}
		// Both kinds of module end at their repository's newest
		// release, 1+i%9 . "3.2": upstream's newest, or what runs.
		var i int
		if _, err := fmt.Sscanf(d.Module.Name[4:], "%d", &i); err != nil {
			t.Fatalf("module %s: %v", d.Module.Name, err)
		}
		if want := fmt.Sprintf("%d.3.2", 1+i%9); d.New().Tag != want {
			t.Errorf("module %s: chose %s, want %s", d.Module.Name, d.New().Tag, want)
		}
	}
	if p.Failed() || p.Refused() {
		t.Fatal("the plan failed or refused")
	}
}

// BenchmarkResolve resolves n track-upstream and n/10 at-least-running
// modules from in-memory registry answers, and builds the lock, at 1,000
// and 10,000 modules: ns/op and allocations grow ×10, no quadratic step.
func BenchmarkResolve(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			in := benchInput(n)
			b.ReportAllocs()
			for b.Loop() {
				p := Resolve(context.Background(), in)
				if p.Failed() || p.Refused() {
					b.Fatal("the plan failed or refused: see TestBenchFleetRefusesNothing")
				}
				p.Lock()
			}
			b.ReportMetric(float64(len(in.Catalogue.Modules)), "modules/op")
		})
	}
}
