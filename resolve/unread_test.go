package resolve

import (
	"context"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
)

// A lock entry whose digest the registry does not serve (purged, a mirror
// that lags, a hand edit to a digest that never existed): its lines are
// claims nobody can check. They hold the floor up; they never win.
func TestUnreadEntryNeverWins(t *testing.T) {
	ctx := context.Background()
	gone := "sha256:" + strings.Repeat("d", 64)
	entry := func(tag string) *lock.Lock {
		return &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: tag, Version: tag,
			Digest: gone, Source: "running"}}}
	}
	for _, tc := range []struct {
		name, policy, running, upstream, entry string
		allow                                  bool
		want                                   string // a refusal kind, or the tag locked
	}{
		{"newest by its lines", "at-least-running", "1.25.0+1.25.0", "1.25.0+1.25.0", "1.30.0", false, "refuse:lock-not-served"},
		{"newest by its lines, downgrade allowed", "at-least-running", "1.25.0+1.25.0", "1.25.0+1.25.0", "1.30.0", true, "refuse:downgrade"}, // no pin says what to lock
		{"what runs is newer", "at-least-running", "1.31.0+1.31.0", "1.31.0+1.31.0", "1.30.0", false, "1.31.0"},
		{"upstream is newer", "track-upstream", "-", "1.31.0+1.31.0", "1.30.0", false, "1.31.0"},
		{"upstream is older", "track-upstream", "-", "1.28.0+1.28.0", "1.30.0", false, "refuse:lock-not-served"},
		{"its lines still hold the floor", "track-upstream", "-", "1.28.0+1.28.0", "1.30.0", true, "1.28.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newFakeRegistry(repo, strings.Split(tc.upstream, ",")...)
			m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Policy(tc.policy)}
			if tc.allow {
				m.AllowDowngrade = "tested"
			}
			var runs []run
			if tc.running != "-" {
				runs = []run{{host: "host-0", word: tc.running}}
			}
			d := Resolve(ctx, inputOf(m, reg, entry(tc.entry), observed(m, runs, nil))).Decisions[0]
			got := "nothing"
			switch {
			case d.Err() != nil:
				got = "error: " + d.Err().Error()
			case d.Refusal() != nil:
				got = "refuse:" + string(d.Refusal().Kind)
			case d.New() != nil:
				got = d.New().Tag
			}
			if got != tc.want {
				t.Errorf("got %s, want %s (%v)", got, tc.want, d.Refusal())
			}
			if d.Refusal() != nil && d.Refusal().Kind == KindLockUnread && !strings.Contains(d.Refusal().Error(), "does not serve") {
				t.Errorf("the refusal does not say why: %v", d.Refusal())
			}
		})
	}

	// pin plan: an entry newer only by its lines is no upgrade.
	reg := newFakeRegistry(repo, "1.25.0+1.25.0")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	in := inputOf(m, reg, entry("1.30.0"), observed(m, []run{{host: "host-0", word: "1.25.0+1.25.0"}}, nil))
	in.Record.Host = "host-0"
	cuts, err := PlanCutover(ctx, in)
	if err != nil || len(cuts) != 1 || cuts[0].Verdict != VerdictUnknown || !strings.Contains(cuts[0].Order.Detail, "does not serve") {
		t.Errorf("plan over an unread entry: %+v %v", cuts, err)
	}

	// An entry the registry does not serve, that a host runs: the host
	// says what it is, and it stays.
	running := word(repo, "1.30.0+1.30.0")
	reg = newFakeRegistry(repo, "1.25.0+1.25.0")
	old := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.30.0", Version: "1.30.0", Digest: running.Digest, Source: "running"}}}
	d := Resolve(ctx, inputOf(m, reg, old, observed(m, []run{{host: "host-0", word: "1.30.0+1.30.0"}}, nil))).Decisions[0]
	if d.New() == nil || d.New().Digest != running.Digest {
		t.Errorf("an unserved entry a host runs: new %v refusal %v err %v", d.New(), d.Refusal(), d.Err())
	}
	if _, ok := reg.byDigest[running.Digest]; ok {
		t.Fatal("precondition: the registry must not serve the running image")
	}
	_ = image.Short
}
