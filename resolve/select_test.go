package resolve

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
)

// askedRegistry counts every call.
type askedRegistry struct{ calls atomic.Int32 }

func (c *askedRegistry) Tags(context.Context, string) ([]string, error) {
	c.calls.Add(1)
	return nil, nil
}

func (c *askedRegistry) Image(context.Context, string, string, string) (image.Image, error) {
	c.calls.Add(1)
	return image.Image{}, image.ErrNotFound
}

// TestOnlyAsksNothingOfOthers: with Record.Only, a module not named is not
// decided: its registry is never asked, its entry (and that of a module
// gone from the catalogue) goes into the new lock as it was, and Progress
// counts the named modules only.
func TestOnlyAsksNothingOfOthers(t *testing.T) {
	in := scenarioInput(t, "track-upstream", "-", "1.22.6", "1.22.6,1.27.3", "-")
	named := in.Registry
	other := &catalogue.Module{Name: "other", Image: "registry.example.org/other/app", Policy: catalogue.TrackUpstream}
	in.Catalogue.Modules = append(in.Catalogue.Modules, other)
	counter := &askedRegistry{}
	in.Registry = func(repo string) Registry {
		if repo == other.Image {
			return counter
		}
		return named(repo)
	}
	kept := &lock.Module{Name: "other", Policy: "track-upstream", Image: other.Image, Tag: "1.0.0", Digest: word(other.Image, "1.0.0").Digest, Source: lock.SourceUpstream, Reason: "hand-kept"}
	gone := &lock.Module{Name: "gone", Policy: "exact", Image: other.Image, Digest: kept.Digest, Source: lock.SourcePin}
	in.Old = &lock.Lock{Modules: []*lock.Module{kept, gone}}
	in.Record.Only = []string{"svc"}
	var done, total int
	in.Progress = func(d, n int) { done, total = d, n }

	p := Resolve(context.Background(), in)
	if n := counter.calls.Load(); n != 0 {
		t.Errorf("the module not named was asked %d times", n)
	}
	if d := p.Decisions[0]; d.New() == nil || d.New().Tag != "1.27.3" || d.Unselected() {
		t.Errorf("svc: %+v", d.New())
	}
	if d := p.Decisions[1]; !d.Unselected() || d.New() != kept || d.Change() != ChangeNone {
		t.Errorf("other: unselected %v, new %+v, change %s", d.Unselected(), d.New(), d.Change())
	}
	if len(p.Retired) != 0 || len(p.Kept) != 1 || p.Kept[0] != gone {
		t.Errorf("retired %v, kept %v: a module gone from the catalogue stays when others are named", p.Retired, p.Kept)
	}
	if l := p.Lock(); l.Module("other") != kept || l.Module("gone") != gone || l.Module("svc") == nil {
		t.Errorf("lock: %+v", l.Modules)
	}
	if done != 1 || total != 1 {
		t.Errorf("progress %d/%d, want 1/1", done, total)
	}

	// Without Only: every module is decided, and the gone one retired: its
	// entry stays in the lock, a floor for whoever takes it over.
	in.Record.Only = nil
	p = Resolve(context.Background(), in)
	if counter.calls.Load() == 0 || len(p.Retired) != 1 || !p.Retired[0].Now || p.Retired[0].Entry != gone || len(p.Kept) != 0 {
		t.Errorf("full run: %d calls, retired %v, kept %d", counter.calls.Load(), p.Retired, len(p.Kept))
	}
	if l := p.Lock(); l.Module("gone") != nil || l.RetiredEntry("gone") != gone {
		t.Errorf("lock: modules %v, retired %v", l.Modules, l.Retired)
	}
}

// TestUnchangedEntryIsThePrevious: a decided entry that formats as the
// previous lock's did is that entry, not a copy (a warm run kept a second
// copy of every entry until the lock was written, issue 17); one that
// differs is the new one, and either way the lock's bytes are the same as
// with the copies.
func TestUnchangedEntryIsThePrevious(t *testing.T) {
	in := scenarioInput(t, "track-upstream", "-", "1.22.6", "1.22.6,1.27.3", "-")
	first := Resolve(context.Background(), in)
	written := first.Decisions[0].New()
	if written == nil || written.Tag != "1.27.3" {
		t.Fatalf("first run: %+v", first.Decisions[0])
	}
	want := lock.Format(first.Lock())

	// What pin reads back is a parse of what it wrote: equal, not the same.
	old, diags := lock.Parse(want, "pin.lock.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	in.Old = old
	second := Resolve(context.Background(), in)
	if d := second.Decisions[0]; d.New() != old.Module("svc") || d.Change() != ChangeNone {
		t.Errorf("unchanged: new %p, previous %p, change %s", d.New(), old.Module("svc"), d.Change())
	}
	if got := lock.Format(second.Lock()); !bytes.Equal(got, want) {
		t.Errorf("unchanged, and the lock differs:\n%s\nwant\n%s", got, want)
	}

	// A previous entry that formats otherwise (its reason edited) is not
	// kept: the new entry is written.
	edited := *old.Module("svc")
	edited.Reason = "edited by hand"
	in.Old = &lock.Lock{Modules: []*lock.Module{&edited}}
	third := Resolve(context.Background(), in)
	if d := third.Decisions[0]; d.New() == &edited || d.New() == nil || d.New().Reason != written.Reason || d.Change() != ChangeUpdate {
		t.Errorf("edited reason: new %+v, change %s", d.New(), d.Change())
	}
	if got := lock.Format(third.Lock()); !bytes.Equal(got, want) {
		t.Errorf("edited reason, and the lock is not the one written first:\n%s\nwant\n%s", got, want)
	}
}
