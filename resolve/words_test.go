package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/lock"
)

// TestFloatingTagNamed: a track-upstream module that follows a floating
// tag names it in its reasons by the tag's own name, and says what it
// names now; never by the version alone, as if it were that tag.
func TestFloatingTagNamed(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		tag, serves, runs string
		want              string
	}{
		{"artful", "artful/2026-03-01+1.1.0", "1.0.0/2026-01-01+1.0.0",
			"the floating tag artful, now 1.1.0; newer than what host-0/svc runs (version 1.1.0 > 1.0.0): an upgrade"},
		{"artful", "artful/2026-03-01+1.1.0", "1.2.0/2026-05-01+1.2.0",
			"host-0/svc runs 1.2.0, newer than the floating tag artful, now 1.1.0 (version 1.2.0 > 1.1.0): locking the floating tag artful would be a downgrade"},
		{"latest", "latest/2026-09-17", "latest/2026-08-20",
			"the floating tag latest; newer than what host-0/svc runs (built 2026-09-17T00:00:00Z > 2026-08-20T00:00:00Z): an upgrade"},
		{"latest", "latest/2026-08-20", "latest/2026-09-17",
			"host-0/svc runs latest (sha256:248f08210eb8), newer than the floating tag latest, now sha256:9cad168fb0ec (built 2026-09-17T00:00:00Z > 2026-08-20T00:00:00Z): locking the floating tag latest would be a downgrade"},
		{"latest", "latest/2026-09-17", "",
			"the floating tag latest; no host runs this module"},
	} {
		reg := newFakeRegistry(repo, tc.serves)
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Tag: tc.tag}
		var runs []run
		if tc.runs != "" {
			runs = []run{{host: "host-0", word: tc.runs}}
		}
		d := Resolve(ctx, inputOf(m, reg, nil, observed(m, runs, nil))).Decisions[0]
		if d.New() == nil {
			t.Fatalf("%s against %s: %v %v", tc.serves, tc.runs, d.Refusal(), d.Err())
		}
		if !strings.HasPrefix(d.New().Reason, tc.want) {
			t.Errorf("%s against %s: the reason is\n  %s\nwant it to begin\n  %s", tc.serves, tc.runs, d.New().Reason, tc.want)
		}
	}
}

// TestKeptEntrySaysSo: when the previous lock wins (what ran is gone, the
// pin is older), the decision says that the entry was kept (Kept), not
// only what won when it was written (its Source); and when the module's
// image moved meanwhile, that the entry keeps the repository it was
// locked from, why, and what to write (Repository). Writing that pin
// locks the same digest from the module's repository.
func TestKeptEntrySaysSo(t *testing.T) {
	ctx := context.Background()
	reg := newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6", "1.27.3/2026-09-01+1.27.3")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.22.6", reg.byTag["1.22.6"])}
	d := Resolve(ctx, inputOf(m, reg, nil, observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil))).Decisions[0]
	if d.New() == nil || d.New().Source != "running" || d.Kept() != nil || d.Repository != nil {
		t.Fatalf("what runs wins: new %v, kept %v, repository %v, refusal %v", d.New(), d.Kept(), d.Repository, d.Refusal())
	}
	old := &lock.Lock{Modules: []*lock.Module{d.New()}}

	// The container is gone: the previous lock wins.
	gone := observed(m, nil, nil)
	d = Resolve(ctx, inputOf(m, reg, old, gone)).Decisions[0]
	if d.New() == nil || d.Kept() != old.Modules[0] || d.Repository != nil {
		t.Fatalf("the container gone: new %v, kept %v, repository %v, refusal %v", d.New(), d.Kept(), d.Repository, d.Refusal())
	}

	// The module's image moves to another registry, whose registry (here
	// the same images) serves the same digests.
	moved := *m
	moved.Image = "mirror.example.net/team/svc"
	d = Resolve(ctx, inputOf(&moved, reg, old, gone)).Decisions[0]
	if d.New() == nil || d.New().Image != repo || d.Kept() == nil || d.Repository == nil {
		t.Fatalf("the image moved: new %v, kept %v, repository %v, refusal %v", d.New(), d.Kept(), d.Repository, d.Refusal())
	}
	r := d.Repository
	digest := d.New().Digest
	for _, want := range []string{`module "svc"'s image is now mirror.example.net/team/svc, and the lock keeps ` + repo + "@" + digest,
		`write pin = "1.27.3@` + digest + `" in module "svc"`} {
		if !strings.Contains(r.Why, want) {
			t.Errorf("the repository's why lacks %q:\n%s", want, r.Why)
		}
	}
	if r.Catalogue != moved.Image || r.Locked != repo {
		t.Errorf("repository %+v", r)
	}
	// As it says.
	moved.Pin = pinOf("1.27.3", reg.byTag["1.27.3"])
	d = Resolve(ctx, inputOf(&moved, reg, old, gone)).Decisions[0]
	if d.New() == nil || d.New().Image != moved.Image || d.New().Digest != digest || d.Repository != nil || d.Kept() != nil {
		t.Errorf("with the pin it says to write: new %v, repository %v, refusal %v", d.New(), d.Repository, d.Refusal())
	}
}
