package truth

// This file is the only one that calls pin: when pin's API changes, rewire
// it and nothing else. Everything it returns is in the oracle's terms
// (digests, refusal kinds, verdict and status words).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Outcome is pin's decision for one module.
type Outcome struct {
	// Digest is the digest the new lock entry names; "" when none.
	Digest string
	// Refused is the refusal kind; Err the error; both "" when decided.
	Refused string
	Err     string
}

// Decided reports whether pin decided without refusing or failing.
func (o Outcome) Decided() bool { return o.Refused == "" && o.Err == "" }

// Result is one resolve or lock --from-host run.
type Result struct {
	Outcomes map[string]Outcome
	// Written is true when the lock would be written: no refusal, no
	// failure; Lock is then its bytes.
	Written bool
	Lock    []byte
	// Text renders everything decided, for the determinism check.
	Text string
}

// Cutover is plan's verdict for one container.
type Cutover struct {
	Module, Host, Verdict string
}

// Verdicts plan may give that say the cutover is safe.
var safeVerdicts = []string{string(resolve.VerdictUpgrade), string(resolve.VerdictSame)}

// Statuses outdated may give that do not fail: every other status (those
// of today and any a later pin adds) is taken as a failing one.
var passingStatuses = []string{string(resolve.StatusCurrent), string(resolve.StatusBehindUpstream), string(resolve.StatusSkew), string(resolve.StatusUnlocked)}

// runResolve runs "pin resolve" (fromHost and only empty), "pin resolve
// only", or "pin lock --from-host fromHost", which observes only that
// host.
func runResolve(w *World, fromHost, only string) Result {
	hosts := w.catalogueHosts()
	if fromHost != "" {
		hosts = []*Host{w.Host(fromHost)}
	}
	in := resolve.Input{Catalogue: catalogueOf(w), Old: parseLock(w.Lock), Registry: registryOf(w), Now: Now}
	in.Observed, in.Record = read(w, hosts, fromHost)
	if fromHost != "" {
		in.Mode = resolve.ModeFromHost
	}
	if only != "" {
		in.Record.Only = []string{only}
	}
	return resultOf(resolve.Resolve(context.Background(), in))
}

// resultOf is a resolve plan in the oracle's terms.
func resultOf(plan *resolve.Plan) Result {
	res := Result{Outcomes: map[string]Outcome{}}
	var text strings.Builder
	for _, d := range plan.Decisions {
		if d.Unselected() {
			continue
		}
		var o Outcome
		switch {
		case d.Err() != nil:
			o.Err = d.Err().Error()
		case d.Refusal() != nil:
			o.Refused = string(d.Refusal().Kind)
		case d.New() != nil:
			o.Digest = d.New().Digest
		}
		res.Outcomes[d.Module.Name] = o
		fmt.Fprintf(&text, "%s: %+v\n", d.Module.Name, o)
		if d.Refusal() != nil {
			text.WriteString(d.Refusal().Error() + "\n")
		}
	}
	res.Written = !plan.Refused() && !plan.Failed()
	if res.Written {
		res.Lock = lock.Format(plan.Lock())
		text.Write(res.Lock)
	}
	res.Text = text.String()
	return res
}

// runPlan runs "pin plan host".
func runPlan(w *World, hostName string) ([]Cutover, error) {
	cuts, err := resolve.PlanCutover(context.Background(), resolve.Input{Catalogue: catalogueOf(w), Old: parseLock(w.Lock),
		Observed: observed(w, []*Host{w.Host(hostName)}), Registry: registryOf(w), Now: Now, Record: resolve.Record{Host: hostName}})
	var out []Cutover
	for _, c := range cuts {
		out = append(out, Cutover{Module: c.Module, Host: c.Observation.Host, Verdict: string(c.Verdict)})
	}
	return out, err
}

// runOutdated runs "pin outdated": each module's statuses.
func runOutdated(w *World) map[string][]string {
	in := resolve.Input{Catalogue: catalogueOf(w), Old: parseLock(w.Lock), Registry: registryOf(w), Now: Now}
	in.Observed, in.Record = read(w, w.catalogueHosts(), "")
	out := map[string][]string{}
	for _, s := range resolve.Outdated(context.Background(), in, nil) {
		for _, st := range s.Statuses {
			out[s.Module.Name] = append(out[s.Module.Name], string(st))
		}
	}
	return out
}

// Entry is what the oracle reads of a lock entry: the digest it names and
// the tag it records.
type Entry struct {
	Digest, Tag string
	// Recorded are the digests the entry's observed blocks record, by
	// host.
	Recorded map[string][]string
	// RecordedTags are the tags recorded with them, in the same order.
	RecordedTags map[string][]string
	// Allowed: the entry records an accepted downgrade (allow_downgrade).
	Allowed bool
	// Hosts are the hosts the entry says were read when it was written.
	Hosts []string
	// Hold is the entry's hold (a manual pick), "" when none; From,
	// FromHosts and Release its provenance when promoted.
	Hold, From, Release string
	FromHosts           []string
}

// lockEntries reads each lock entry, by module.
func lockEntries(b []byte) map[string]Entry {
	out := map[string]Entry{}
	l := parseLock(b)
	if l == nil {
		return out
	}
	for _, m := range l.Modules {
		e := Entry{Digest: m.Digest, Tag: m.Tag, Recorded: map[string][]string{}, RecordedTags: map[string][]string{}, Allowed: m.AllowDowngrade != "", Hosts: m.Hosts, Hold: m.Hold}
		if p := m.Promoted; p != nil {
			e.From, e.FromHosts, e.Release = p.From, p.Hosts, p.Release
		}
		for _, ob := range m.Observed {
			if ob.Digest != "" {
				e.Recorded[ob.Host] = append(e.Recorded[ob.Host], ob.Digest)
				e.RecordedTags[ob.Host] = append(e.RecordedTags[ob.Host], ob.Tag)
			}
		}
		out[m.Name] = e
	}
	return out
}

// tamperLock swaps module mod's digest for digest, as a person editing the
// file would: every other line stays.
func tamperLock(b []byte, mod, digest string) ([]byte, bool) {
	l, diags := lock.Parse(b, lock.DefaultPath) // a copy: the cached one is read-only
	if diags.HasErrors() {
		return b, false
	}
	e := l.Module(mod)
	if e == nil || e.Digest == digest {
		return b, false
	}
	e.Digest = digest
	return lock.Format(l), true
}

// parsed caches parsed locks by their bytes: parsing HCL costs more than
// resolving, and a history reads one lock many times. Pin treats an old
// lock as read-only.
var parsed = struct {
	sync.Mutex
	m map[string]*lock.Lock
}{m: map[string]*lock.Lock{}}

func parseLock(b []byte) *lock.Lock {
	if b == nil {
		return nil
	}
	parsed.Lock()
	defer parsed.Unlock()
	if l, ok := parsed.m[string(b)]; ok {
		return l
	}
	if len(parsed.m) > 4096 {
		clear(parsed.m)
	}
	l, diags := lock.Parse(b, lock.DefaultPath)
	parsed.m[string(b)] = l
	if diags.HasErrors() {
		panic(fmt.Sprintf("truth: pin wrote a lock it cannot read: %s\n%s", diags.Error(), b))
	}
	return l
}

func catalogueOf(w *World) *catalogue.Catalogue {
	c := &catalogue.Catalogue{}
	for _, e := range w.Envs {
		c.Environments = append(c.Environments, &catalogue.Environment{Name: e.Name, Hosts: e.Hosts, From: e.From, Soak: e.Soak})
	}
	for _, h := range w.catalogueHosts() {
		c.Hosts = append(c.Hosts, &catalogue.Host{Name: h.Name, Snapshot: h.Name + ".json"})
	}
	for _, m := range w.Mods {
		cm := &catalogue.Module{Name: m.Name, Image: m.Repo, Policy: catalogue.Policy(m.Policy), Tag: m.Float, OneWay: m.OneWay, MinAge: m.MinAge}
		if m.Pin != "" {
			p, msg := catalogue.ParsePin(m.Pin)
			if msg != "" {
				panic("truth: generated pin " + m.Pin + ": " + msg)
			}
			cm.Pin = p
		}
		if m.Allow {
			cm.AllowDowngrade = "generated: the downgrade is wanted"
		}
		if m.Restore {
			cm.Restore = "backup-1"
		}
		for _, h := range m.Hosts {
			cm.RunsOn = append(cm.RunsOn, catalogue.RunsOn{Host: h, Container: m.Ctr})
		}
		c.Modules = append(c.Modules, cm)
	}
	return c
}

// observed is what the given hosts report: one snapshot each.
func observed(w *World, hosts []*Host) observe.Observed {
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}}
	for _, h := range hosts {
		if h.Down {
			continue // not read: see skipped
		}
		s := &host.Snapshot{Schema: host.SnapshotSchema, Host: h.Name, ImageStore: h.Store}
		for _, m := range w.Mods {
			c := h.Ctrs[m.Name]
			if c == nil {
				continue
			}
			b := m.Builds[c.Build]
			pulled := b.Digest
			if _, d, ok := strings.Cut(c.Ref, "@"); ok {
				pulled = d
			}
			platform := Platforms[0]
			if b.Manifests != nil {
				platform = h.Platform
			}
			id := pulled
			if h.Store == "classic" {
				id = b.Config(platform)
			}
			ctr := host.Container{ID: "c-" + m.Ctr, Name: m.Ctr, Image: m.Repo + c.Ref, ImageID: id, State: c.State}
			if h.Labelled {
				ctr.Labels = map[string]string{catalogue.ModuleLabel: m.Name}
			}
			if w.Envs != nil {
				// (Read with start times, as pin promote reads hosts.)
				ctr.StartedAt, ctr.RestartCount, ctr.Check = c.StartedAt, c.Restarts, c.Health
			}
			s.Containers = append(s.Containers, ctr)
			os, arch, _ := strings.Cut(platform, "/")
			s.Images = append(s.Images, host.Image{ID: id, RepoDigests: []string{m.Repo + "@" + pulled}, Created: b.Created, Labels: labels(b), OS: os, Arch: arch})
		}
		seen.Snapshots[h.Name] = s
	}
	return seen
}

func labels(b *Build) map[string]string {
	if b.Label == "" {
		return nil
	}
	return map[string]string{image.LabelVersion: b.Label}
}

func registryOf(w *World) func(repo string) resolve.Registry {
	return func(repo string) resolve.Registry {
		for _, m := range w.Mods {
			if m.Repo == repo {
				return memRegistry{m, w.Seen}
			}
		}
		return nil
	}
}

// memRegistry serves one module's builds and tags as a registry would,
// and keeps pin's first sightings as its cache does.
type memRegistry struct {
	m    *Module
	seen map[string]time.Time
}

var _ resolve.Sightings = memRegistry{}

// seenMu guards the worlds' first sightings.
var seenMu sync.Mutex

// FirstSeen is internal/registry's Cache.FirstSeen over the world's
// memory.
func (r memRegistry) FirstSeen(repo, tag, digest string, now time.Time) time.Time {
	k := repo + " " + tag + " " + digest
	// resolve asks from one goroutine per module, as the cache is asked.
	seenMu.Lock()
	defer seenMu.Unlock()
	if t, ok := r.seen[k]; ok && !now.Before(t) {
		return t
	}
	r.seen[k] = now
	return now
}

func (r memRegistry) Tags(_ context.Context, repo string) ([]string, error) {
	tags := make([]string, 0, len(r.m.Tags))
	for t := range r.m.Tags {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	return tags, nil
}

func (r memRegistry) Image(_ context.Context, repo, ref, platform string) (image.Image, error) {
	m := r.m
	if !strings.HasPrefix(ref, "sha256:") {
		id, ok := m.Tags[ref]
		if !ok {
			return image.Image{}, fmt.Errorf("tag %s:%s: %w", repo, ref, image.ErrNotFound)
		}
		img := describe(m, m.Builds[id], m.Builds[id].Digest, platform)
		img.Tag = ref
		return img, nil
	}
	b := m.ByDigest(ref)
	if b == nil || (b.Digest != ref && !slices.Contains(mapValues(b.Manifests), ref)) {
		return image.Image{}, fmt.Errorf("manifest %s@%s: %w", repo, ref, image.ErrNotFound)
	}
	return describe(m, b, ref, platform), nil
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// describe is what a registry says of build b asked by digest d: an index
// resolved to platform, or one manifest.
func describe(m *Module, b *Build, d, platform string) image.Image {
	img := image.Image{Repository: m.Repo, Digest: d, Created: b.Created, Labels: labels(b)}
	if b.Manifests != nil && d == b.Digest {
		if _, ok := b.Manifests[platform]; !ok {
			platform = Platforms[0]
		}
		img.Platforms = map[string]string{}
		for _, p := range Platforms { // as the index lists them
			img.Platforms[p] = b.Manifests[p]
			img.Manifests = append(img.Manifests, image.PlatformManifest{Platform: p, Digest: b.Manifests[p]})
		}
		img.Platform = platform
		img.ConfigDigest = b.Configs[platform]
		if id, ok := b.Mixed[platform]; ok {
			// The entry is another build: its config says what it is.
			e := m.Builds[id]
			img.Created, img.Labels = e.Created, labels(e)
		}
		return img
	}
	img.Platform = Platforms[0]
	for p, x := range b.Manifests {
		if x == d {
			img.Platform = p
		}
	}
	img.ConfigDigest = b.Config(img.Platform)
	return img
}

// errDown is what a host that is down answers.
var errDown = errors.New("connection refused (the host is down)")

// skipped are the hosts of hosts that are down: a run goes on without
// them (skip_unreachable), as source.Load reports them.
func skipped(hosts []*Host) map[string]error {
	out := map[string]error{}
	for _, h := range hosts {
		if h.Down {
			out[h.Name] = errDown
		}
	}
	return out
}

// read is what a run that asks hosts (fromHost alone, when not "") reads,
// and the record of what it did not, built as every command builds it
// (source.Inputs.Record).
func read(w *World, hosts []*Host, fromHost string) (observe.Observed, resolve.Record) {
	in := &source.Inputs{Observed: observed(w, hosts), Skipped: skipped(hosts), Host: fromHost}
	return in.Observed, in.Record()
}
