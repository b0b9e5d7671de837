package resolve

// A second reader's tests of the fail-closed work (issue 12). Each test
// here FAILS on the code it was written against: it demonstrates a way pin
// still fails open (exit 0 with a lock or a verdict that could downgrade a
// service), or disagrees between resolve, plan and outdated. Each says what
// the hole is and where the fix belongs. They use the scenario words of
// scenario_test.go ("tag/date+label") and its fakeRegistry.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

var reviewNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// run is one container for the review tests: on host, running the image of
// word, in state ("" is running), of platform ("" for none known).
type run struct {
	host, word, state, platform string
}

// observed builds the snapshots of runs (one container "svc" per host) and
// adds a runs_on of m for every host named, read or not: hosts lists the
// runs_on hosts whose snapshot is handed over; nil hands all over.
func observed(m *catalogue.Module, runs []run, read []string) observe.Observed {
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}}
	for i, r := range runs {
		img := word(repo, r.word)
		ref := repo
		if img.Tag != "" {
			ref += ":" + img.Tag
		}
		state := r.state
		if state == "" {
			state = "running"
		}
		id := "sha256:" + strings.Repeat(fmt.Sprint(i%10), 64)
		hi := host.Image{ID: id, RepoDigests: []string{repo + "@" + img.Digest}, Created: img.Created, Labels: img.Labels}
		if os, arch, ok := strings.Cut(r.platform, "/"); ok {
			hi.OS, hi.Arch = os, arch
		}
		if !slices.ContainsFunc(m.RunsOn, func(ro catalogue.RunsOn) bool { return ro.Host == r.host }) {
			m.RunsOn = append(m.RunsOn, catalogue.RunsOn{Host: r.host, Container: "svc"})
		}
		if read != nil && !slices.Contains(read, r.host) {
			continue
		}
		seen.Snapshots[r.host] = &host.Snapshot{Host: r.host,
			Containers: []host.Container{{ID: "c" + r.host, Name: "svc", Image: ref, ImageID: id, State: state}},
			Images:     []host.Image{hi},
		}
	}
	return seen
}

func inputOf(m *catalogue.Module, reg Registry, old *lock.Lock, seen observe.Observed) Input {
	return Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Old: old, Observed: seen,
		Registry: func(string) Registry { return reg }, Now: reviewNow}
}

func pinOf(tag string, img image.Image) catalogue.Pin {
	return catalogue.Pin{Text: tag + "@" + img.Digest, Tag: tag, Digest: img.Digest}
}

// indexRegistry adds multi-platform indexes to a fakeRegistry: an index
// digest (or a tag naming one) is described for the platform asked, as
// internal/registry's describe does, and an index without that platform is
// image.ErrNotFound, as there.
type indexRegistry struct {
	*fakeRegistry
	// indexes maps an index digest to its platforms' images.
	indexes map[string]map[string]image.Image
	// tagged maps a tag to the index digest it names.
	tagged map[string]string
}

func newIndexRegistry(f *fakeRegistry) *indexRegistry {
	return &indexRegistry{fakeRegistry: f, indexes: map[string]map[string]image.Image{}, tagged: map[string]string{}}
}

// add makes an index of the platform images words (platform → word) and
// returns its digest; tag, when set, names it.
func (r *indexRegistry) add(tag string, words map[string]string) string {
	plat := map[string]string{}
	var key []string
	imgs := map[string]image.Image{}
	for _, p := range slices.Sorted(maps.Keys(words)) {
		img := word(repo, words[p])
		img.ConfigDigest = "sha256:c0" + img.Digest[len("sha256:c0"):]
		plat[p] = img.Digest
		imgs[p] = img
		key = append(key, p+"="+words[p])
	}
	sum := sha256.Sum256([]byte("index:" + strings.Join(key, ",")))
	d := "sha256:" + hex.EncodeToString(sum[:])
	var entries []image.PlatformManifest // in platform order, as listed
	for _, p := range slices.Sorted(maps.Keys(plat)) {
		entries = append(entries, image.PlatformManifest{Platform: p, Digest: plat[p]})
	}
	for p, img := range imgs {
		img.Platforms = plat
		img.Manifests = entries
		img.Platform = p
		img.Digest = d
		imgs[p] = img
	}
	r.indexes[d] = imgs
	if tag != "" {
		r.tagged[tag] = d
		r.tags = append(r.tags, tag)
	}
	return d
}

func (r *indexRegistry) Image(ctx context.Context, repoName, ref, platform string) (image.Image, error) {
	d, byTag := r.tagged[ref]
	if !byTag {
		d = ref
	}
	if imgs, ok := r.indexes[d]; ok {
		img, ok := imgs[platform]
		if !ok {
			return image.Image{}, fmt.Errorf("index %s of %s has no manifest for %s: %w", image.Short(d), repoName, platform, image.ErrNotFound)
		}
		img.Tag = ""
		if byTag {
			img.Tag = ref
		}
		return img, nil
	}
	return r.fakeRegistry.Image(ctx, repoName, ref, platform)
}

func (r *indexRegistry) Tags(ctx context.Context, repoName string) ([]string, error) {
	return r.fakeRegistry.Tags(ctx, repoName)
}

func cutoverOf(t *testing.T, in Input, hostName string) Cutover {
	t.Helper()
	in.Record.Host = hostName
	cuts, err := PlanCutover(context.Background(), in)
	if err != nil {
		t.Logf("plan %s: %v", hostName, err)
		return Cutover{Verdict: "error"}
	}
	for _, c := range cuts {
		if c.Observation.Host == hostName {
			return c
		}
	}
	t.Fatalf("plan %s: no cutover", hostName)
	return Cutover{}
}

// TestReviewIndexJudgedForAnotherPlatform.
//
// HOLE: an index is ordered by the content of ONE platform's manifest
// against containers of another platform. Resolve describes a candidate
// for the platform of the first container that says one (decider.platform)
// and holds that description against every floor; PlanCutover (and
// lockedImage, Enrich) describe the locked index for the module's platform
// (m.Platform(), linux/amd64 by default), not the container's. In a mixed
// fleet where the arm64 build of a release lags (a failed arm64 build, the
// previous one carried over into the new index), an index whose amd64
// manifest is newer than what runs everywhere, but whose arm64 manifest is
// older than what the arm64 host runs, is locked (exit 0), and "pin plan"
// of the arm64 host says UPGRADE while the deploy pulls the older arm64
// image.
//
// FIX: order an index against a container by the manifest of that
// container's platform: in policy.go (checkFloors, allAtLeast, pick), hold
// the candidate described for each floor's Image.Platform (one describe
// per distinct platform, cached by digest); in cutover.go PlanCutover,
// describe the locked digest for platformOf(o), not m.Platform().
func TestReviewIndexJudgedForAnotherPlatform(t *testing.T) {
	reg := newIndexRegistry(newFakeRegistry(repo))
	// "latest": amd64 rebuilt on 2026-10-01, arm64 carried over from
	// 2026-06-01.
	idx := reg.add("latest", map[string]string{
		"linux/amd64": "-/2026-10-01",
		"linux/arm64": "-/2026-06-01",
	})
	runs := []run{
		{host: "host-0", word: "latest/2026-09-01", platform: "linux/amd64"},
		{host: "host-1", word: "latest/2026-09-01+", platform: "linux/arm64"},
	}
	// (The "+" gives host-1's image a digest of its own, with no label.)
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Tag: "latest"}
	seen := observed(m, runs, nil)
	for _, s := range seen.Snapshots {
		for i := range s.Images {
			s.Images[i].Labels = nil
		}
	}
	in := inputOf(m, reg, nil, seen)
	d := Resolve(context.Background(), in).Decisions[0]
	if d.New() != nil && d.New().Digest == idx {
		t.Errorf("resolve locked the index %s (its amd64 manifest built 2026-10-01) although its arm64 manifest, built 2026-06-01, is older than what host-1 (linux/arm64) runs, built 2026-09-01: reason %q", image.Short(idx), d.New().Reason)
	}

	// The plan of host-1 against a lock that names the index.
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "track-upstream", Image: repo, Tag: "latest", Digest: idx,
		Platforms: reg.indexes[idx]["linux/amd64"].Platforms, Created: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Source: "upstream"}}}
	in.Old = old
	if c := cutoverOf(t, in, "host-1"); c.Verdict == VerdictUpgrade || c.Verdict == VerdictSame {
		t.Errorf("pin plan host-1 says %s (%s) although the lock's index gives linux/arm64 an image built 2026-06-01, older than the 2026-09-01 one host-1 runs", c.Verdict, c.Order.Detail)
	}
}

// TestReviewLockRecheckedForAnotherPlatform.
//
// HOLE (non-determinism, fails closed): resolve writes an index's entry
// (created, config) from the manifest of the running container's platform
// (decider.platform), and the next run checks the entry against the
// manifest of the module's platform (lockedImage → describe with
// m.Platform()). Where the two manifests were built at different times
// (separate runners per architecture), the second "pin resolve" of an
// unchanged world fails with a LockMismatchError ("edited by hand or merged
// wrongly", exit 2) on a lock pin itself wrote; "pin resolve --check" never
// passes twice.
//
// FIX: lockedImage must describe the entry for the platform the entry was
// written for: record it in the entry (a "platform" line), or pass
// decider.platform() into lockedImage, and in PlanCutover the container's.
func TestReviewLockRecheckedForAnotherPlatform(t *testing.T) {
	reg := newIndexRegistry(newFakeRegistry(repo))
	reg.add("1.27.3", map[string]string{
		"linux/amd64": "-/2026-09-01",
		"linux/arm64": "-/2026-09-02",
	})
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream}
	seen := observed(m, []run{{host: "host-0", word: "1.27.2/2026-08-01", platform: "linux/arm64"}}, nil)
	first := Resolve(context.Background(), inputOf(m, reg, nil, seen)).Decisions[0]
	if first.New() == nil {
		t.Fatalf("first run: %v %v", first.Refusal(), first.Err())
	}
	second := Resolve(context.Background(), inputOf(m, reg, &lock.Lock{Modules: []*lock.Module{first.New()}}, seen)).Decisions[0]
	if second.Err() != nil || second.Refusal() != nil || second.Change() != ChangeNone {
		t.Errorf("a second run over nothing changed: change %s, err %v, refusal %v", second.Change(), second.Err(), second.Refusal())
	}
}

// TestReviewLockCheckSkippedWhenIndexLacksModulePlatform.
//
// HOLE (issue 12 case 5 comes back): lockedImage describes the locked
// digest for m.Platform() (linux/amd64 unless the module says platforms).
// For an index without that platform (an arm64-only image on an arm64
// fleet) the registry answers image.ErrNotFound ("index has no manifest
// for linux/amd64"), describe() swallows it as "content out of reach", and
// the entry's lines are believed without a check. A hand edit that puts
// an older image's digest under the newer one's lines (the case 5,
// the older image even labelled 1.22.6) is then kept by "pin resolve"
// (exit 0), "pin plan" says UPGRADE, and "pin outdated" says current.
//
// FIX: content.go describe/lockedImage: an index that lacks the platform
// asked is not "out of reach" (only image.ErrUnavailable is): describe the
// entry for the platform of the module's containers (decider.platform), or
// for any platform the index has when none says, and check the lines; an
// ErrNotFound on a locked digest must be an error (or Unknown), never a
// licence to believe the lines. docs/reference.md promises the lines are
// believed only offline.
func TestReviewLockCheckSkippedWhenIndexLacksModulePlatform(t *testing.T) {
	reg := newIndexRegistry(newFakeRegistry(repo))
	older := reg.add("", map[string]string{"linux/arm64": "1.22.6/2024-03-01+1.22.6"})
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	seen := observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3", platform: "linux/arm64"}}, nil)
	// The hand-edited entry: 1.27.4's lines over the 1.22.6 index's digest.
	edited := &lock.Module{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.27.4", Digest: older,
		Platforms: reg.indexes[older]["linux/arm64"].Platforms, Version: "1.27.4", Created: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Source: "running"}
	old := &lock.Lock{Modules: []*lock.Module{edited}}
	in := inputOf(m, reg, old, seen)

	d := Resolve(context.Background(), in).Decisions[0]
	var lm *LockMismatchError
	if !errors.As(d.Err(), &lm) {
		t.Errorf("resolve: want a LockMismatchError for the hand-edited entry, got change %s (new digest %s, reason %q), err %v, refusal %v",
			d.Change(), digestOf(d.New()), reasonOf(d.New()), d.Err(), d.Refusal())
	}
	if c := cutoverOf(t, in, "host-0"); c.Verdict == VerdictUpgrade || c.Verdict == VerdictSame {
		t.Errorf("pin plan host-0 says %s (%s): the deploy would pull %s, labelled 1.22.6, over 1.27.3", c.Verdict, c.Order.Detail, image.Short(older))
	}
	s := Outdated(context.Background(), in, nil)[0]
	if s.Has(StatusCurrent) {
		t.Errorf("outdated says %v for a lock whose digest names 1.22.6 while 1.27.3 runs: %+v", s.Statuses, s.Findings)
	}
}

func digestOf(e *lock.Module) string {
	if e == nil {
		return ""
	}
	return image.Short(e.Digest)
}

func reasonOf(e *lock.Module) string {
	if e == nil {
		return ""
	}
	return e.Reason
}

// TestReviewFromHostForgetsHostsNotRecorded.
//
// HOLE: "pin lock --from-host H" observes H alone (source.Load with
// Request.Host) and keeps, as floors of the other hosts, only what the
// previous lock recorded for them. With no previous entry (the first lock
// of a fleet), or one written before another runs_on host joined, what the
// other hosts run is simply not a floor: a module at-least-running on
// host-0 (1.22.6) and host-1 (1.27.3) is locked at 1.22.6 by "pin lock
// --from-host host-0", exit 0; "pin resolve" would lock 1.27.3.
//
// FIX: resolve.go decide, ModeFromHost: a module that runs on a host other
// than in.Record.Host for which the previous entry records no observation (or
// there is no entry) has an unknown floor there: refuse (KindUnknown,
// "what host-1 runs is not known to this command: run pin resolve, or pin
// lock --from-host host-1 first"), or leave the module to "pin resolve" as
// ChangeSkipped does. (Or cmd/pin reads every host of the modules H runs.)
func TestReviewFromHostForgetsHostsNotRecorded(t *testing.T) {
	reg := newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6", "1.27.3/2026-09-01+1.27.3")
	runs := []run{
		{host: "host-0", word: "1.22.6/2026-01-01+1.22.6"},
		{host: "host-1", word: "1.27.3/2026-09-01+1.27.3"},
	}
	t.Run("no previous lock", func(t *testing.T) {
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.22.6", reg.byTag["1.22.6"])}
		in := inputOf(m, reg, nil, observed(m, runs, []string{"host-0"}))
		in.Mode, in.Record.Host = ModeFromHost, "host-0"
		d := Resolve(context.Background(), in).Decisions[0]
		if d.New() != nil {
			t.Errorf("lock --from-host host-0 locked %s (%s) while host-1, not read and recorded nowhere, runs 1.27.3", d.New().Tag, d.New().Reason)
		}
	})
	// "pin resolve" reads host-0 alone while host-1 is not in runs_on yet;
	// host-1 joins (running 1.27.3), and lock --from-host host-0 follows.
	t.Run("a host that joined after the lock", func(t *testing.T) {
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.22.6", reg.byTag["1.22.6"])}
		first := Resolve(context.Background(), inputOf(m, reg, nil, observed(m, runs[:1], nil))).Decisions[0]
		if first.New() == nil || !slices.Equal(first.New().Hosts, []string{"host-0"}) {
			t.Fatalf("pin resolve: %+v %v; want hosts [host-0]", first.New(), first.Refusal())
		}
		old := &lock.Lock{Modules: []*lock.Module{first.New()}}
		m.RunsOn = nil
		in := inputOf(m, reg, old, observed(m, runs, []string{"host-0"}))
		in.Mode, in.Record.Host = ModeFromHost, "host-0"
		d := Resolve(context.Background(), in).Decisions[0]
		if d.Refusal() == nil || d.Refusal().Kind != KindUnreadHosts || !strings.Contains(d.Refusal().Error(), "host-1") {
			t.Errorf("lock --from-host host-0 after host-1 joined: new %v refusal %v; want hosts-not-read naming host-1", d.New(), d.Refusal())
		}
	})
	// A host read that runs nothing of the module is recorded as read: lock
	// --from-host on the other one then proceeds.
	t.Run("a host that runs nothing", func(t *testing.T) {
		m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.22.6", reg.byTag["1.22.6"])}
		seen := observed(m, runs[:1], nil)
		m.RunsOn = append(m.RunsOn, catalogue.RunsOn{Host: "standby", Container: "svc"})
		seen.Snapshots["standby"] = &host.Snapshot{Host: "standby"}
		first := Resolve(context.Background(), inputOf(m, reg, nil, seen)).Decisions[0]
		if first.New() == nil || !slices.Equal(first.New().Hosts, []string{"host-0", "standby"}) {
			t.Fatalf("pin resolve: %+v %v; want hosts [host-0 standby]", first.New(), first.Refusal())
		}
		in := inputOf(m, reg, &lock.Lock{Modules: []*lock.Module{first.New()}}, observed(m, runs[:1], nil))
		in.Observed.Snapshots = map[string]*host.Snapshot{"host-0": seen.Snapshots["host-0"]}
		in.Mode, in.Record.Host = ModeFromHost, "host-0"
		if d := Resolve(context.Background(), in).Decisions[0]; d.New() == nil {
			t.Errorf("lock --from-host host-0 with standby recorded as running nothing: %v %v", d.Refusal(), d.Err())
		}
		// Legacy: the same entry without its hosts line.
		legacy := *first.New()
		legacy.Hosts = nil
		in.Old = &lock.Lock{Modules: []*lock.Module{&legacy}}
		if d := Resolve(context.Background(), in).Decisions[0]; d.Refusal() == nil || d.Refusal().Kind != KindUnreadHosts {
			t.Errorf("an entry that does not say it read standby: new %v refusal %v; want hosts-not-read", d.New(), d.Refusal())
		}
	})
}

// TestReviewJudgeTrustsStaleAllowDowngrade.
//
// HOLE: Judge (pin admit, pin authz) accepts a downgrade to the locked
// digest when the LOCK's entry carries allow_downgrade, whatever the
// catalogue says now. The lock line is a record of what the catalogue said
// when it was written: once the author removes allow_downgrade from the
// catalogue (the restore is done, the reason no longer holds), "pin
// resolve" refuses the same downgrade, but the admission webhook still
// admits it on the stale (or hand-added) line.
//
// FIX: judge.go Judge: accept on the lock entry only when the catalogue's
// module states it too (m.AllowDowngrade != "" and, for one_way,
// m.Restore != ""), i.e. when resolve would accept it.
func TestReviewJudgeTrustsStaleAllowDowngrade(t *testing.T) {
	reg := newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6", "1.27.3/2026-09-01+1.27.3")
	older := reg.byTag["1.22.6"]
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.22.6", older)} // allow_downgrade since removed
	seen := observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil)
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "exact", Image: repo, Tag: "1.22.6", Digest: older.Digest, Version: "1.22.6",
		Created: older.Created, Source: "pin", AllowDowngrade: "the 1.27 migration broke search; restored"}}}
	in := inputOf(m, reg, old, seen)
	if d := Resolve(context.Background(), in).Decisions[0]; d.Refusal() == nil {
		t.Fatalf("precondition: resolve should refuse without allow_downgrade in the catalogue: %+v %v", d.New(), d.Err())
	}
	j, err := Judge(context.Background(), in, m, image.Image{Repository: repo, Tag: "1.22.6", Digest: older.Digest}, Override{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Allowed() {
		t.Errorf("Judge admits the downgrade to 1.22.6 over a running 1.27.3 on the lock's stale allow_downgrade line (%q), which the catalogue no longer states and pin resolve refuses", j.Reason)
	}
}

// TestReviewOfflinePinTextBelieved.
//
// HOLE (documented in pinImage's comment, not in docs/reference.md, and
// avoidable): offline, a pin "tag@digest" whose content is neither in a
// mirror nor the cache is ordered by its text: its tag is the version.
// Snapshots give the floors' content; the pin's is a claim. pin = "1.30.0@
// <digest of 1.22.6>" offline is locked as an upgrade over a running
// 1.27.3 (exit 0), the case 4 the issue closed online; "pin outdated"
// suppresses the refusal it would report online (d.unread).
//
// FIX: policy.go exact/pick: a decision that rests on content out of reach
// (dc.unread) may lock only where the order is decided by content (Equal
// by digest to a floor); otherwise refuse with "the pin's content is out
// of reach offline: run online once, or add a mirror".
func TestReviewOfflinePinTextBelieved(t *testing.T) {
	real1226 := word(repo, "1.22.6/2024-03-01+1.22.6")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.30.0", real1226)}
	seen := observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil)
	in := Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Observed: seen, Now: reviewNow} // offline: no registry
	d := Resolve(context.Background(), in).Decisions[0]
	if d.New() != nil {
		t.Errorf("offline, locked the pin's digest on the word of its tag 1.30.0 (its content unread): %q", d.New().Reason)
	}
}

// TestReviewOutdatedOfflineHidesRegression.
//
// HOLE (resolve and outdated disagree): offline, with the pin's content out
// of reach, "pin resolve" refuses a pin edited below what runs (exit 1),
// but checker.wouldResolve skips every refusal of a decision whose pin was
// unread (d.unread): "pin outdated --offline" says current, exit 0, for the
// very regression it reports online.
//
// FIX: outdated.go wouldResolve: report the refusal of an unread decision
// too (as regression or unknown-order, noting that the pin's content was
// out of reach), or say error; never nothing.
func TestReviewOutdatedOfflineHidesRegression(t *testing.T) {
	running := word(repo, "1.27.3/2026-09-01+1.27.3")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.22.6", word(repo, "1.22.6/2024-03-01+1.22.6"))}
	seen := observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil)
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "exact", Image: repo, Tag: "1.27.3", Digest: running.Digest,
		Version: "1.27.3", Created: running.Created, Source: "pin"}}}
	in := Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Old: old, Observed: seen, Now: reviewNow} // offline
	d := Resolve(context.Background(), in).Decisions[0]
	if d.Refusal() == nil {
		t.Fatalf("precondition: offline resolve should refuse the pin edited down: %+v %v", d.New(), d.Err())
	}
	s := Outdated(context.Background(), in, nil)[0]
	if s.Has(StatusCurrent) {
		t.Errorf("offline outdated says %v where offline resolve refuses: %v", s.Statuses, d.Refusal())
	}
}

// TestReviewJudgeOrdersUnreadReferenceByItsTag.
//
// HOLE (documented in Judge's comment, avoidable): a new image the
// registry pin reads does not hold (the cluster pulls through a mirror pin
// does not see, or a tag pushed elsewhere) is ordered by the words of its
// reference: "svc:1.30.0" is an upgrade over a running 1.27.3 and is
// admitted, although nothing of its content was read. Everywhere else pin
// refuses what it cannot read (an unknown order never passes).
//
// FIX: judge.go describeNew: image.ErrNotFound for the new image is an
// Unknown order (refused unless the override states it), not a licence to
// believe the tag; image.ErrUnavailable likewise unless the caller opts in.
func TestReviewJudgeOrdersUnreadReferenceByItsTag(t *testing.T) {
	reg := newFakeRegistry(repo, "1.27.3/2026-09-01+1.27.3")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	seen := observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil)
	j, err := Judge(context.Background(), inputOf(m, reg, nil, seen), m, image.Image{Repository: repo, Tag: "1.30.0"}, Override{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Allowed() {
		t.Errorf("Judge admits %s:1.30.0, which the registry does not hold, as %s (%s): only its tag was weighed", repo, j.Verdict, j.Order.Detail)
	}
}

// unavailable is an offline registry whose cache holds nothing.
type unavailable struct{}

func (unavailable) Tags(context.Context, string) ([]string, error) {
	return nil, fmt.Errorf("tag lists are not cached: %w", image.ErrUnavailable)
}

func (unavailable) Image(_ context.Context, _, ref, _ string) (image.Image, error) {
	return image.Image{}, fmt.Errorf("%s: %w", ref, image.ErrUnavailable)
}

// TestReviewOfflineLockOfIndexFailsOnline.
//
// HOLE (determinism, fails closed): offline with a cold cache, lockFloor
// locks a running image "as the host knows it": the host's repo digest
// (for a multi-platform image pulled by tag, the INDEX digest) with the
// host's image ID as config (classic store) and no platforms. The next
// online run reads that digest's content, finds an index, and lockedImage
// calls the entry hand-edited (LockMismatchError on "platforms", exit 2)
// although pin wrote it and nothing changed.
//
// FIX: resolve/policy.go lockFloor: where the content is out of reach, do
// not write a config (or platforms) the host cannot vouch for being the
// digest's own (the image ID is the platform's config, not the index's);
// or content.go lockedImage: compare an entry's config with the config of
// the platform manifest when the digest names an index.
func TestReviewOfflineLockOfIndexFailsOnline(t *testing.T) {
	reg := newIndexRegistry(newFakeRegistry(repo))
	idx := reg.add("1.27.3", map[string]string{"linux/amd64": "1.27.3/2026-09-01+1.27.3", "linux/arm64": "1.27.3/2026-09-01+1.27.3-arm"})
	amd := reg.indexes[idx]["linux/amd64"]
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, RunsOn: []catalogue.RunsOn{{Host: "host-0", Container: "svc"}}}
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{"host-0": {Host: "host-0", ImageStore: "classic",
		Containers: []host.Container{{ID: "c", Name: "svc", Image: repo + ":1.27.3", ImageID: amd.ConfigDigest, State: "running"}},
		Images: []host.Image{{ID: amd.ConfigDigest, RepoDigests: []string{repo + "@" + idx}, Created: amd.Created, Labels: amd.Labels,
			OS: "linux", Arch: "amd64"}}}}, Errors: map[string]error{}}
	first := Resolve(context.Background(), inputOf(m, unavailable{}, nil, seen)).Decisions[0]
	if first.New() == nil {
		t.Fatalf("offline: %v %v", first.Refusal(), first.Err())
	}
	second := Resolve(context.Background(), inputOf(m, reg, &lock.Lock{Modules: []*lock.Module{first.New()}}, seen)).Decisions[0]
	if second.Err() != nil {
		t.Errorf("online after offline, nothing changed: %v", second.Err())
	}
}

// TestReviewFromHostRewritesRecordedObservations.
//
// HOLE (determinism): "pin lock --from-host host-0" re-describes what the
// lock recorded on host-1 from its digest's content (describeRecorded) for
// the module's platform (m.Platform(), linux/amd64), and writes that back
// as host-1's observation. host-1 is linux/arm64 and runs a multi-platform
// index whose arm64 config was built a day after the amd64 one: the
// recorded created line of host-1 changes although nothing on host-1
// changed, and the next "pin resolve" changes it back. "pin resolve
// --check" after "pin lock --from-host" fails on an unchanged fleet.
//
// FIX: resolve.go describeRecorded: describe a recorded observation for
// its own platform (record the platform in the observation), or keep the
// recorded created/version lines and only check them against content.
func TestReviewFromHostRewritesRecordedObservations(t *testing.T) {
	reg := newIndexRegistry(newFakeRegistry(repo))
	idx := reg.add("1.27.3", map[string]string{"linux/amd64": "1.27.3/2026-09-01+1.27.3", "linux/arm64": "1.27.3/2026-09-02+1.27.3"})
	snap := func(h, platform string) *host.Snapshot {
		img := reg.indexes[idx][platform]
		os, arch, _ := strings.Cut(platform, "/")
		return &host.Snapshot{Host: h, ImageStore: "classic",
			Containers: []host.Container{{ID: "c", Name: "svc", Image: repo + ":1.27.3", ImageID: img.ConfigDigest, State: "running"}},
			Images: []host.Image{{ID: img.ConfigDigest, RepoDigests: []string{repo + "@" + idx}, Created: img.Created, Labels: img.Labels,
				OS: os, Arch: arch}}}
	}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning,
		RunsOn: []catalogue.RunsOn{{Host: "host-0", Container: "svc"}, {Host: "host-1", Container: "svc"}}}
	all := observe.Observed{Snapshots: map[string]*host.Snapshot{"host-0": snap("host-0", "linux/amd64"), "host-1": snap("host-1", "linux/arm64")}, Errors: map[string]error{}}
	first := Resolve(context.Background(), inputOf(m, reg, nil, all)).Decisions[0]
	if first.New() == nil {
		t.Fatalf("resolve: %v %v", first.Refusal(), first.Err())
	}
	one := observe.Observed{Snapshots: map[string]*host.Snapshot{"host-0": all.Snapshots["host-0"]}, Errors: map[string]error{}}
	in := inputOf(m, reg, &lock.Lock{Modules: []*lock.Module{first.New()}}, one)
	in.Mode, in.Record.Host = ModeFromHost, "host-0"
	second := Resolve(context.Background(), in).Decisions[0]
	if second.Err() != nil || second.Refusal() != nil {
		t.Fatalf("lock --from-host host-0: %v %v", second.Err(), second.Refusal())
	}
	if second.Change() != ChangeNone {
		for i := range first.New().Observed {
			if i < len(second.New().Observed) && first.New().Observed[i] != second.New().Observed[i] {
				t.Errorf("lock --from-host host-0 rewrote what host-1 ran, although nothing changed:\n was %+v\n now %+v", first.New().Observed[i], second.New().Observed[i])
			}
		}
		if !t.Failed() {
			t.Errorf("lock --from-host host-0 changed the entry over an unchanged fleet: %+v → %+v", first.New(), second.New())
		}
	}
}
