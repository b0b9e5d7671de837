package truth

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// raceEnabled is set under -race (race_test.go), where a step costs ten
// times more: the default run is shorter there.
var raceEnabled bool

var (
	flagSteps    = flag.Int("truth.steps", envInt("PIN_TRUTH_STEPS", 0), "steps to play (env PIN_TRUTH_STEPS; default 5000, 2000 under -race, 1000 with -short)")
	flagSeed     = flag.Uint64("truth.seed", uint64(envInt("PIN_TRUTH_SEED", 20261203)), "seed of the histories (env PIN_TRUTH_SEED)")
	flagHistory  = flag.Int("truth.history", -1, "play only this history of the seed")
	flagWithout  = flag.String("truth.without", os.Getenv("PIN_TRUTH_WITHOUT"), "comma-separated features to switch off (env PIN_TRUTH_WITHOUT): "+strings.Join(Features, ","))
	flagFailures = flag.Int("truth.failures", envInt("PIN_TRUTH_FAILURES", 5), "failures to report, at most one per check, before stopping")
	flagList     = flag.String("truth.list", "", "play every history, and write the failing ones (number and check, one a line) to this file")
	flagStop     = flag.Bool("truth.stop", false, "with -truth.list: stop at the first failing history")
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func without(t *testing.T) map[string]bool {
	out := map[string]bool{}
	for f := range strings.SplitSeq(*flagWithout, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if !slices.Contains(Features, f) {
			t.Fatalf("-truth.without: unknown feature %q; known: %s", f, strings.Join(Features, ", "))
		}
		out[f] = true
	}
	return out
}

// TestTruth plays generated histories against pin and checks every step
// with an oracle that knows each image's true release order (see doc.go).
// On failure it prints the seed, the history, shrunk, and the step that
// broke.
func TestTruth(t *testing.T) {
	wo := without(t)
	want := *flagSteps
	if want <= 0 {
		switch {
		case testing.Short():
			want = 1000
		case raceEnabled:
			want = 2000
		default:
			want = 5000
		}
	}
	start := time.Now()
	steps, histories := 0, 0
	stats := map[string]int{}
	failed := map[string]bool{}
	var list strings.Builder
	for n := uint64(0); steps < want; n++ {
		if *flagHistory >= 0 {
			n = uint64(*flagHistory)
		}
		h := Play(*flagSeed, n, wo)
		steps += h.Steps
		histories++
		for k, v := range h.Stats {
			stats[k] += v
		}
		if f := h.Failure; f != nil {
			fmt.Fprintf(&list, "%d %s\n", n, f.Check)
			if *flagStop && *flagList != "" {
				break
			}
		}
		if f := h.Failure; f != nil && !failed[f.Check] {
			failed[f.Check] = true
			t.Errorf("pin broke its promise (%s); the history, shrunk from %d ops:\n%s", f.Check, len(h.Ops), h.Shrink().Report())
			if len(failed) >= *flagFailures && *flagList == "" {
				break
			}
		}
		if *flagHistory >= 0 {
			break
		}
	}
	if *flagList != "" {
		if err := os.WriteFile(*flagList, []byte(list.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	el := time.Since(start)
	t.Logf("%d steps in %d histories in %v (%.0f steps/s); %s", steps, histories, el.Round(time.Millisecond), float64(steps)/el.Seconds(), fmtStats(stats))
	if *flagHistory < 0 && len(failed) == 0 && list.Len() == 0 && len(wo) == 0 && steps >= 2000 {
		// The oracle must have had something to check, or it proves
		// nothing.
		for _, k := range []string{"written", "liveness checked", "plan cutovers", "outdated", "refused downgrade", "refused unknown-order", "renamed locked", "subset written",
			"env written", "own inputs checked", "promoted", "promotion checked", "promote refused skew", "promote refused soak", "promote refused floor", "pick", "hold kept", "lifted", "locked below the other environment",
			"host moved", "moved host floor checked", "refused: a moved host undecided"} {
			if stats[k] == 0 {
				t.Errorf("no step exercised %q: %s", k, fmtStats(stats))
			}
		}
	}
}

func fmtStats(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
