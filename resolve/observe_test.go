package resolve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
)

const (
	idA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	idB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	rdA = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func TestObservationsMatching(t *testing.T) {
	snap := &host.Snapshot{Host: "h1", ImageStore: "classic",
		Containers: []host.Container{
			{ID: "1", Name: "web", Image: repo + ":1.2.0", ImageID: idA, State: "running"},
			{ID: "2", Name: "web-canary", Image: repo + ":1.3.0", ImageID: idB, State: "running", Labels: map[string]string{"pin.module": "svc"}},
			{ID: "3", Name: "other", Image: "registry.example.org/x:1", ImageID: idB, State: "running"},
			// The tag this container was started from moved on: the engine
			// lists it by image ID. That ID is no registry digest.
			{ID: "4", Name: "old", Image: idA, ImageID: idA, State: "exited", Labels: map[string]string{"pin.module": "svc"}},
		},
		Images: []host.Image{
			{ID: idA, RepoDigests: []string{"mirror.example.org:5000/team/svc@" + rdA}, Labels: map[string]string{image.LabelVersion: "1.2.0"}, OS: "linux", Arch: "arm64"},
			{ID: idB},
		},
	}
	m := &catalogue.Module{Name: "svc", Image: repo, RunsOn: []catalogue.RunsOn{{Host: "h1", Container: "web"}, {Host: "h1", Container: "gone"}}}
	obs, missing := observe.Observations(m, observe.Observed{Snapshots: map[string]*host.Snapshot{"h1": snap}})
	var names []string
	for _, o := range obs {
		names = append(names, o.Container+":"+o.State)
	}
	if strings.Join(names, ",") != "old:exited,web:running,web-canary:running" {
		t.Fatalf("observations = %v", names)
	}
	if strings.Join(missing, ",") != "h1/gone" {
		t.Errorf("missing = %v", missing)
	}
	old, web, canary := obs[0].Image, obs[1].Image, obs[2].Image
	if web.Tag != "1.2.0" || web.Digest != rdA || web.ImageID != idA || web.ConfigDigest != idA || web.Platform != "linux/arm64" {
		t.Errorf("web = %+v (repo digest by path from a mirror, image ID kept apart)", web)
	}
	if old.Tag != "" || old.Digest != rdA {
		t.Errorf("a container listed by image ID: tag %q digest %q; want no tag and the repo digest", old.Tag, old.Digest)
	}
	if canary.Digest != "" || canary.ImageID != idB || canary.Tag != "1.3.0" {
		t.Errorf("loaded image must have no registry digest: %+v", canary)
	}
	if obs[0].Running() || !obs[1].Running() || !IsFloor(obs[0]) {
		t.Error("a stopped container does not run, a running one does, and both are floors")
	}
}

// A running image the host has no registry digest for (loaded, or built
// locally) is ordered by what is known; it cannot be locked, so where it
// wins pin refuses and says so.
func TestLoadedImage(t *testing.T) {
	label := map[string]string{image.LabelVersion: "1.5.0"}
	run := func(pinTag string) *Decision {
		pinImg := word(repo, pinTag)
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning,
			Pin: catalogue.Pin{Text: pinTag + "@" + pinImg.Digest, Tag: pinTag, Digest: pinImg.Digest}, RunsOn: []catalogue.RunsOn{{Host: "h1", Container: "svc"}}}
		snap := &host.Snapshot{Host: "h1", Containers: []host.Container{{ID: "1", Name: "svc", Image: repo + ":1.5.0", ImageID: idA, State: "running"}},
			Images: []host.Image{{ID: idA, Labels: label}}}
		reg := newFakeRegistry(repo)
		reg.byDigest[pinImg.Digest] = pinImg
		reg.byTag[pinTag] = pinImg
		p := Resolve(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}},
			Observed: observe.Observed{Snapshots: map[string]*host.Snapshot{"h1": snap}}, Registry: func(string) Registry { return reg }, Now: time.Now()})
		return p.Decisions[0]
	}
	if d := run("1.2.0"); d.Refusal() == nil || d.Refusal().Kind != KindNoDigest || !strings.Contains(d.Refusal().Error(), "no registry digest") {
		t.Errorf("newer loaded image: refusal %v", d.Refusal())
	}
	if d := run("1.6.0"); d.New() == nil || d.New().Source != "pin" || d.New().Observed[0].Digest != "" || d.New().Observed[0].ImageID != idA {
		t.Errorf("older loaded image: new %+v refusal %v", d.New(), d.Refusal())
	}
	// Without a version label, only the host's tag 1.5.0 says its
	// version: a claim no registry can confirm (there is no digest to ask
	// about), so the order is unknown where it would win.
	label = nil
	if d := run("1.2.0"); d.Refusal() == nil || d.Refusal().Kind != KindUnknown || !strings.Contains(d.Refusal().Error(), "without a registry digest the tag cannot be checked") {
		t.Errorf("newer unlabelled loaded image: refusal %v", d.Refusal())
	}
	if d := run("1.6.0"); d.New() == nil || d.New().Source != "pin" {
		t.Errorf("older unlabelled loaded image (its tag says less than the pin): new %+v refusal %v", d.New(), d.Refusal())
	}
}

func TestSkew(t *testing.T) {
	for _, tt := range []struct {
		running string
		skew    bool
	}{
		{"6.10.3,6.10.2", true},
		{"6.10.3,6.10.3", false},
		{"6.10.3,!6.10.1", false}, // a stopped container is not running: no skew
		{"6.10.3", false},
	} {
		d := runScenario(t, "at-least-running", "6.10.1", tt.running, "-", "-")
		if d.Skew != tt.skew {
			t.Errorf("running %s: skew = %v, want %v", tt.running, d.Skew, tt.skew)
		}
		if d.New() == nil || d.New().Version != "6.10.3" {
			t.Errorf("running %s: the newest running image is not the floor: %+v", tt.running, d.New())
		}
	}
}

// TestFromHostLeavesOtherModules: recording one host's containers keeps
// other modules' entries and skips modules with none, without refusing.
func TestFromHostLeavesOtherModules(t *testing.T) {
	snap := &host.Snapshot{Host: "h1", Containers: []host.Container{{ID: "1", Name: "a", Image: repo + ":1.5.0", ImageID: idA, State: "running"}},
		Images: []host.Image{{ID: idA, RepoDigests: []string{repo + "@" + rdA}}}}
	onH1 := &catalogue.Module{Name: "a", Image: repo, Policy: catalogue.AtLeastRunning, RunsOn: []catalogue.RunsOn{{Host: "h1", Container: "a"}}}
	elsewhere := &catalogue.Module{Name: "b", Image: repo, Policy: catalogue.AtLeastRunning, RunsOn: []catalogue.RunsOn{{Host: "h2", Container: "b"}}}
	p := Resolve(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{onH1, elsewhere}},
		Observed: observe.Observed{Snapshots: map[string]*host.Snapshot{"h1": snap}}, Now: time.Now(), Mode: ModeFromHost, Record: Record{Host: "h1"}})
	if p.Refused() || p.Failed() {
		t.Fatalf("refused or failed: %v %v", p.Decisions[0].Refusal(), p.Decisions[1].Refusal())
	}
	if a := p.Decisions[0]; a.New() == nil || a.New().Digest != rdA || a.New().Source != "running" {
		t.Errorf("a = %+v", a.New())
	}
	if b := p.Decisions[1]; b.New() != nil || b.Change() != ChangeSkipped {
		t.Errorf("b = %+v, change %s", b.New(), b.Change())
	}
	if got := len(p.Lock().Modules); got != 1 {
		t.Errorf("lock has %d modules, want 1", got)
	}
}
