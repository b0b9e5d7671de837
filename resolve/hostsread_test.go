package resolve

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// A command reads, and records as read, exactly what it decided.

// hostsWorld: modules a (runs_on host-0) and b (runs_on host-0, and by
// its pin.module label on host-1, a host the catalogue gained after the
// lock was written), locked at 1.22.6 against host-0 alone. host-1 runs b
// at 1.27.3.
func hostsWorld() (*fakeRegistry, *catalogue.Catalogue, *lock.Lock, func() Input) {
	reg := newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6", "1.27.3/2026-09-01+1.27.3")
	older, newer := reg.byTag["1.22.6"], reg.byTag["1.27.3"]
	a := &catalogue.Module{Name: "a", Image: repo, Policy: catalogue.AtLeastRunning, RunsOn: []catalogue.RunsOn{{Host: "host-0", Container: "a"}}}
	b := &catalogue.Module{Name: "b", Image: repo, Policy: catalogue.AtLeastRunning, RunsOn: []catalogue.RunsOn{{Host: "host-0", Container: "b"}}}
	c := &catalogue.Catalogue{Hosts: []*catalogue.Host{{Name: "host-0"}, {Name: "host-1"}}, Modules: []*catalogue.Module{a, b}}
	entry := func(name string) *lock.Module {
		return &lock.Module{Name: name, Policy: "at-least-running", Image: repo, Tag: "1.22.6", Version: "1.22.6", Digest: older.Digest, Created: older.Created,
			Source: "running", Hosts: []string{"host-0"},
			Observed: []lock.Observation{{Host: "host-0", Container: name, Tag: "1.22.6", Digest: older.Digest, Version: "1.22.6", Created: older.Created}}}
	}
	old := &lock.Lock{Hosts: []string{"host-0"}, Modules: []*lock.Module{entry("a"), entry("b")}}
	ctr := func(name, tag, digest string, labels map[string]string) host.Container {
		return host.Container{ID: name, Name: name, Image: repo + ":" + tag, ImageID: "sha256:" + strings.Repeat(name[:1], 64), State: "running", Labels: labels}
	}
	img := func(name, digest string) host.Image {
		i := reg.byDigest[digest]
		return host.Image{ID: "sha256:" + strings.Repeat(name[:1], 64), RepoDigests: []string{repo + "@" + digest}, Created: i.Created, Labels: i.Labels}
	}
	input := func() Input {
		snaps := map[string]*host.Snapshot{
			"host-0": {Host: "host-0", Containers: []host.Container{ctr("a", "1.22.6", older.Digest, nil), ctr("b", "1.22.6", older.Digest, nil)},
				Images: []host.Image{img("a", older.Digest), img("b", older.Digest)}},
			"host-1": {Host: "host-1", Containers: []host.Container{ctr("x", "1.27.3", newer.Digest, map[string]string{catalogue.ModuleLabel: "b"})},
				Images: []host.Image{img("x", newer.Digest)}},
		}
		in := inputOf(a, reg, old, observeAll(snaps))
		in.Catalogue = c
		return in
	}
	return reg, c, old, input
}

// TestResolveModuleRecordsOnlyItsHosts: "pin resolve a" reads host-1 but
// decides only a against it: the lock's hosts line does not say host-1
// was read for b, so "lock --from-host host-0" then refuses b (host-1 runs
// a newer b by label) instead of keeping it below what host-1 runs.
func TestResolveModuleRecordsOnlyItsHosts(t *testing.T) {
	ctx := context.Background()
	_, _, old, input := hostsWorld()
	in := input()
	in.Record.Only = []string{"a"}
	p := Resolve(ctx, in)
	if p.Refused() || p.Failed() {
		t.Fatalf("resolve a: %v %v", p.Decisions[0].Refusal(), p.Decisions[0].Err())
	}
	if !slices.Equal(p.Hosts, old.Hosts) {
		t.Errorf("resolve a wrote hosts %v; want the lock's %v: b was not decided against host-1", p.Hosts, old.Hosts)
	}
	in = input()
	in.Old = p.Lock()
	in.Mode, in.Record.Host = ModeFromHost, "host-0"
	in.Observed = observeAll(map[string]*host.Snapshot{"host-0": in.Observed.Snapshots["host-0"]})
	d := Resolve(ctx, in).Decisions[1]
	if d.Refusal() == nil || d.Refusal().Kind != KindUnreadHosts || !strings.Contains(d.Refusal().Error(), "host-1") {
		t.Errorf("lock --from-host host-0 after resolve a: b new %v, refusal %v; want hosts-not-read naming host-1", d.New(), d.Refusal())
	}
	// A full resolve reads every host for every module: recorded.
	in = input()
	if p := Resolve(ctx, in); !slices.Equal(p.Hosts, []string{"host-0", "host-1"}) {
		t.Errorf("resolve: hosts %v", p.Hosts)
	}
}

// TestFromHostRefusesWhenNothingRunsThere: module a runs nothing on
// host-0 now, and host-1 joined its runs_on since the lock: lock
// --from-host host-0 refuses (naming host-1) instead of saying the module
// is up to date, whether or not its own reading changes the entry.
func TestFromHostRefusesWhenNothingRunsThere(t *testing.T) {
	ctx := context.Background()
	_, c, _, input := hostsWorld()
	a := c.Modules[0]
	a.RunsOn = append(a.RunsOn, catalogue.RunsOn{Host: "host-1", Container: "a"})
	in := input()
	in.Old.Hosts = []string{"host-0", "host-1"}
	s0 := in.Observed.Snapshots["host-0"]
	s0.Containers = s0.Containers[1:] // a's container is gone from host-0
	in.Mode, in.Record.Host = ModeFromHost, "host-0"
	in.Observed = observeAll(map[string]*host.Snapshot{"host-0": s0})
	d := Resolve(ctx, in).Decisions[0]
	if d.Refusal() == nil || d.Refusal().Kind != KindUnreadHosts || !strings.Contains(d.Refusal().Error(), "host-1") {
		t.Errorf("lock --from-host host-0, a running nothing there and host-1 unread: change %s, refusal %v", d.Change(), d.Refusal())
	}
	// A module whose runs_on does not name host-0 is not touched.
	a.RunsOn = a.RunsOn[1:]
	if d := Resolve(ctx, in).Decisions[0]; d.Refusal() != nil || d.Change() != ChangeNone {
		t.Errorf("a module not on host-0: change %s, refusal %v", d.Change(), d.Refusal())
	}
}

// observeAll is what the hosts of snaps report, indexed.
func observeAll(snaps map[string]*host.Snapshot) observe.Observed {
	o := observe.Observed{Snapshots: snaps, Errors: map[string]error{}}
	o.Index()
	return o
}
