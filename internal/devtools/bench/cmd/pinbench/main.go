// Command pinbench measures pin against the least work possible: requests
// per module against docs/design.md's cost model, and wall time against
// ceil(requests / concurrency) × round-trip.
//
// It seeds a fleet of repositories shaped like real projects into a
// registry on loopback, puts a proxy in front of it that adds a fixed
// round-trip delay and counts requests by kind, writes a catalogue of
// modules pinned at older tags, runs the pin binary cold (empty cache) and
// warm at each concurrency, and prints one table.
//
// bench/run starts the registry and calls it; see bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type config struct {
	Registry    string
	Pin         string
	Work        string
	N, T        int
	Running     int
	RTT         time.Duration
	Concurrency []int
	Auth        bool
	Workers     int
	Budget      time.Duration
	Seed        uint64
	Out         string
	Prof        string
	Minimal     string
	Seeded      bool
	Storage     string
	Hosts       int
	Commands    []string
}

func main() {
	if len(os.Args) > 3 && os.Args[1] == childFlag && os.Args[3] == "--" {
		os.Exit(childMain(os.Args[2], os.Args[4:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pinbench:", err)
		os.Exit(2)
	}
	if err := bench(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pinbench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("pinbench", flag.ContinueOnError)
	fs.StringVar(&cfg.Registry, "registry", "", "the registry to seed, host:port on loopback (required)")
	fs.StringVar(&cfg.Pin, "pin", "", "the pin binary to measure (required)")
	fs.StringVar(&cfg.Work, "work", "", "folder for the catalogue, caches and logs (required)")
	fs.IntVar(&cfg.N, "n", 1000, "track-upstream modules (one repository each)")
	fs.IntVar(&cfg.T, "tags", 30, "tags per repository")
	fs.IntVar(&cfg.Running, "running", -1, "at-least-running modules, running on a snapshot host (default n/10)")
	fs.DurationVar(&cfg.RTT, "rtt", 20*time.Millisecond, "round-trip delay the proxy adds to every request")
	conc := fs.String("concurrency", "1,8,32", "pin --concurrency values, comma-separated")
	auth := fs.String("auth", "token", "registry auth the proxy plays: token (anonymous bearer tokens per repository, as Docker Hub) or none")
	fs.IntVar(&cfg.Workers, "seed-workers", 32, "repositories seeded at once")
	fs.DurationVar(&cfg.Budget, "budget", 0, "skip runs that would end after this much time from the start (0: no limit)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the generated fleet")
	fs.BoolVar(&cfg.Seeded, "seeded", false, "the registry already holds this fleet (same -n, -tags, -running, -seed): build it, push nothing")
	fs.StringVar(&cfg.Storage, "storage", "", "the registry's storage folder: write the fleet there in distribution's filesystem layout instead of pushing it (much faster; the registry must use the filesystem driver)")
	fs.IntVar(&cfg.Hosts, "hosts", 1, "snapshot hosts the at-least-running modules run on, spread evenly (fleet-1 … fleet-H)")
	cmds := fs.String("commands", "resolve,outdated", "pin commands to measure, comma-separated")
	fs.StringVar(&cfg.Out, "out", "", "also write the report (Markdown) to this file")
	fs.StringVar(&cfg.Minimal, "minimal", "", "the minclient binary: when set, after each run of pin the minimal client makes the same requests, measured alike")
	fs.StringVar(&cfg.Prof, "pinprof", "", "the pinprof binary: when set, profile a cold and a warm resolve at the highest concurrency ≤ 8 after the measured runs")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.Registry == "" || cfg.Pin == "" || cfg.Work == "" {
		return cfg, fmt.Errorf("-registry, -pin and -work are required")
	}
	if cfg.N < 1 || cfg.T < 3 || cfg.RTT < 0 || cfg.Workers < 1 || cfg.Hosts < 1 {
		return cfg, fmt.Errorf("need -n ≥ 1, -tags ≥ 3, -rtt ≥ 0, -seed-workers ≥ 1, -hosts ≥ 1")
	}
	for _, c := range strings.Split(*cmds, ",") {
		switch c = strings.TrimSpace(c); c {
		case "resolve", "outdated":
			cfg.Commands = append(cfg.Commands, c)
		default:
			return cfg, fmt.Errorf("-commands %q: write resolve, outdated or both", *cmds)
		}
	}
	if cfg.Running < 0 {
		cfg.Running = cfg.N / 10
	}
	for _, f := range strings.Split(*conc, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return cfg, fmt.Errorf("-concurrency %q: write numbers ≥ 1, comma-separated", *conc)
		}
		cfg.Concurrency = append(cfg.Concurrency, c)
	}
	switch *auth {
	case "token":
		cfg.Auth = true
	case "none":
	default:
		return cfg, fmt.Errorf("-auth %q: write token or none", *auth)
	}
	if !loopbackHostPort(cfg.Registry) {
		return cfg, fmt.Errorf("-registry %q: the bench only talks to a registry on 127.0.0.1", cfg.Registry)
	}
	return cfg, nil
}

func bench(ctx context.Context, cfg config, stdout, log io.Writer) error {
	start := time.Now()
	loadStart := loadavg()
	logf := func(format string, a ...any) {
		fmt.Fprintf(log, "pinbench: %5.1fs "+format+"\n", append([]any{time.Since(start).Seconds()}, a...)...)
	}

	// The fleet.
	var projects []*project
	for i := range cfg.N {
		projects = append(projects, genProject(i, cfg.T, false, cfg.Seed))
	}
	for i := range cfg.Running {
		projects = append(projects, genProject(i, cfg.T, true, cfg.Seed))
	}
	logf("seeding %d repositories × %d tags into %s", len(projects), cfg.T, cfg.Registry)
	fleet, st, err := seed(ctx, cfg.Registry, projects, cfg.Workers, !cfg.Seeded && cfg.Storage == "", logf)
	if err != nil {
		return err
	}
	if cfg.Storage != "" && !cfg.Seeded {
		if st, err = writeStorage(ctx, cfg.Storage, fleet, cfg.Workers, logf); err != nil {
			return err
		}
	} else {
		logf("%s", st)
	}

	px, err := startProxy(cfg.Registry, cfg.RTT, cfg.Auth)
	if err != nil {
		return err
	}
	defer px.close()
	auth := "no auth"
	if cfg.Auth {
		auth = "anonymous bearer tokens"
	}
	logf("proxy on %s: +%s per request, %s", px.addr, cfg.RTT, auth)

	dir := filepath.Join(cfg.Work, "fleet")
	logs := filepath.Join(cfg.Work, "logs")
	for _, d := range []string{dir, logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := writeCatalogue(dir, px.addr, fleet, cfg.Hosts); err != nil {
		return err
	}

	// Floors: per module, plus one ping for the registry and, with token
	// auth, one token per 25 repositories: pin asks one token for up to 25
	// of the catalogue's repositories at once, a bound that keeps a token
	// (sent with every request) a few kilobytes (registry/session.go).
	perRegistry := 1
	if cfg.Auth {
		perRegistry += (len(projects) + tokenScopes - 1) / tokenScopes
	}
	floors := func(command string) (cold, warm int) {
		cold, warm = perRegistry, perRegistry
		for _, p := range projects {
			c, w := p.floor(command)
			cold += c
			warm += w
		}
		return cold, warm
	}

	commands := cfg.Commands

	// Highest concurrency first: the quick runs tell how long the slow
	// ones will take, so that a budget skips what would not fit.
	order := slices.Clone(cfg.Concurrency)
	slices.Sort(order)
	slices.Reverse(order)
	var results []result
	seen := map[string]result{}   // last run of command+cache, for estimates
	filled := map[string]string{} // command → a cache a cold run filled
	for _, c := range order {
		for _, command := range commands {
			cache := filepath.Join(cfg.Work, fmt.Sprintf("cache-%s-c%d", command, c))
			if err := os.RemoveAll(cache); err != nil {
				return err
			}
			for _, warm := range []bool{false, true} {
				if warm && seen[command+"cold"].C != c && filled[command] != "" {
					// The cold run at c was skipped: warm from the cache
					// another cold run filled (its content does not depend
					// on the concurrency).
					cache = filled[command]
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				floorCold, floorWarm := floors(command)
				r := result{Command: command, Warm: warm, C: c, Modules: len(projects), FloorRequests: floorCold}
				if warm {
					r.FloorRequests = floorWarm
				}
				key := command + r.cache()
				if warm && filled[command] == "" {
					r.Skipped = "skipped: no cold run filled a cache to be warm from"
					results = append(results, r)
					continue
				}
				est := estimate(seen[key], r, cfg.RTT)
				if cfg.Budget > 0 && time.Since(start)+est > cfg.Budget {
					r.Skipped = fmt.Sprintf("skipped: about %.0fs would pass the %s budget", est.Seconds(), cfg.Budget)
					logf("%s %s c=%d %s", command, r.cache(), c, r.Skipped)
					results = append(results, r)
					continue
				}
				if command == "resolve" && !warm {
					os.Remove(filepath.Join(dir, "pin.lock.hcl")) // a first run: no lock yet
				}
				px.take()
				base := filepath.Join(logs, fmt.Sprintf("%s-%s-c%d", command, r.cache(), c))
				wall, rss, cpu, exit, stderr, err := runPin(cfg.Pin, dir, base, pinArgs(command, dir, cache, c)...)
				r.Counts = px.take()
				r.Wall, r.RSS, r.CPU, r.Exit = wall, rss, cpu, exit
				switch {
				case err != nil:
					r.Note = err.Error()
				case exit != 0 && !(command == "outdated" && exit == 1):
					r.Note = fmt.Sprintf("exit %d: %s", exit, lastLines(stderr, 3))
				}
				if command == "resolve" && err == nil && exit == 0 {
					if bad := checkLock(filepath.Join(dir, "pin.lock.hcl"), fleet); len(bad) > 0 {
						r.Note = strings.Join(append([]string{"lock differs from the fleet's expectations:"}, bad...), "\n    ")
					}
				}
				if !warm && err == nil && exit == 0 {
					filled[command] = cache
				}
				logf("%s %s c=%d: %d requests in %.1fs, exit %d", command, r.cache(), c, r.Counts.Total(), wall.Seconds(), exit)
				if cfg.Minimal != "" {
					// The yardstick, right after pin, on the same machine
					// state: the same requests by the least client.
					px.take()
					var merr error
					r.Min.Wall, r.Min.RSS, r.Min.CPU, merr = runMinimal(cfg.Minimal, px.addr, command, warm, c, fleet, logs)
					r.Min.Counts = px.take()
					if merr != nil {
						r.Min.Note = merr.Error()
						r.Min.Wall = 0
					}
					logf("  minimal client: %d requests in %.1fs", r.Min.Counts.Total(), r.Min.Wall.Seconds())
				}
				seen[key] = r
				results = append(results, r)
			}
		}
	}

	slices.SortStableFunc(results, func(a, b result) int {
		if a.Command != b.Command {
			return slices.Index(commands, a.Command) - slices.Index(commands, b.Command)
		}
		if a.Warm != b.Warm {
			if a.Warm {
				return 1
			}
			return -1
		}
		return a.C - b.C
	})
	var prof string
	var lockCPU time.Duration
	if cfg.Prof != "" {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := cfg.Concurrency[0]
		for _, x := range cfg.Concurrency {
			if x <= 8 && (c > 8 || x > c) {
				c = x
			}
		}
		logf("profiling resolve at c=%d with pinprof", c)
		prof, lockCPU = profile(cfg, dir, logs, c, px)
	}
	// What pin costs before it does anything: the binary's pages and the
	// runtime. Per-module memory is the peak above it.
	var help int64
	if _, rss, _, exit, _, err := runPin(cfg.Pin, dir, filepath.Join(logs, "help"), "--help"); err == nil && exit == 0 {
		help = rss
	}
	report := render(cfg, st, len(projects), results, loadStart, lockCPU, help) + prof
	fmt.Fprint(stdout, report)
	if cfg.Out != "" {
		return os.WriteFile(cfg.Out, []byte(report), 0o644)
	}
	return nil
}

// estimate guesses how long a run takes: from an earlier run of the same
// command and cache at another concurrency when there is one, else from
// the floor at twice the cost.
func estimate(prev, r result, rtt time.Duration) time.Duration {
	n := int64(2 * r.FloorRequests)
	over := time.Second
	per := 1.15 * float64(rtt)
	if prev.Wall > 0 && prev.Counts.Total() > 0 {
		n = prev.Counts.Total()
		over = prev.CPU + time.Second
		// A request took what the round trip and the registry took then.
		per = 1.1 * max(float64(rtt), float64(prev.Counts.Busy)/float64(n))
	}
	rounds := math.Ceil(float64(n) / float64(r.C))
	return time.Duration(rounds*per) + over
}

// tokenScopes is the number of repositories pin asks one token for
// (maxScopesPerToken in registry/session.go).
const tokenScopes = 25
