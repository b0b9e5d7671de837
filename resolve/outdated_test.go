package resolve

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// The outdated scenarios, in the language of scenario_test.go:
//
//	policy  locked  running  upstream  options  → statuses [hint:<tag>]
//
// locked is the lock entry's image ("-": no entry); it is also the
// module's pin. options add to those of the scenarios: down (host-0 cannot
// be read), offline (no registry may be asked), regdown (the registry
// fails), gone (the registry answers "not found" for every image),
// unavailable (an offline registry that knows nothing), untag (the pin's
// tag is gone upstream; by default the registry serves the pin by it).
const outdatedScenarios = `
at-least-running 1.22.6          1.27.3            1.22.6,1.27.3          -          → behind-running,behind-upstream
at-least-running 1.27.3          1.27.3            1.22.6,1.27.3          -          → current
at-least-running 1.27.3          1.22.6            1.27.3                 -          → current
at-least-running 1.27.3          1.27.3,1.26.0     1.27.3                 -          → skew
at-least-running 1.22.6          1.27.3,1.22.6     -                      -          → behind-running,skew
at-least-running 1.2.3           1.2.3/1970-01-01  -                      -          → unknown-order
at-least-running latest/2026-08-20 -/2026-09-17    latest/2026-09-17      -          → behind-running,behind-upstream
at-least-running latest/2026-09-17 -               latest/2026-09-17      -          → current
at-least-running latest/2026-09-17 -               latest/1970-01-01      -          → unknown-order
at-least-running -               1.27.3            1.27.3                 -          → unlocked
at-least-running 1.22.6+1.22.6   1.27.3+1.27.3     1.27.3                 offline    → behind-running
at-least-running 1.22.6+1.22.6   1.27.3            1.27.3                 offline    → unknown-order
at-least-running 1.22.6          1.27.3            1.27.3                 offline    → unknown-order
at-least-running 1.22.6          1.22.6            1.27.3                 down       → error,behind-upstream
at-least-running 1.22.6          1.22.6            1.27.3                 regdown    → error
at-least-running 1.22.6          1.22.6            1.27.3                 gone       → error
at-least-running 1.22.6          1.22.6            1.27.3                 unavailable → current
track-upstream   latest/2026-08-20 -               latest/2026-09-17      tag=latest,unavailable → current
exact            1.22.6          !1.27.3           1.22.6                 -          → behind-running
exact            1.22.6          1.27.3            1.22.6                 allow      → behind-running
exact            1.22.6          -                 1.22.6,1.23.0-rc.1     -          → current
exact            1.22.6-rootless -                 1.27.3,1.23.0-rootless -          → behind-upstream
exact            1.22.6          -                 1.22.6,1.27-alpine     -          → current
exact            v1.2            -                 v1.2,v1.3,1.4          -          → behind-upstream
track-upstream   1.22.6          -                 1.22.6,1.24.0,2.0.0    c=<2       → behind-upstream hint:2.0.0
track-upstream   1.24.0          -                 1.22.6,1.24.0,2.0.0    c=<2       → current hint:2.0.0
track-upstream   1.24.0          -                 1.22.6,1.24.0          c=<2       → current
track-upstream   1.22.6          -                 1.22.6,1.22.7,1.27.3   re=^1\.22\. → behind-upstream
track-upstream   1.22.6          -                 1.22.6,1.28.0-rc.1     -          → current
track-upstream   1.22.6          -                 1.22.6,1.27.3          c=<1.0     → error hint:1.27.3
exact            1.22.6          -                 1.27.3                 gone       → error
track-upstream   1.22.6          -                 1.22.6,1.28.0-rc.1     pre        → behind-upstream
track-upstream   latest/2026-08-20 -               latest/2026-09-17      tag=latest → behind-upstream
track-upstream   latest/2026-08-20 -               latest/1970-01-01      tag=latest → unknown-order
track-upstream   latest/2026-08-20 -               -                      tag=latest,untag → error
track-upstream   1.27.3          1.28.0            1.27.3                 -          → behind-running
track-upstream   2026.09.17      -                 2026.08.20,2026.10.01  v=calver   → behind-upstream
track-upstream   2.0.0+1.0.0     -                 2.0.0+1.0.0            -          → unknown-order
track-upstream   1.0.0           -                 1.0.0,2.0.0+1.0.0      -          → unknown-order
track-upstream   1.0.0           -                 1.0.0,2.0.0+2.0.0      -          → behind-upstream
`

var outdatedLine = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+→\s+(\S+)(?:\s+hint:(\S+))?$`)

func TestOutdatedScenarios(t *testing.T) {
	for i, line := range strings.Split(strings.TrimSpace(outdatedScenarios), "\n") {
		m := outdatedLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			t.Fatalf("scenario %d does not parse: %q", i, line)
		}
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			in := outdatedInput(t, m[1], m[2], m[3], m[4], m[5])
			s := Outdated(context.Background(), in, nil)[0]
			got := joinStatuses(s.Statuses)
			if got != m[6] || s.Hint != m[7] {
				t.Errorf("%s\n got %s hint %q\nwant %s hint %q\nfindings: %v", line, got, s.Hint, m[6], m[7], s.Findings)
			}
			// Every status but current has a finding that says why.
			for _, st := range s.Statuses {
				if st != StatusCurrent && !slices.ContainsFunc(s.Findings, func(f Finding) bool { return f.Status == st && f.Message != "" }) {
					t.Errorf("status %s has no finding: %v", st, s.Findings)
				}
			}
		})
	}
}

func joinStatuses(ss []Status) string {
	var s []string
	for _, x := range ss {
		s = append(s, string(x))
	}
	return strings.Join(s, ",")
}

// TestOutdatedDetails checks what one report carries beyond its statuses:
// the running images ordered against the lock, the candidate described, the
// findings' words, and the failures that make "pin outdated" exit 3.
func TestOutdatedDetails(t *testing.T) {
	in := outdatedInput(t, "at-least-running", "1.22.6", "1.27.3/2026-09-01,!1.28.0", "1.22.6,1.27.3/2026-09-01", "-")
	s := Outdated(context.Background(), in, nil)[0]
	if len(s.Running) != 2 || s.Running[0].Host != "host-0" || s.Running[0].Order.Cmp.String() != "newer" || s.Running[0].Version != "1.27.3" || s.Running[1].State != "exited" {
		t.Errorf("running = %+v (the stopped container is a floor too)", s.Running)
	}
	if u := s.Upstream; u == nil || u.Image.Tag != "1.27.3" || u.Version != "1.27.3" || u.Created.Format("2006-01-02") != "2026-09-01" || u.Order.Rule != "version" {
		t.Errorf("upstream = %+v", s.Upstream)
	}
	want := []Finding{
		{StatusBehindRunning, "host-0/svc runs 1.27.3, newer than the locked 1.22.6 (version 1.27.3 > 1.22.6): taking it over with the lock would be a downgrade"},
		{StatusBehindRunning, "host-1/svc ran (exited) 1.28.0, newer than the locked 1.22.6 (version 1.28.0 > 1.22.6): taking it over with the lock would be a downgrade"},
		{StatusBehindUpstream, "upstream offers 1.27.3, newer than the locked 1.22.6 (version 1.27.3 > 1.22.6)"},
	}
	if diff := cmp.Diff(want, s.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		opt         string
		unreachable bool
	}{{"down", true}, {"regdown", true}, {"gone", false}} {
		s := Outdated(context.Background(), outdatedInput(t, "at-least-running", "1.22.6", "1.22.6", "1.27.3", tc.opt), nil)[0]
		if len(s.Failures) != 1 || observe.Unreachable(s.Failures[0]) != tc.unreachable {
			t.Errorf("%s: failures %v, unreachable want %v", tc.opt, s.Failures, tc.unreachable)
		}
	}
	if s := Outdated(context.Background(), outdatedInput(t, "at-least-running", "1.22.6", "1.22.6", "1.27.3", "unavailable"), nil)[0]; len(s.Failures) != 0 || s.Upstream != nil {
		t.Errorf("offline, nothing cached: failures %v, upstream %+v", s.Failures, s.Upstream)
	}
	for _, err := range []error{nil, fmt.Errorf("tags: %w", image.ErrUnavailable), fmt.Errorf("tag: %w", image.ErrNotFound)} {
		if observe.Unreachable(err) {
			t.Errorf("%v counts as unreachable", err)
		}
	}
}

// TestOutdatedDeterministicAndProgress runs many modules concurrently: the
// reports come in catalogue order, the same each time, and progress counts
// every module once.
func TestOutdatedDeterministicAndProgress(t *testing.T) {
	in := outdatedInput(t, "at-least-running", "1.22.6", "1.27.3,1.26.0", "1.22.6,1.27.3", "-")
	base := in.Catalogue.Modules[0]
	in.Catalogue = &catalogue.Catalogue{}
	in.Old = &lock.Lock{}
	for i := range 40 {
		m := *base
		m.Name = fmt.Sprintf("svc-%02d", i)
		in.Catalogue.Modules = append(in.Catalogue.Modules, &m)
		in.Old.Modules = append(in.Old.Modules, &lock.Module{Name: m.Name, Image: repo, Tag: "1.22.6", Digest: word(repo, "1.22.6").Digest})
	}
	var calls atomic.Int32
	last := 0
	first := Outdated(context.Background(), in, func(done, total int) {
		calls.Add(1)
		if done != last+1 || total != 40 {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
	})
	if calls.Load() != 40 {
		t.Errorf("progress called %d times", calls.Load())
	}
	for range 3 {
		again := Outdated(context.Background(), in, nil)
		if diff := cmp.Diff(summaries(first), summaries(again)); diff != "" {
			t.Fatalf("not deterministic:\n%s", diff)
		}
	}
	for i, s := range first {
		if s.Module.Name != fmt.Sprintf("svc-%02d", i) {
			t.Fatalf("report %d is %s", i, s.Module.Name)
		}
	}
}

func summaries(ss []*ModuleStatus) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s %v %v %q", s.Module.Name, s.Statuses, s.Findings, s.Hint))
	}
	return out
}

// TestOutdatedAfterResolveProperty links the two commands: a lock that "pin
// resolve" wrote, without a stated downgrade, is never behind-running and
// never unordered against what runs. Generated as TestInvariantProperty's
// catalogues are.
func TestOutdatedAfterResolveProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(*propertySeed, 1))
	policies := []string{"exact", "at-least-running", "track-upstream"}
	n := min(*propertyCases, 3000)
	checked := 0
	for i := range n {
		policy := policies[r.IntN(3)]
		pin := "-"
		if policy == "exact" || r.IntN(3) > 0 {
			pin = pickWord(r)
		}
		var running, upstream, opts []string
		for range r.IntN(4) {
			w := pickWord(r)
			if r.IntN(5) == 0 {
				w = "!" + w
			}
			running = append(running, w)
		}
		for range r.IntN(6) {
			if w := pickWord(r); !strings.HasPrefix(w, "-") {
				upstream = append(upstream, w)
			}
		}
		for _, o := range []string{"pre", "anyvariant", "tag=latest"} {
			if r.IntN(4) == 0 {
				opts = append(opts, o)
			}
		}
		args := []string{policy, pin, orDash(running), orDash(upstream), orDash(opts)}
		in := scenarioInput(t, args[0], args[1], args[2], args[3], args[4])
		d := Resolve(context.Background(), in).Decisions[0]
		if d.New() == nil {
			continue
		}
		checked++
		in.Old = &lock.Lock{Modules: []*lock.Module{d.New()}}
		s := Outdated(context.Background(), in, nil)[0]
		for _, f := range s.Findings {
			if f.Status == StatusBehindRunning || (f.Status == StatusUnknownOrder && !strings.HasPrefix(f.Message, "the upstream")) {
				t.Fatalf("case %d: %s\nresolve locked %s, and outdated says %s: %s", i, strings.Join(args, "  "), d.New().Ref(), f.Status, f.Message)
			}
		}
		if s.Has(StatusUnlocked) || s.Has(StatusError) {
			t.Fatalf("case %d: %s: statuses %v after a resolve: %v", i, strings.Join(args, "  "), s.Statuses, s.Findings)
		}
	}
	if checked < n/4 {
		t.Errorf("only %d of %d cases locked anything", checked, n)
	}
}

// outdatedInput builds one module's input with its lock entry.
func outdatedInput(t *testing.T, policy, locked, running, upstream, options string) Input {
	t.Helper()
	in := scenarioInput(t, policy, locked, running, upstream, options)
	if locked != "-" {
		img := word(repo, locked)
		e := &lock.Module{Name: "svc", Policy: lock.Policy(policy), Image: repo, Tag: img.Tag, Digest: img.Digest, Created: img.Created}
		if v := img.VersionLabel(); v != "" && (order.Options{}).VersionOf(img).Kind != order.Conflicting {
			e.Version = v // (pin writes no version for one whose tag and label conflict)
		}
		in.Old = &lock.Lock{Modules: []*lock.Module{e}}
	}
	return in
}

// scenarioInput is runScenario's input, without resolving: the module, the
// hosts (host-<i>, container svc) and a fake registry.
func scenarioInput(t *testing.T, policy, pin, running, upstream, options string) Input {
	t.Helper()
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Policy(policy)}
	reg := newFakeRegistry(repo)
	if pin != "-" {
		img := word(repo, pin)
		m.Pin = catalogue.Pin{Text: img.Tag + "@" + img.Digest, Tag: img.Tag, Digest: img.Digest}
		reg.byDigest[img.Digest] = img
		if img.Tag != "" {
			// The pin's tag names it upstream (not listed: only upstream
			// words are); an upstream word of the same tag moves it.
			reg.byTag[img.Tag] = img
		}
	}
	if upstream != "-" {
		for _, w := range strings.Split(upstream, ",") {
			img := word(repo, w)
			reg.byTag[img.Tag] = img
			reg.byDigest[img.Digest] = img
			reg.tags = append(reg.tags, img.Tag)
		}
	}
	var registry Registry = reg
	down := false
	for _, o := range strings.Split(options, ",") {
		k, v, _ := strings.Cut(o, "=")
		if k == "-" || moduleOption(m, k, v) {
			continue
		}
		switch k {
		case "down":
			down = true
		case "untag":
			delete(reg.byTag, m.Pin.Tag)
		case "offline":
			registry = nil
		case "regdown":
			registry = brokenRegistry{errors.New("dial tcp 127.0.0.1:1: connection refused")}
		case "unavailable":
			registry = brokenRegistry{fmt.Errorf("tag list: %w", image.ErrUnavailable)}
		case "gone":
			registry = brokenRegistry{fmt.Errorf("manifest unknown: %w", image.ErrNotFound)}
		default:
			t.Fatalf("unknown option %q", o)
		}
	}
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}}
	if running != "-" {
		for i, w := range strings.Split(running, ",") {
			state := "running"
			if strings.HasPrefix(w, "!") {
				state, w = "exited", w[1:]
			}
			// A host pulled what it runs from the registry: the registry
			// serves it by digest, and by its tag unless the pin's or an
			// upstream word names another image by that tag (upstream
			// moved it). It is not in the tag list (only upstream words
			// are). A host's tag is a claim the registry is asked about.
			if img := word(repo, w); registry == Registry(reg) {
				reg.byDigest[img.Digest] = img
				if _, taken := reg.byTag[img.Tag]; img.Tag != "" && !taken {
					reg.byTag[img.Tag] = img
				}
			}
			h := fmt.Sprintf("host-%d", i)
			m.RunsOn = append(m.RunsOn, catalogue.RunsOn{Host: h, Container: "svc"})
			if down && i == 0 {
				seen.Errors[h] = errors.New("connection refused")
				continue
			}
			img := word(repo, w)
			ref := repo
			if img.Tag != "" {
				ref += ":" + img.Tag
			}
			id := "sha256:" + strings.Repeat(fmt.Sprint(i), 64)
			seen.Snapshots[h] = &host.Snapshot{Host: h,
				Containers: []host.Container{{ID: "c", Name: "svc", Image: ref, ImageID: id, State: state}},
				Images:     []host.Image{{ID: id, RepoDigests: []string{repo + "@" + img.Digest}, Created: img.Created, Labels: img.Labels}},
			}
		}
	}
	in := Input{
		Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}},
		Observed:  seen,
		Now:       time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	}
	if registry != nil {
		in.Registry = func(string) Registry { return registry }
	}
	return in
}

// brokenRegistry fails every call with err.
type brokenRegistry struct{ err error }

func (b brokenRegistry) Tags(context.Context, string) ([]string, error) { return nil, b.err }
func (b brokenRegistry) Image(context.Context, string, string, string) (image.Image, error) {
	return image.Image{}, b.err
}
