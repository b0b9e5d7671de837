package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// A floor belongs to what ran and what was locked, not to a module's name
// (takeover.go). The module "forge" was locked at 1.27.3, what ran in
// host-0's container "svc"; then the catalogue renames it, or removes it
// and adds it back, while the container is gone.

// renameWorld is the registry, forge's entry (1.27.3, recorded running in
// host-0/svc) and an empty host-0.
func renameWorld(allow string) (*fakeRegistry, *lock.Module, observe.Observed) {
	reg := newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6", "1.27.3/2026-09-01+1.27.3", "1.27.4/2026-10-01+1.27.4")
	ran := reg.byTag["1.27.3"]
	entry := &lock.Module{Name: "forge", Policy: "at-least-running", Image: repo, Tag: "1.27.3", Digest: ran.Digest, Version: "1.27.3",
		Created: ran.Created, Source: lock.SourceRunning, Rule: "version", Reason: "host-0/svc runs 1.27.3", Hosts: []string{"host-0"},
		Observed: []lock.Observation{{Host: "host-0", Container: "svc", Tag: "1.27.3", Digest: ran.Digest, Version: "1.27.3", Created: ran.Created}}}
	if allow != "" {
		// forge's entry records a downgrade its words accepted: 1.22.6
		// locked below the 1.27.3 that ran.
		old := reg.byTag["1.22.6"]
		entry.Tag, entry.Digest, entry.Version, entry.Created, entry.Source, entry.AllowDowngrade = "1.22.6", old.Digest, "1.22.6", old.Created, lock.SourcePin, allow
	}
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{"host-0": {Host: "host-0"}}, Errors: map[string]error{}}
	return reg, entry, seen
}

// renamed is module "git": forge's image and container under another name.
func renamed(policy catalogue.Policy, reg *fakeRegistry) *catalogue.Module {
	return &catalogue.Module{Name: "git", Image: repo, Policy: policy, Pin: pinOf("1.22.6", reg.byTag["1.22.6"]),
		RunsOn: []catalogue.RunsOn{{Host: "host-0", Container: "svc"}}}
}

// TestRenameKeepsTheFloor: the renamed module takes over forge's floor.
// at-least-running keeps 1.27.3 (not the pin 1.22.6), exact is refused
// naming the entry it takes over, and forge's entry leaves the lock only
// because git took it over.
func TestRenameKeepsTheFloor(t *testing.T) {
	ctx := context.Background()
	reg, entry, seen := renameWorld("")
	old := &lock.Lock{Hosts: []string{"host-0"}, Modules: []*lock.Module{entry}}

	git := renamed(catalogue.AtLeastRunning, reg)
	p := Resolve(ctx, inputOf(git, reg, old, seen))
	d := p.Decisions[0]
	if d.New() == nil || d.New().Digest != entry.Digest {
		t.Fatalf("git (renamed from forge, locked at 1.27.3): new %v, refusal %v, err %v; want 1.27.3 kept", d.New(), d.Refusal(), d.Err())
	}
	if d.New().Name != "git" || d.New().Source != lock.SourceRunning || !strings.Contains(d.New().Reason, "the previous lock names 1.27.3") {
		t.Errorf("the entry taken over: %+v", d.New())
	}
	if len(d.TakenOver) != 1 || d.TakenOver[0] != entry {
		t.Errorf("TakenOver = %v, want forge's entry", d.TakenOver)
	}
	if len(p.TakenOver) != 1 || p.TakenOver[0].Entry != entry || p.TakenOver[0].By[0] != "git" || len(p.Retired) != 0 {
		t.Errorf("plan: taken over %v, retired %v", p.TakenOver, p.Retired)
	}
	if l := p.Lock(); l.Module("forge") != nil || l.RetiredEntry("forge") != nil || l.Module("git") == nil {
		t.Errorf("lock: modules %v, retired %v", l.Modules, l.Retired)
	}
	// The next run keeps git's own entry, byte for byte.
	again := Resolve(ctx, inputOf(git, reg, p.Lock(), seen)).Decisions[0]
	if again.Change() != ChangeNone {
		t.Errorf("the run after the rename: change %s (%q → %q)", again.Change(), d.New().Reason, reasonOf(again.New()))
	}

	exact := renamed(catalogue.Exact, reg)
	d = Resolve(ctx, inputOf(exact, reg, old, seen)).Decisions[0]
	if d.Refusal() == nil || d.Refusal().Kind != KindDowngrade || !strings.Contains(d.Refusal().Error(), `the previous lock's entry for module "forge" names`) ||
		!strings.Contains(d.Refusal().Error(), "a rename or removal frees no floor") {
		t.Errorf("exact 1.22.6 renamed from forge (1.27.3): new %v refusal %v", d.New(), d.Refusal())
	}
	// A deliberate reset is an allow_downgrade with words.
	exact.AllowDowngrade = "forge's data was restored from the 1.22 backup"
	d = Resolve(ctx, inputOf(exact, reg, old, seen)).Decisions[0]
	if d.New() == nil || d.New().Digest != reg.byTag["1.22.6"].Digest || d.New().AllowDowngrade == "" {
		t.Errorf("exact 1.22.6 with allow_downgrade: new %+v refusal %v", d.New(), d.Refusal())
	}
}

// TestRemovedAndAddedBack: a module that leaves the catalogue leaves a
// retired entry, which every run keeps, until the module comes back (by
// its name, or under another taking over its container).
func TestRemovedAndAddedBack(t *testing.T) {
	ctx := context.Background()
	reg, entry, seen := renameWorld("")
	other := &catalogue.Module{Name: "web", Image: "registry.example.org/team/web", Policy: catalogue.AtLeastRunning,
		Pin: pinOf("1.0.0", word("registry.example.org/team/web", "1.0.0"))}
	webReg := newFakeRegistry(other.Image, "1.0.0")
	in := inputOf(other, reg, &lock.Lock{Hosts: []string{"host-0"}, Modules: []*lock.Module{entry}}, seen)
	in.Registry = func(r string) Registry {
		if r == other.Image {
			return webReg
		}
		return reg
	}
	p := Resolve(ctx, in)
	if len(p.Retired) != 1 || p.Retired[0].Entry != entry || !p.Retired[0].Now {
		t.Fatalf("forge left the catalogue: retired %v, taken over %v", p.Retired, p.TakenOver)
	}
	l := p.Lock()
	if l.RetiredEntry("forge") != entry || l.Module("forge") != nil {
		t.Fatalf("lock: modules %v, retired %v", l.Modules, l.Retired)
	}
	// A lock read back keeps it, run after run.
	l, diags := lock.Parse(lock.Format(l), lock.DefaultPath)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	in.Old = l
	if p := Resolve(ctx, in); len(p.Retired) != 1 || p.Retired[0].Now || !lock.Equal(p.Lock(), l) {
		t.Errorf("the next run: retired %v; lock changed %v", p.Retired, !lock.Equal(p.Lock(), l))
	}
	// forge comes back, with its old pin: the retired floor holds.
	for _, name := range []string{"forge", "git"} {
		back := renamed(catalogue.AtLeastRunning, reg)
		back.Name = name
		in.Catalogue = &catalogue.Catalogue{Modules: []*catalogue.Module{back, other}}
		if name == "git" {
			in.Catalogue.Modules = []*catalogue.Module{other, back}
		}
		p := Resolve(ctx, in)
		d := p.Decisions[0]
		if name == "git" {
			d = p.Decisions[1]
		}
		if d.New() == nil || d.New().Digest != entry.Digest || len(p.TakenOver) != 1 || p.Lock().RetiredEntry("forge") != nil {
			t.Errorf("%s added back over retired forge (1.27.3): new %v, refusal %v, taken over %v", name, d.New(), d.Refusal(), p.TakenOver)
		}
	}
}

// TestRenameKeepsSpentWords: the words forge's entry spent on a downgrade
// (1.22.6 locked below the 1.27.3 that ran) accept the same downgrade
// under the new name, not a new one below a container that started a
// newer image since.
func TestRenameKeepsSpentWords(t *testing.T) {
	ctx := context.Background()
	words := "the 1.27 migration broke search; restored from the 1.22 backup"
	reg, entry, _ := renameWorld(words)
	old := &lock.Lock{Hosts: []string{"host-0"}, Modules: []*lock.Module{entry}}
	git := renamed(catalogue.Exact, reg)
	git.AllowDowngrade = words

	// The container forge's words were spent below runs still: accepted,
	// and the words stay spent in git's entry.
	seen := observed(git, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil)
	d := Resolve(ctx, inputOf(git, reg, old, seen)).Decisions[0]
	if d.New() == nil || d.New().AllowDowngrade != words {
		t.Errorf("the downgrade forge's words accepted: new %+v, refusal %v", d.New(), d.Refusal())
	}
	// Now it runs 1.27.4, started since: forge's words were spent on
	// another downgrade.
	seen = observed(git, []run{{host: "host-0", word: "1.27.4/2026-10-01+1.27.4"}}, nil)
	d = Resolve(ctx, inputOf(git, reg, old, seen)).Decisions[0]
	if d.Refusal() == nil || !strings.Contains(d.Refusal().Error(), `accepted the downgrade the previous lock's entry for module "forge" records`) {
		t.Errorf("a new downgrade with forge's spent words: new %v, refusal %v", d.New(), d.Refusal())
	}
}

// TestJudgeRenamedModule: admission of a container of the renamed module
// (before any resolve wrote its entry) is held against forge's floor: it
// is not a module "with no floor".
func TestJudgeRenamedModule(t *testing.T) {
	ctx := context.Background()
	reg, entry, seen := renameWorld("")
	for _, old := range []*lock.Lock{
		{Modules: []*lock.Module{entry}},
		{Retired: []*lock.Module{entry}},
	} {
		git := renamed(catalogue.AtLeastRunning, reg)
		older := reg.byTag["1.22.6"]
		j, err := Judge(ctx, inputOf(git, reg, old, seen), git, image.Image{Repository: repo, Tag: "1.22.6", Digest: older.Digest}, Override{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Allowed() || j.Verdict != VerdictDowngrade {
			t.Errorf("Judge(git, 1.22.6) with forge's 1.27.3 in the lock (retired %v): verdict %s, allowed %v", len(old.Retired) > 0, j.Verdict, j.Allowed())
		}
	}
}

// TestTakeoverTies: which entries a module takes over. A retired entry is
// tied to the containers it recorded, and to its repository on the hosts
// where it recorded none, or anywhere when it was read on no host (each
// of its hosts skipped: where it ran is not known); live modules' entries
// to the containers they recorded.
func TestTakeoverTies(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	ran := func(hostName, ctr string) []lock.Observation {
		return []lock.Observation{{Host: hostName, Container: ctr, Digest: d}}
	}
	e := func(name, img string, hosts []string, obs []lock.Observation) *lock.Module {
		return &lock.Module{Name: name, Image: img, Digest: d, Hosts: hosts, Observed: obs}
	}
	other := "registry.example.org/team/other"
	never := e("never", repo, []string{"host-0"}, nil)                                       // retired, ran nothing on host-0
	elsewhere := e("elsewhere", repo, []string{"host-9"}, nil)                               // retired, ran nothing on host-9
	nowhere := e("nowhere", repo, nil, nil)                                                  // retired, read on no host (each skipped)
	sibling := e("sibling", repo, []string{"host-0"}, ran("host-0", "db-b"))                 // retired, its own container
	moved := e("moved", other, []string{"host-0"}, ran("host-0", "svc"))                     // retired, another repository, this container
	live := e("live", other, []string{"host-0"}, ran("host-0", "svc"))                       // a module still in the catalogue
	composed := e("composed", repo, []string{"host-1"}, ran("host-1", "stack-web-2"))        // retired, a Compose replica
	kube := e("kube", repo, []string{"host-2"}, ran("host-2", "deployment/forgejo/forgejo")) // retired, a workload
	partly := e("partly", repo, []string{"host-0", "host-5"}, ran("host-5", "svc"))          // retired, ran on host-5, nothing on host-0
	old := &lock.Lock{Modules: []*lock.Module{live}, Retired: []*lock.Module{composed, elsewhere, kube, moved, never, nowhere, partly, sibling}}
	m := &catalogue.Module{Name: "svc", Image: repo, RunsOn: []catalogue.RunsOn{
		{Host: "host-0", Container: "svc"},
		{Host: "host-1", Compose: "stack/web"},
		{Host: "host-2", Workload: "deployment/forgejo", Container: "forgejo"},
	}}
	var got []string
	for _, x := range newHeirs(old, nil, nil).takenOver(m, nil) {
		got = append(got, x.Name)
	}
	if want := "composed kube live moved never nowhere partly"; strings.Join(got, " ") != want {
		t.Errorf("taken over: %v, want %s", got, want)
	}
}

// TestTakeoverElsewhere: another lock's entries (Input.Record.Elsewhere) are
// taken over as retired ones are, whatever their name (the module's own
// name included: its entry there is another environment's), by the
// containers they recorded or their repository on a host they were read
// on; an entry of another lock tied to a container this module does not
// take over is not; and the index made for one Elsewhere is not reused
// for another.
func TestTakeoverElsewhere(t *testing.T) {
	d := "sha256:" + strings.Repeat("b", 64)
	own := &lock.Module{Name: "svc", Image: repo, Digest: d, Hosts: []string{"host-0"}}
	ran := &lock.Module{Name: "svc", Image: repo, Digest: d, Hosts: []string{"host-1"}, Observed: []lock.Observation{{Host: "host-1", Container: "svc", Digest: d}}}
	read := &lock.Module{Name: "gone", Image: repo, Digest: d, Hosts: []string{"host-1"}}
	tied := &lock.Module{Name: "db", Image: repo, Digest: d, Hosts: []string{"host-1"}, Observed: []lock.Observation{{Host: "host-1", Container: "db", Digest: d}}}
	// svc's own entry in the other lock, its container named otherwise
	// there: taken over by name and host; one held against a host svc
	// does not run on is not.
	renamedCtr := &lock.Module{Name: "svc", Image: repo, Digest: d, Hosts: []string{"host-2"}, Observed: []lock.Observation{{Host: "host-2", Container: "svc-old", Digest: d}}}
	farHost := &lock.Module{Name: "svc", Image: repo, Digest: d, Hosts: []string{"host-7"}, Observed: []lock.Observation{{Host: "host-7", Container: "svc", Digest: d}}}
	old := &lock.Lock{Modules: []*lock.Module{own}}
	m := &catalogue.Module{Name: "svc", Image: repo, RunsOn: []catalogue.RunsOn{{Host: "host-0", Container: "svc"}, {Host: "host-1", Container: "svc"}, {Host: "host-2", Container: "svc"}}}
	cat := &catalogue.Catalogue{Modules: []*catalogue.Module{m}}
	far := []Foreign{{Lock: "pin.lock.staging.hcl", Entry: ran}, {Lock: "pin.lock.staging.hcl", Entry: read}, {Lock: "pin.lock.staging.hcl", Entry: tied},
		{Lock: "pin.lock.qa.hcl", Entry: renamedCtr}, {Lock: "pin.lock.qa.hcl", Entry: farHost}}
	h := newHeirs(old, cat, far)
	var got []string
	for _, x := range h.takenOver(m, nil) {
		got = append(got, x.Name+"@"+h.elsewhere[x])
	}
	if want := "gone@pin.lock.staging.hcl svc@pin.lock.qa.hcl svc@pin.lock.staging.hcl"; strings.Join(got, " ") != want {
		t.Errorf("taken over: %v, want %s", got, want)
	}
	if n := len(newHeirs(old, cat, nil).takenOver(m, nil)); n != 0 {
		t.Errorf("without Elsewhere, %d entries taken over", n)
	}
	in := Input{Catalogue: cat, Old: old, Record: Record{Elsewhere: far}}
	if n := len(in.heirIndex().takenOver(m, nil)); n != 3 {
		t.Errorf("heirIndex with Elsewhere: %d taken over, want 3", n)
	}
	in.Record.Elsewhere = nil
	if n := len(in.heirIndex().takenOver(m, nil)); n != 0 {
		t.Errorf("heirIndex reused the index of another Elsewhere: %d taken over", n)
	}
}

// TestJudgeElsewhere: host-0 ran forge 1.27.3 when it was another
// environment's (that lock recorded it) and runs nothing now; its new
// environment's lock is empty. Admission of 1.22.6 there is a downgrade
// of what ran, and resolve keeps 1.27.3 over the pin, not the pin: the
// floor came with the host. Without Elsewhere, both let 1.22.6 in.
func TestJudgeElsewhere(t *testing.T) {
	ctx := context.Background()
	reg, entry, seen := renameWorld("")
	git := renamed(catalogue.AtLeastRunning, reg)
	older := reg.byTag["1.22.6"]
	in := inputOf(git, reg, &lock.Lock{}, seen)
	in.Record.Elsewhere = []Foreign{{Lock: "pin.lock.staging.hcl", Entry: entry}}
	j, err := Judge(ctx, in, git, image.Image{Repository: repo, Tag: "1.22.6", Digest: older.Digest}, Override{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Allowed() || j.Verdict != VerdictDowngrade {
		t.Errorf("Judge(git, 1.22.6) with 1.27.3 recorded in another environment's lock: verdict %s, allowed %v", j.Verdict, j.Allowed())
	}
	p := Resolve(ctx, in)
	d := p.Decisions[0]
	if d.New() == nil || d.New().Digest != entry.Digest {
		t.Errorf("resolve with 1.27.3 recorded elsewhere: new %v, refusal %v", d.New(), d.Refusal())
	}
	if l := p.Lock(); len(l.Retired) != 0 || len(p.TakenOver) != 0 || p.Elsewhere(entry) != "pin.lock.staging.hcl" {
		t.Errorf("another lock's entry is written here or not named: retired %v, taken over %v, elsewhere %q", l.Retired, p.TakenOver, p.Elsewhere(entry))
	}
	in.Record.Elsewhere = nil
	if j, _ := Judge(ctx, in, git, image.Image{Repository: repo, Tag: "1.22.6", Digest: older.Digest}, Override{}); !j.Allowed() {
		t.Errorf("the oracle's premise: without the other lock, 1.22.6 is %s", j.Verdict)
	}
}

// TestFromHostElsewhere: host-0 ran forge 1.27.3 when it was another
// environment's (that lock recorded it), runs nothing now, and moved into
// git's environment, whose lock holds git at 1.22.6 against host-1.
// "lock --from-host host-0" reads the host git runs on: it must not keep
// 1.22.6, recording host-0 as read, below what ran there. Without
// inheritsOn it kept it (found by the truth test, moved-host check, seed
// 20261203 history 13869).
func TestFromHostElsewhere(t *testing.T) {
	ctx := context.Background()
	reg, entry, seen := renameWorld("")
	seen.Snapshots["host-1"] = &host.Snapshot{Host: "host-1"}
	git := renamed(catalogue.AtLeastRunning, reg)
	git.RunsOn = append(git.RunsOn, catalogue.RunsOn{Host: "host-1", Container: "svc"})
	older := reg.byTag["1.22.6"]
	own := &lock.Module{Name: "git", Policy: "at-least-running", Image: repo, Tag: "1.22.6", Digest: older.Digest, Version: "1.22.6",
		Created: older.Created, Source: lock.SourcePin, Rule: "version", Reason: "the pin 1.22.6; no host runs this module", Hosts: []string{"host-1"}}
	in := inputOf(git, reg, &lock.Lock{Hosts: []string{"host-1"}, Modules: []*lock.Module{own}}, seen)
	in.Mode, in.Record.Host = ModeFromHost, "host-0"
	in.Record.Elsewhere = []Foreign{{Lock: "pin.lock.production.hcl", Entry: entry}}
	d := Resolve(ctx, in).Decisions[0]
	if n := d.New(); n != nil && n.Digest == older.Digest {
		t.Errorf("lock --from-host host-0 kept 1.22.6 below the 1.27.3 host-0 ran in another environment: %+v", n)
	}
	in.Record.Elsewhere = nil
	if n := Resolve(ctx, in).Decisions[0].New(); n == nil || n.Digest != older.Digest {
		t.Errorf("the test's premise: without the other lock, 1.22.6 is kept; got %+v", n)
	}
}
