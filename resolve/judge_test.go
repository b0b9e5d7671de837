package resolve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// TestJudge: a new image for a Deployment whose replicas run 1.27.3 and
// 1.22.6 is held against the newest of them, as Resolve would hold a
// locked image; the override accepts a downgrade, not for a one_way
// module without its restore.
func TestJudge(t *testing.T) {
	newer, older := word(repo, "1.27.3/2026-09-01+1.27.3"), word(repo, "1.22.6/2024-12-12+1.22.6")
	reg := newFakeRegistry(repo, "1.27.3/2026-09-01+1.27.3", "1.22.6/2024-12-12+1.22.6", "1.28.0/2026-10-01+1.28.0", "nightly", "1.20.0/2024-01-01+1.20.0")
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{"prod": clusterSnapshot(newer, older)}}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning,
		RunsOn: []catalogue.RunsOn{{Host: "prod", Workload: "deployment/svc", Container: "svc"}}}
	in := Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Observed: seen,
		Registry: func(string) Registry { return reg }, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	ov := Override{How: `annotate it pin.dev/allow-downgrade: "<why>"`, HowRestore: `pin.dev/restore: "<backup>"`}
	judge := func(tag string, ov Override) *Judgement {
		t.Helper()
		j, err := Judge(context.Background(), in, m, image.Image{Repository: repo, Tag: tag}, ov)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}

	j := judge("1.22.6", ov)
	if j.Allowed() || j.Verdict != VerdictDowngrade || j.Refusal.Kind != KindDowngrade {
		t.Fatalf("1.22.6 over 1.27.3: %+v", j)
	}
	msg := j.Refusal.Error()
	for _, want := range []string{`module "svc": refusing a downgrade: the new image 1.22.6`, "older than what prod/deployment/svc/svc runs",
		`ordered by rule "version"`, "to run what prod/deployment/svc/svc runs, deploy " + repo + ":stable@" + newer.Digest, `pin.dev/allow-downgrade`} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal lacks %q:\n%s", want, msg)
		}
	}
	if j := judge("1.28.0", ov); !j.Allowed() || j.Verdict != VerdictUpgrade {
		t.Errorf("1.28.0: %+v", j)
	}
	// Equal to one replica, newer than the other.
	if j := judge("1.27.3", ov); !j.Allowed() || j.Verdict != VerdictUpgrade {
		t.Errorf("1.27.3: %+v", j)
	}
	if j := judge("nightly", ov); j.Allowed() || j.Verdict != VerdictUnknown || !strings.Contains(j.Refusal.Error(), "cannot be ordered") {
		t.Errorf("nightly: %+v", j)
	}
	withWhy := ov
	withWhy.Downgrade = "rollback of a bad release"
	if j := judge("1.22.6", withWhy); !j.Allowed() || j.Accepted == nil || !strings.Contains(j.Reason, "rollback of a bad release") {
		t.Errorf("override: %+v", j)
	}
	m.OneWay = true
	if j := judge("1.22.6", withWhy); j.Allowed() || !strings.Contains(j.Refusal.Error(), "one_way") {
		t.Errorf("one_way without restore: %+v", j)
	}
	withWhy.Restore = "snapshot forge-db 2026-09-16"
	if j := judge("1.22.6", withWhy); !j.Allowed() || !strings.Contains(j.Reason, "snapshot forge-db") {
		t.Errorf("one_way with restore: %+v", j)
	}
	m.OneWay = false

	// The lock is a floor too: with nothing running, 1.20.0 under a
	// locked 1.22.6 is refused; the locked digest itself, with the
	// catalogue's allow_downgrade recorded, passes.
	in.Observed = observe.Observed{Snapshots: map[string]*host.Snapshot{"prod": {Host: "prod"}}}
	in.Old = &lock.Lock{Modules: []*lock.Module{{Name: "svc", Image: repo, Tag: "1.22.6", Digest: older.Digest, Version: "1.22.6", Created: older.Created}}}
	if j := judge("1.20.0", Override{}); j.Allowed() || !strings.Contains(j.Refusal.Error(), "the previous lock names") {
		t.Errorf("under the lock: %+v", j)
	}
	if j := judge("1.22.6", Override{}); !j.Allowed() || j.Verdict != VerdictSame {
		t.Errorf("the locked image: %+v", j)
	}
	in.Old = nil
	if j := judge("1.20.0", Override{}); !j.Allowed() || j.Verdict != VerdictFirst {
		t.Errorf("no floor: %+v", j)
	}
}
