package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
)

// TestAllowDowngradeAcceptsOneDowngrade: allow_downgrade accepts the
// downgrade below what ran when it was used. Left in the catalogue in the
// same words, it does not accept the next one (a host that started a newer
// image since); new words do.
func TestAllowDowngradeAcceptsOneDowngrade(t *testing.T) {
	ctx := context.Background()
	reg := newFakeRegistry(repo, "1.22.6+1.22.6", "1.27.3+1.27.3", "1.28.0+1.28.0")
	pin := word(repo, "1.22.6+1.22.6")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.22.6", pin), AllowDowngrade: "the 1.27 schema broke reports; restored from the nightly dump"}
	resolveWith := func(old *lock.Lock, running string) *Decision {
		return Resolve(ctx, inputOf(m, reg, old, observed(m, []run{{host: "host-0", word: running}}, nil))).Decisions[0]
	}

	first := resolveWith(nil, "1.27.3+1.27.3")
	if first.New() == nil || first.New().Digest != pin.Digest || first.New().AllowDowngrade != m.AllowDowngrade {
		t.Fatalf("the first downgrade, stated: new %v refusal %v", first.New(), first.Refusal())
	}
	old := &lock.Lock{Modules: []*lock.Module{first.New()}}
	if again := resolveWith(old, "1.27.3+1.27.3"); again.New() == nil || !lock.Equal(&lock.Lock{Modules: []*lock.Module{again.New()}}, old) {
		t.Errorf("the same downgrade again: new %v refusal %v; want the entry unchanged", again.New(), again.Refusal())
	}

	// A host has started 1.28.0 since: a downgrade the words never saw.
	next := resolveWith(old, "1.28.0+1.28.0")
	if next.Refusal() == nil || next.Refusal().Kind != KindDowngrade || !strings.Contains(next.Refusal().Error(), "A reason accepts one downgrade") {
		t.Errorf("a second downgrade in the same words: new %v refusal %v; want a refusal that says so", next.New(), next.Refusal())
	}
	j, err := Judge(ctx, inputOf(m, reg, old, observed(m, []run{{host: "host-0", word: "1.28.0+1.28.0"}}, nil)), m, image.Image{Repository: repo, Digest: pin.Digest}, Override{})
	if err != nil || j.Allowed() || j.Accepted != nil {
		t.Errorf("judge, the locked downgrade over a newer container: %+v %v", j, err)
	}
	j, err = Judge(ctx, inputOf(m, reg, old, observed(m, []run{{host: "host-0", word: "1.27.3+1.27.3"}}, nil)), m, image.Image{Repository: repo, Digest: pin.Digest}, Override{})
	if err != nil || !j.Allowed() || j.Accepted == nil {
		t.Errorf("judge, the locked downgrade over what it was held against: %+v %v", j, err)
	}

	// New words accept it.
	m.AllowDowngrade = "1.28 as well: the same schema bug"
	if again := resolveWith(old, "1.28.0+1.28.0"); again.New() == nil || again.New().AllowDowngrade != m.AllowDowngrade {
		t.Errorf("new words: new %v refusal %v", again.New(), again.Refusal())
	}
}

// TestSpentWordsFollowTheContent: the entry's words accepted a downgrade
// below what host-0 ran, pulled by its index (a containerd-store host: the
// image ID is the digest pulled). The container restarted from the
// platform's manifest of the same index: the same image, so the same
// words still accept the same downgrade.
func TestSpentWordsFollowTheContent(t *testing.T) {
	reg := newIndexRegistry(newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6"))
	idx := reg.add("1.27.3", map[string]string{"linux/amd64": "1.27.3/2026-09-01+1.27.3", "linux/arm64": "1.27.3/2026-09-02+1.27.3"})
	manifest := reg.indexes[idx]["linux/amd64"].Platforms["linux/amd64"]
	reg.byDigest[manifest] = word(repo, "1.27.3/2026-09-01+1.27.3")
	older := reg.byTag["1.22.6"]
	words := "the 1.27 schema broke reports; restored from the nightly dump"
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.22.6", older), AllowDowngrade: words}
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "exact", Image: repo, Tag: "1.22.6", Digest: older.Digest, Version: "1.22.6",
		Created: older.Created, Source: "pin", AllowDowngrade: words, Hosts: []string{"host-0"},
		Observed: []lock.Observation{{Host: "host-0", Container: "svc", Tag: "1.27.3", Digest: idx, ImageID: idx, Version: "1.27.3"}}}}}
	seen := observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3", platform: "linux/amd64"}}, nil)
	s := seen.Snapshots["host-0"]
	s.ImageStore = "containerd"
	s.Images[0].ID, s.Containers[0].ImageID = manifest, manifest
	s.Images[0].RepoDigests = []string{repo + "@" + manifest}
	d := Resolve(context.Background(), inputOf(m, reg, old, seen)).Decisions[0]
	if d.New() == nil || d.New().Digest != older.Digest || d.New().AllowDowngrade != words {
		t.Errorf("the same image by another digest: new %v, refusal %v", d.New(), d.Refusal())
	}
}

// TestJudgeCatalogueWordsAcceptOneDowngrade: the catalogue's words given
// to Judge as such (Override.Catalogue, as pin promote gives them) follow
// Resolve's rule: spent on the downgrade the lock records, they do not
// accept another below a container that started a newer image since;
// new words do. Words given for one replacement (an annotation) are not
// the catalogue's and are not held to it.
func TestJudgeCatalogueWordsAcceptOneDowngrade(t *testing.T) {
	ctx := context.Background()
	reg := newFakeRegistry(repo, "1.22.6+1.22.6", "1.27.3+1.27.3", "1.28.0+1.28.0")
	pin := word(repo, "1.22.6+1.22.6")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.22.6", pin), AllowDowngrade: "the 1.27 schema broke reports; restored from the nightly dump"}
	first := Resolve(ctx, inputOf(m, reg, nil, observed(m, []run{{host: "host-0", word: "1.27.3+1.27.3"}}, nil))).Decisions[0]
	if first.New() == nil || first.New().AllowDowngrade != m.AllowDowngrade {
		t.Fatalf("the first downgrade, stated: new %v refusal %v", first.New(), first.Refusal())
	}
	old := &lock.Lock{Modules: []*lock.Module{first.New()}}
	judge := func(running, candidate string, ov Override) *Judgement {
		t.Helper()
		in := inputOf(m, reg, old, observed(m, []run{{host: "host-0", word: running}}, nil))
		j, err := Judge(ctx, in, m, image.Image{Repository: repo, Digest: word(repo, candidate).Digest}, ov)
		if err != nil {
			t.Fatalf("Judge: %v", err)
		}
		return j
	}
	spent := Override{Downgrade: m.AllowDowngrade, Catalogue: true}
	// Below what the words were spent on: still accepted (the same
	// downgrade, another build of it).
	if j := judge("1.27.3+1.27.3", "1.22.6+1.22.6", spent); !j.Allowed() {
		t.Errorf("the downgrade the words were spent on: refused %v", j.Refusal)
	}
	// host-0 runs 1.28.0 now: 1.27.3 below it is another downgrade.
	j := judge("1.28.0+1.28.0", "1.27.3+1.27.3", spent)
	if j.Allowed() || j.Refusal == nil || !strings.Contains(j.Refusal.Error(), "A reason accepts one downgrade") {
		t.Errorf("spent words, another downgrade: allowed %v, refusal %v", j.Allowed(), j.Refusal)
	}
	if j := judge("1.28.0+1.28.0", "1.27.3+1.27.3", Override{Downgrade: m.AllowDowngrade}); !j.Allowed() {
		t.Errorf("the same words as a replacement's own override: refused %v", j.Refusal)
	}
	m.AllowDowngrade = "1.28 as well: the same schema bug"
	if j := judge("1.28.0+1.28.0", "1.27.3+1.27.3", Override{Downgrade: m.AllowDowngrade, Catalogue: true}); !j.Allowed() {
		t.Errorf("new words: refused %v", j.Refusal)
	}
}
