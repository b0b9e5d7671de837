package resolve

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/observe"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/lock"
)

var (
	propertySeed  = flag.Uint64("property.seed", 20261202, "seed of the generated catalogues")
	propertyCases = flag.Int("property.cases", 10000, "number of generated catalogues")
)

// Words the generator draws images from: versions in several variants,
// pre-releases, floating tags, good, epoch and future build dates, labels.
var genWords = []string{
	"1.22.6", "1.27.3", "1.27.3/2026-09-01", "1.27.3/2026-09-20", "1.27", "1.28.0-rc.1",
	"1.27.3-rootless", "1.30.0-rootless", "v1.27.3", "2.0.0",
	"latest", "latest/2026-08-20", "latest/2026-09-17", "latest/1970-01-01", "latest/2027-05-01",
	"latest+1.27.3", "latest+2.0.0", "-/2026-08-20", "-/2026-09-17", "-/0001-01-01",
}

func pickWord(r *rand.Rand) string { return genWords[r.IntN(len(genWords))] }

// TestInvariantProperty generates catalogues and fleets and checks, for each
// decision, docs/design.md's invariant: the lock entry is equal to or newer than
// every running observation, or states the downgrade; an unknown order never
// passes silently. It also checks that resolving is deterministic.
func TestInvariantProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(*propertySeed, 0))
	policies := []string{"exact", "at-least-running", "track-upstream"}
	counts := map[string]int{}
	for i := range *propertyCases {
		policy := policies[r.IntN(3)]
		pin := "-"
		if policy == "exact" || r.IntN(3) > 0 {
			pin = pickWord(r)
		}
		var running []string
		for range r.IntN(4) {
			w := pickWord(r)
			if r.IntN(5) == 0 {
				w = "!" + w
			}
			running = append(running, w)
		}
		var upstream []string
		for range r.IntN(6) {
			w := pickWord(r)
			if !strings.HasPrefix(w, "-") {
				upstream = append(upstream, w)
			}
		}
		var opts []string
		for _, o := range []string{"allow", "oneway", "restore", "pre", "anyvariant", "tag=latest"} {
			if r.IntN(4) == 0 {
				opts = append(opts, o)
			}
		}
		args := []string{policy, pin, orDash(running), orDash(upstream), orDash(opts)}
		name := fmt.Sprintf("case %d: %s", i, strings.Join(args, "  "))
		d := runScenario(t, args[0], args[1], args[2], args[3], args[4])
		counts[outcomeKind(d)]++
		t.Run("", func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Log(name)
				}
			}()
			checkInvariant(t, d)
			again := runScenario(t, args[0], args[1], args[2], args[3], args[4])
			if a, b := lockBytes(d), lockBytes(again); a != b {
				t.Fatalf("%s: not deterministic:\n%s\n---\n%s", name, a, b)
			}
		})
		if t.Failed() {
			t.FailNow()
		}
	}
	// The generator must reach every outcome, or the property says little.
	for _, k := range []string{"pin", "running", "upstream", "refuse:downgrade", "refuse:unknown-order", "error"} {
		if counts[k] == 0 {
			t.Errorf("no generated case ended in %s: %v", k, counts)
		}
	}
	t.Logf("outcomes over %d cases: %v", *propertyCases, counts)
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func outcomeKind(d *Decision) string {
	o := outcome(d)
	if k, _, ok := strings.Cut(o, ":"); ok && (k == "running" || k == "upstream") {
		return k
	}
	return o
}

func lockBytes(d *Decision) string {
	if d.New == nil {
		return fmt.Sprint(outcome(d))
	}
	return string(lock.Format(&lock.Lock{Modules: []*lock.Module{d.New}}))
}

// TestObserveHostsKeepsOtherHosts checks that a failing host does not hide
// the others' answers.
func TestObserveHostsKeepsOtherHosts(t *testing.T) {
	seen := observe.Hosts(context.Background(), map[string]observe.Host{
		"up":   hostFunc(func() (*host.Snapshot, error) { return &host.Snapshot{Host: "up"}, nil }),
		"down": hostFunc(func() (*host.Snapshot, error) { return nil, fmt.Errorf("connection refused") }),
	})
	if seen.Snapshots["up"] == nil || seen.Errors["down"] == nil || len(seen.Snapshots) != 1 {
		t.Fatalf("observed = %+v", seen)
	}
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, RunsOn: []catalogue.RunsOn{{Host: "down", Container: "svc"}}}
	p := Resolve(context.Background(), Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Observed: seen, Now: time.Now()})
	if p.Decisions[0].Err == nil || !strings.Contains(p.Decisions[0].Err.Error(), "host down: connection refused") {
		t.Fatalf("module on a failed host: err = %v", p.Decisions[0].Err)
	}
}

type hostFunc func() (*host.Snapshot, error)

func (f hostFunc) Observe(context.Context) (*host.Snapshot, error) { return f() }
