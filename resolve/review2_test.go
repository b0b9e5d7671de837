package resolve

// A second reading of the fail-closed rules (claims.go, unread entries,
// allow_downgrade spent once, the hosts line, containerd-store platforms,
// created lines). Each test here FAILS on the code it was written against:
// it shows a way pin still fails open (a lock, a plan verdict, an
// admission or an outdated status that could downgrade a service without
// the catalogue's words), or refuses what is clearly safe with no way out.
// Each says what the hole is and where the fix belongs. They use the kits
// of scenario_test.go (word, newFakeRegistry), review_test.go (observed,
// inputOf, pinOf, indexRegistry), liveness_test.go (headRegistry) and
// claims_test.go (unlabelledFleet).

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

// TestReview2HostVouchesForTagItNeverResolved.
//
// HOLE: a host "vouches" for the tag of every container it reports
// (decider.tags, and the claims of Outdated, PlanCutover and Judge, vouch
// o.Image), including a container started from "repo:tag@sha256:…". Such
// a reference is pulled by digest: Docker, containerd and the kubelet
// never resolve its tag, so the tag is the deployer's word, exactly the
// claim claims.go does not believe in a catalogue pin, a lock line or an
// admission request. And it is what pin's own deploys write: "pin export"
// writes "repo:tag@digest" (internal/export). So a lie is laundered
// through a deploy: "svc:1.30.0@<digest of the unlabelled 1.22.6>" in a
// compose file or manifest (a copy-paste slip, or a hand-edited lock
// exported), running on host-0, is believed to be 1.30.0; "pin resolve"
// locks it over host-1's 1.25.0 (exit 0), and "pin plan host-1" says
// UPGRADE while the deploy pulls 1.22.6 over 1.25.0. The same request
// through "pin admit" is refused (describeNew offers it and checks it).
//
// FIX: internal/observe/observe.go containerImage knows the reference
// named a digest (the name.Digest case): say so on the Observation (e.g.
// Observation.TagClaimed, or keep the tag out of Image.Tag and in a field
// of its own), and have the vouching loops (decider.tags in policy.go,
// checkModule in outdated.go, PlanCutover in cutover.go, and Judge through
// decider.tags) vouch only tags the host resolved (a reference without a
// digest). A "tag@digest" container's tag is then a claim checked by one
// HEAD like a lock line, both ways (it is a floor). Mind the interplay with
// TestReview2RepublishedTagDeadEnd: today this false vouch is what keeps
// exported deploys of unlabelled official images orderable after upstream
// re-publishes their tag; fixed alone, those modules hit that dead end too.
func TestReview2HostVouchesForTagItNeverResolved(t *testing.T) {
	ctx := context.Background()
	reg, imgs := unlabelledFleet()
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	seen := observed(m, []run{{host: "host-0", word: "1.22.6"}, {host: "host-1", word: "1.25.0"}}, nil)
	// host-0 was deployed from "svc:1.30.0@<1.22.6's digest>".
	c := &seen.Snapshots["host-0"].Containers[0]
	c.Image = repo + ":1.30.0@" + imgs["1.22.6"].Digest

	in := inputOf(m, reg, nil, seen)
	d := Resolve(ctx, in).Decisions[0]
	if d.New() != nil && d.New().Digest == imgs["1.22.6"].Digest {
		t.Errorf("resolve locked 1.22.6's content as %q (version %s) over host-1's 1.25.0, on the word of a tag no host resolved: %q",
			d.New().Tag, d.New().Version, d.New().Reason)
	}

	// The plan of host-1 against a lock that names what host-0 runs.
	in.Old = &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.30.0", Version: "1.30.0",
		Digest: imgs["1.22.6"].Digest, Source: "running"}}}
	if cut := cutoverOf(t, in, "host-1"); cut.Verdict == VerdictUpgrade || cut.Verdict == VerdictSame {
		t.Errorf("pin plan host-1 says %s (%s): the deploy pulls 1.22.6's content over 1.25.0", cut.Verdict, cut.Order.Detail)
	}
}

// TestReview2TagAddsPrecisionToALabel.
//
// HOLE: claims.compare checks a tag only where the version is FromTag
// (the image has no version label). Where the label is less precise than
// the tag ("1.27", as images labelled with their release branch or a
// base image's series are), order.VersionOf calls the two agreeing
// (FromBoth) and takes the TAG's version: the patch level is the tag's
// word alone, and nothing checks it. An admission request for
// "svc:1.27.9@<digest of 1.27.1, labelled 1.27>" over a running 1.27.5 is
// an upgrade and admitted; the same pin in the catalogue is locked by
// "exact" (exit 0) and "pin plan" says UPGRADE. The deploy runs 1.27.1
// over 1.27.5. The same lie with a tag that has no label to agree with is
// refused today (TestTagClaimOnUnlabelledImage).
//
// FIX: claims.go compare: check the claim whenever the tag says more than
// the content: Kind FromTag, or FromBoth with c.Tag.Precision() >
// c.Label.Precision() (the version taken is the tag's). Where the claim is
// not believed, order by the label alone (or Unknown). order.Claim could
// say so itself (a "tag decided" flag), so that every caller asks the same.
func TestReview2TagAddsPrecisionToALabel(t *testing.T) {
	ctx := context.Background()
	f := newFakeRegistry(repo, "1.27.1+1.27", "1.27.5+1.27.5", "1.27.9+1.27.9")
	heads := map[string]string{}
	for tag, img := range f.byTag {
		heads[tag] = img.Digest
	}
	reg := &headRegistry{Registry: f, heads: heads}
	old := f.byTag["1.27.1"] // labelled "1.27": truly 1.27.1
	runs := []run{{host: "host-0", word: "1.27.5+1.27.5"}}

	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.27.9", old)}
	in := inputOf(m, reg, nil, observed(m, runs, nil))
	if d := Resolve(ctx, in).Decisions[0]; d.New() != nil {
		t.Errorf("exact pin 1.27.9@<1.27.1 labelled 1.27> locked over a running 1.27.5: version %s, %q", d.New().Version, d.New().Reason)
	}
	j, err := Judge(ctx, in, m, image.Image{Repository: repo, Tag: "1.27.9", Digest: old.Digest}, Override{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Allowed() {
		t.Errorf("admitted svc:1.27.9@<1.27.1 labelled 1.27> over a running 1.27.5: %s (%s)", j.Verdict, j.Order.Detail)
	}
}

// TestReview2ContainerdHostReadForAnotherPlatform.
//
// HOLE (a regression of adf7191): Enrich now gives the image a
// containerd-store host names by its index digest the index's Platforms
// (mayBeIndex), keeping the host's own platform, date and labels. But
// decider.compare → readOn re-reads any image with Platforms for the
// OTHER side's platform: the container's own build (arm64, what the host
// runs) is replaced by the index's amd64 build whenever the candidate was
// described for amd64 (the platform of the first container, host-0). The
// candidate's arm64 build is then held against the container's amd64
// build: two builds no host runs against each other. Below, "latest"'s
// arm64 build (2026-08-01) is older than the arm64 build host-1 runs
// (2026-09-01); resolve locks it (exit 0) because the container's amd64
// build dates 2026-06-01, while "pin plan host-1" on that lock says
// DOWNGRADE. Before adf7191 (no Platforms on the observation) resolve
// refused.
//
// FIX: policy.go compare / readOn: never re-read a floor that is a
// container for another platform: what a host reports it runs is one
// platform's build (readOn should return img as is when img.ImageID != ""
// and img.Platform != "", i.e. what a host described; or compare should
// re-read only the side that is offered, the pin or candidate, as
// PlanCutover already does).
func TestReview2ContainerdHostReadForAnotherPlatform(t *testing.T) {
	ctx := context.Background()
	reg := newIndexRegistry(newFakeRegistry(repo))
	cand := reg.add("latest", map[string]string{"linux/amd64": "-/2026-10-01", "linux/arm64": "-/2026-08-01"})
	runsIdx := reg.add("", map[string]string{"linux/amd64": "-/2026-06-01", "linux/arm64": "-/2026-09-01"})

	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Tag: "latest"}
	seen := observed(m, []run{{host: "host-0", word: "latest/2026-05-01", platform: "linux/amd64"}}, nil)
	// host-1: Docker with the containerd image store, on arm64, running
	// the arm64 build of runsIdx (image ID = the index digest).
	arm := reg.indexes[runsIdx]["linux/arm64"]
	m.RunsOn = append(m.RunsOn, catalogue.RunsOn{Host: "host-1", Container: "svc"})
	seen.Snapshots["host-1"] = &host.Snapshot{Host: "host-1", ImageStore: "containerd",
		Containers: []host.Container{{ID: "c1", Name: "svc", Image: repo + ":latest", ImageID: runsIdx, State: "running"}},
		Images:     []host.Image{{ID: runsIdx, RepoDigests: []string{repo + "@" + runsIdx}, Created: arm.Created, OS: "linux", Arch: "arm64"}},
	}
	in := inputOf(m, reg, nil, seen)
	d := Resolve(ctx, in).Decisions[0]
	if d.New() != nil && d.New().Digest == cand {
		t.Errorf("resolve locked %s, whose linux/arm64 build (2026-08-01) is older than what host-1 (linux/arm64, containerd store) runs (2026-09-01): %q",
			image.Short(cand), d.New().Reason)
	}
	// plan host-1 over that lock: the two must agree.
	in.Old = &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "track-upstream", Image: repo, Tag: "latest", Digest: cand,
		Platforms: reg.indexes[cand]["linux/amd64"].Platforms, Created: reg.indexes[cand]["linux/amd64"].Created, Source: "upstream"}}}
	if cut := cutoverOf(t, in, "host-1"); cut.Verdict != VerdictDowngrade {
		t.Errorf("precondition: pin plan host-1 says %s (%s), want downgrade", cut.Verdict, cut.Order.Detail)
	}
}

// TestReview2OutdatedJudgesIndexForAnotherPlatform.
//
// HOLE (outdated disagrees with plan and resolve): the first review's
// TestReviewIndexJudgedForAnotherPlatform made resolve and PlanCutover hold
// an index against each container by that container's platform's build
// (readOn). Outdated did not follow: checkModule reads the locked index
// once, for the platform of the first floor (checker.platform), and
// checker.running compares every container with that build. Below, the
// lock's "latest" index gives linux/arm64 a build of 2026-06-01 while
// host-1 (linux/arm64) runs one of 2026-09-01: "pin plan host-1" says
// DOWNGRADE and "pin resolve" moves the lock to what host-1 runs, but "pin
// outdated" compares host-1 with the amd64 build (2026-10-01) and reports
// no behind-running, only skew (which says nothing of the lock): the check people run in CI to catch a lock behind what
// runs is the one that misses it.
//
// FIX: outdated.go checker.running: order each container against the
// locked image read for that container's platform (readOn(ctx, c.reg,
// c.m, *c.locked, o.Image.Platform, memo), as PlanCutover does), and
// checker.judge the candidate likewise; and wouldResolve could report a
// decision that moves the lock to a running image (d.New.Source ==
// "running", digest != the lock's) as behind-running, so that outdated
// never says current where resolve would change the lock for a floor.
func TestReview2OutdatedJudgesIndexForAnotherPlatform(t *testing.T) {
	ctx := context.Background()
	reg := newIndexRegistry(newFakeRegistry(repo))
	idx := reg.add("latest", map[string]string{"linux/amd64": "-/2026-10-01", "linux/arm64": "-/2026-06-01"})
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream, Tag: "latest"}
	seen := observed(m, []run{
		{host: "host-0", word: "latest/2026-08-01", platform: "linux/amd64"},
		{host: "host-1", word: "latest/2026-09-01", platform: "linux/arm64"},
	}, nil)
	for _, s := range seen.Snapshots {
		for i := range s.Images {
			s.Images[i].Labels = nil
		}
	}
	amd := reg.indexes[idx]["linux/amd64"]
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "track-upstream", Image: repo, Tag: "latest", Tags: []string{"latest"},
		Digest: idx, Config: amd.ConfigDigest, Platforms: amd.Platforms, Created: amd.Created, Source: "upstream", Hosts: []string{"host-0", "host-1"}}}}
	in := inputOf(m, reg, old, seen)
	if cut := cutoverOf(t, in, "host-1"); cut.Verdict != VerdictDowngrade {
		t.Fatalf("precondition: pin plan host-1 says %s (%s), want downgrade", cut.Verdict, cut.Order.Detail)
	}
	d := Resolve(ctx, in).Decisions[0]
	if d.New() == nil || d.New().Digest == idx {
		t.Fatalf("precondition: resolve should move the lock off %s: %+v %v %v", image.Short(idx), d.New(), d.Refusal(), d.Err())
	}
	if s := Outdated(ctx, in, nil)[0]; !s.Has(StatusBehindRunning) && !s.Has(StatusUnknownOrder) {
		t.Errorf("pin outdated says %v (no behind-running) while pin plan host-1 says downgrade and pin resolve moves the lock to %q (%s)", s.Statuses, d.New().Tag, d.New().Reason)
	}
}

// TestReview2JudgeBelievesAnotherRepository.
//
// HOLE: Judge describes the new image from the registry of ITS OWN
// repository (describeNew: in.Registry(img.Repository)) and vouches for its
// tag there (vouchRef), whatever repository that is; the module is found
// by the workload or container name, not by image. So an admission that
// swaps a guarded Deployment's image for "evil.example.org/x/svc:99.0.0"
// (any repository someone can push to, its tags and labels theirs to
// write; here 1.22.6's unlabelled content under a tag 99.0.0) is ordered
// by that repository's word against the module's floors: version 99.0.0 >
// 1.25.0, an upgrade, admitted. A copy of an old release in a personal
// or mirror repository is admitted over the module's newer one the same
// way. Content by digest is only evidence of ORDER within the module's
// repository (or a mirror the catalogue names for it), whose tags the
// floors were read from.
//
// FIX: judge.go Judge/describeNew: a new image whose repository is not the
// module's (m.Image, after normalisation; or a repository the catalogue
// declares as its mirror) is judged by content only: Equal by digest to a
// floor, else Unknown (refused unless the override says why), with a fix
// saying "deploy from <m.Image>". Alternatively key claims.vouched by
// repository, and never vouch a tag of another repository.
func TestReview2JudgeBelievesAnotherRepository(t *testing.T) {
	ctx := context.Background()
	const evil = "evil.example.org/x/svc"
	mine, _ := unlabelledFleet()
	theirs := newFakeRegistry(evil)
	old := word(evil, "1.22.6") // the same content as the module's 1.22.6
	fake := old
	fake.Tag = "99.0.0"
	theirs.byTag["99.0.0"], theirs.byDigest[old.Digest] = fake, old
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	in := inputOf(m, mine, nil, observed(m, []run{{host: "host-0", word: "1.25.0"}}, nil))
	in.Registry = func(r string) Registry {
		if r == evil {
			return theirs
		}
		return mine
	}
	j, err := Judge(ctx, in, m, image.Image{Repository: evil, Tag: "99.0.0"}, Override{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Allowed() {
		t.Errorf("admitted %s:99.0.0 (the module's 1.22.6 content) over a running %s:1.25.0: %s (%s)", evil, repo, j.Verdict, j.Order.Detail)
	}
}

// TestReview2RepublishedTagDeadEnd.
//
// DEAD END: official images carry no version label and are re-published
// under the same full tags whenever their base image is rebuilt. A
// track-upstream module locked at 1.27.3@D0 (by pin, from the registry)
// is refused on every later run once upstream re-publishes 1.27.3: the
// entry's tag claim no longer names D0 (claims.ask), so the newest tag
// 1.27.4 "cannot be ordered" against the lock, and nothing runs D0 to
// vouch for it. The refusal's first advice, "to keep what the previous
// lock names, write pin = \"1.27.3@D0\"", does nothing for track-upstream
// (its pin only chooses the variant: trackUpstream never reads it), and
// following it gives the same refusal. The only way out is allow_downgrade
// for what is an upgrade, and those words are spent the next time: a
// reason never accepts a new order against the previous entry (spentFor:
// a FloorLocked is never "recorded"), so each re-publish of the locked tag
// (weekly for official images) needs new words in the catalogue. Users
// will automate the words, and the words then mean nothing.
//
// FIX: policy.go fix(): for track-upstream, do not offer pin = (offer
// "policy = \"exact\", pin = …" to stay, or allow_downgrade). Better, give
// the entry's claim a source that survives a re-publish: pin wrote the
// entry from the registry's answer (source = "upstream", tags line), so
// record that answer where a lock edit cannot forge it (e.g. the disk
// cache's tag history: Remote.manifest sees every tag → digest it resolved;
// keep "tag@digest seen" entries, not only the latest hint, and let
// claims.ask accept a claim the registry once answered on this machine),
// and/or treat "the tag now names a later build of the same tag" as
// the registry vouching for the claim's version (not its date).
func TestReview2RepublishedTagDeadEnd(t *testing.T) {
	ctx := context.Background()
	before := word(repo, "1.27.3/2026-09-01") // what 1.27.3 named when locked
	f := newFakeRegistry(repo, "1.27.3/2026-11-01", "1.27.4/2026-11-02")
	f.byDigest[before.Digest] = before
	heads := map[string]string{"1.27.3": f.byTag["1.27.3"].Digest, "1.27.4": f.byTag["1.27.4"].Digest}
	reg := &headRegistry{Registry: f, heads: heads}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream}
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "track-upstream", Image: repo, Tag: "1.27.3", Tags: []string{"1.27.3"},
		Digest: before.Digest, Version: "1.27.3", Created: before.Created, Source: "upstream"}}}
	d := Resolve(ctx, inputOf(m, reg, old, observe.Observed{})).Decisions[0]
	if d.Refusal() == nil {
		return // locked or kept: no dead end
	}
	// Follow the refusal's first advice.
	if want := "write pin = \"1.27.3@" + before.Digest + "\""; !strings.Contains(d.Refusal().Error(), want) {
		t.Fatalf("precondition: the refusal advises %s: %v", want, d.Refusal())
	}
	m.Pin = pinOf("1.27.3", before)
	if d2 := Resolve(ctx, inputOf(m, reg, old, observe.Observed{})).Decisions[0]; d2.Refusal() != nil {
		t.Errorf("the refusal of a re-published, unlabelled locked tag advises pin = \"1.27.3@<locked digest>\" for a track-upstream module; written, it changes nothing:\n%v", d2.Refusal())
	}

	// allow_downgrade gets out once; the next re-publish spends the words.
	m.Pin, m.AllowDowngrade = catalogue.Pin{}, "upstream re-published 1.27.3"
	d = Resolve(ctx, inputOf(m, reg, old, observe.Observed{})).Decisions[0]
	if d.New() == nil {
		t.Fatalf("with allow_downgrade: %v %v", d.Refusal(), d.Err())
	}
	republished := word(repo, "1.27.4/2026-11-20")
	f.byTag["1.27.4"], f.byDigest[republished.Digest], heads["1.27.4"] = republished, republished, republished.Digest
	f.byDigest[d.New().Digest] = word(repo, "1.27.4/2026-11-02")
	if d3 := Resolve(ctx, inputOf(m, reg, &lock.Lock{Modules: []*lock.Module{d.New()}}, observe.Observed{})).Decisions[0]; d3.Refusal() != nil {
		t.Logf("and after 1.27.4 is re-published too, the same words are refused as spent (%s): a new reason per upstream rebuild", d3.Refusal().Kind)
	}
}

// TestReview2FromHostIgnoresLabelHosts.
//
// HOLE: the hosts line (lock.Module.Hosts) and the hosts-not-read refusal
// (unrecordedHosts) know only the module's runs_on hosts. But a container
// labelled pin.module=<module> on ANY host is taken over
// (observe.Observations), and "pin resolve" reads every host for it. A
// host added to the catalogue after the entry was written (host-3 below,
// where the module is deployed by label, as docs/reference.md invites) is
// as unknown to "pin lock --from-host host-0" as a runs_on host that
// joined, yet it is not refused: the module is locked at what host-0 runs
// (1.25.0), below the 1.27.3 host-3 runs, exit 0; "pin resolve" would lock
// 1.27.3. (A host of the catalogue the entry did read is as known as a
// runs_on host recorded running nothing; the entry cannot tell the two
// apart today.)
//
// FIX: lock, resolve.go: record in the entry every catalogue host whose
// containers were read for the module (pin resolve reads all of them:
// hostsKnown over in.Catalogue.Hosts, not m.RunsOn), and make
// unrecordedHosts consider every catalogue host when the module can be
// taken over by label (always), so that a catalogue host the entry does
// not name is refused as hosts-not-read, as a runs_on host is.
func TestReview2FromHostIgnoresLabelHosts(t *testing.T) {
	ctx := context.Background()
	reg := newFakeRegistry(repo, "1.22.6/2026-01-01+1.22.6", "1.25.0/2026-05-01+1.25.0", "1.27.3/2026-09-01+1.27.3")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	// pin resolve, when the catalogue had host-0 alone.
	first := Resolve(ctx, inputOf(m, reg, nil, observed(m, []run{{host: "host-0", word: "1.22.6/2026-01-01+1.22.6"}}, nil))).Decisions[0]
	if first.New() == nil {
		t.Fatalf("pin resolve: %v %v", first.Refusal(), first.Err())
	}
	// host-3 joins the catalogue and runs the module by label (1.27.3);
	// host-0 moves to 1.25.0; pin lock --from-host host-0.
	in := inputOf(m, reg, &lock.Lock{Modules: []*lock.Module{first.New()}}, observed(m, []run{{host: "host-0", word: "1.25.0/2026-05-01+1.25.0"}}, nil))
	in.Catalogue.Hosts = []*catalogue.Host{{Name: "host-0"}, {Name: "host-3"}}
	in.Mode, in.Record.Host = ModeFromHost, "host-0"
	d := Resolve(ctx, in).Decisions[0]
	if d.New() != nil {
		t.Errorf("lock --from-host host-0 locked %s (%q) with host-3, a catalogue host never read for the module (which takes over pin.module=svc on any host), not refused",
			d.New().Version, d.New().Reason)
	}
}

// TestReview2OfflineColdCacheAdvice.
//
// DEAD END (advice that does not work): offline with a cold cache (a CI
// runner, a fresh clone: README's own "pin resolve" runs offline), every
// lock entry is "unread" (ErrUnavailable), and an at-least-running module
// whose lock is ahead of what runs (the normal state between "pin
// resolve" and the deploy) is refused as lock-not-served on an unchanged
// world. The refusal (unreadLock) says the registry "does not serve that
// digest (or, offline, nothing holds it)" and advises to "Push the image
// back", "give its registry a mirror", or allow_downgrade: the registry
// serves it, a mirror is not what is missing, and allow_downgrade then
// refuses again ("without a pin nothing says which image to lock"). What
// works, running once without --offline so the cache holds the entry's
// content, is not said (unreadPin says it for a pin).
//
// FIX: policy.go unreadLock: tell the two causes apart (lockedImage knows:
// ErrUnavailable vs ErrNotFound; carry it on Floor, e.g. Floor.Offline) and,
// offline, advise "run without --offline once (the cache then holds
// <digest>), or give registry <repo> a mirror"; keep "push it back" for a
// digest the registry answered it does not serve. Refusal kind could
// differ too (lock-not-read vs lock-not-served) for scripts.
func TestReview2OfflineColdCacheAdvice(t *testing.T) {
	ctx := context.Background()
	ahead := word(repo, "1.27.3/2026-09-01+1.27.3")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.27.3", Version: "1.27.3",
		Digest: ahead.Digest, Created: ahead.Created, Source: "pin", Hosts: []string{"host-0"}}}}
	in := inputOf(m, unavailable{}, old, observed(m, []run{{host: "host-0", word: "1.25.0/2026-05-01+1.25.0"}}, nil))
	d := Resolve(ctx, in).Decisions[0]
	if d.Refusal() == nil {
		return // kept: no dead end
	}
	msg := d.Refusal().Error()
	if !strings.Contains(msg, "without --offline") {
		t.Errorf("offline with a cold cache, the refusal of an entry the registry serves does not say to run online once:\n%s", msg)
	}
	if strings.Contains(msg, "Push the image back") {
		t.Errorf("offline, the refusal advises pushing back an image the registry serves:\n%s", msg)
	}
}

// TestReview2AllowDowngradeRechargesAfterACleanRun.
//
// HOLE: "a reason accepts one downgrade" rests on the lock remembering
// that the words were used (spentFor: old.AllowDowngrade == the words).
// But decider.entry writes allow_downgrade only on a run that needed it
// (dg != nil): once the downgrade is deployed (host-0 runs 1.22.6 too),
// the next "pin resolve" needs no downgrade and drops the line, while the
// catalogue still states the words. The words are then unspent again: a
// host that starts 1.28.0 later (the case TestAllowDowngradeAcceptsOneDowngrade
// refuses) is downgraded to 1.22.6 on the same old words, exit 0, and so
// is a pin edited below the entry after a revert. Every deploy of the
// rollback recharges the reason.
//
// FIX: entry.go decider.entry: keep the entry's allow_downgrade (and
// restore) while the catalogue states the same words, even on a run that
// needed no downgrade (the line then records that the words were spent,
// and recordedBy holds them to the containers recorded); or record the
// spent words in a line of their own ("spent = …"), so that spentFor can
// tell words never used from words used and cleared.
func TestReview2AllowDowngradeRechargesAfterACleanRun(t *testing.T) {
	ctx := context.Background()
	reg := newFakeRegistry(repo, "1.22.6+1.22.6", "1.27.3+1.27.3", "1.28.0+1.28.0")
	pin := word(repo, "1.22.6+1.22.6")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.22.6", pin), AllowDowngrade: "the 1.27 schema broke reports; restored from the nightly dump"}
	resolveWith := func(old *lock.Module, running string) *Decision {
		var l *lock.Lock
		if old != nil {
			l = &lock.Lock{Modules: []*lock.Module{old}}
		}
		return Resolve(ctx, inputOf(m, reg, l, observed(m, []run{{host: "host-0", word: running}}, nil))).Decisions[0]
	}
	first := resolveWith(nil, "1.27.3+1.27.3") // the stated downgrade
	if first.New() == nil || first.New().AllowDowngrade == "" {
		t.Fatalf("first: %v %v", first.New(), first.Refusal())
	}
	deployed := resolveWith(first.New(), "1.22.6+1.22.6") // host-0 now runs the rollback
	if deployed.New() == nil {
		t.Fatalf("deployed: %v %v", deployed.Refusal(), deployed.Err())
	}
	next := resolveWith(deployed.New(), "1.28.0+1.28.0") // host-0 starts 1.28.0 since
	if next.New() != nil {
		t.Errorf("a second downgrade (1.28.0 → 1.22.6) accepted on words already spent, because the run after the deploy dropped them from the lock (allow_downgrade line %q): %q",
			deployed.New().AllowDowngrade, next.New().Reason)
	}
}
