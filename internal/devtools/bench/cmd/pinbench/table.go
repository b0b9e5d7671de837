package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// render is the report: one Markdown table of every run, then the targets
// of issue 6 checked against it, then notes.
func render(cfg config, st seedStats, modules int, results []result, loadStart string, lockCPU time.Duration, help int64) string {
	var b strings.Builder
	auth := "no auth"
	if cfg.Auth {
		auth = "anonymous bearer token per repository scope"
	}
	fmt.Fprintf(&b, "\npin bench: %d modules (%d track-upstream, %d at-least-running on %d snapshot hosts), %d tags per repository, round trip %s, %s\n",
		modules, cfg.N, cfg.Running, cfg.Hosts, cfg.T, cfg.RTT, auth)
	fmt.Fprintf(&b, "%s; load average %s at the start, %s at the end (%d CPUs)\n", st, loadStart, loadavg(), runtime.NumCPU())
	fmt.Fprintf(&b, "pin --help peaks at %.1f MiB; per module, each run below:", float64(help)/(1<<20))
	for _, r := range results {
		if r.Skipped != "" || r.Modules == 0 {
			continue
		}
		fmt.Fprintf(&b, " %s %s c=%d %.2f requests, %.2f ms wall, %.1f KiB above --help;", r.Command, r.cache(), r.C,
			float64(r.Counts.Total())/float64(r.Modules), float64(r.Wall.Microseconds())/1000/float64(r.Modules), float64(r.RSS-help)/1024/float64(r.Modules))
	}
	b.WriteString("\n\n")

	head := []string{"command", "cache", "N", "c"}
	for _, k := range kindNames {
		head = append(head, k)
	}
	head = append(head, "requests", "req/module", "floor/module", "wall", "wall floor", "wall/floor", "in flight", "registry", "wall/adj", "peak RSS", "CPU",
		"min req", "min wall", "wall/min", "min CPU", "CPU/min", "min RSS")
	rows := [][]string{head}
	for _, r := range results {
		row := []string{r.Command, r.cache(), fmt.Sprint(r.Modules), fmt.Sprint(r.C)}
		if r.Skipped != "" {
			for range len(head) - len(row) {
				row = append(row, "—")
			}
			rows = append(rows, row)
			continue
		}
		for _, n := range r.Counts.Kind {
			row = append(row, fmt.Sprint(n))
		}
		n := r.Counts.Total()
		wf := r.wallFloor(cfg.RTT)
		row = append(row,
			fmt.Sprint(n),
			fmt.Sprintf("%.2f", float64(n)/float64(r.Modules)),
			fmt.Sprintf("%.2f", float64(r.FloorRequests)/float64(r.Modules)),
			secs(r.Wall), secs(wf), ratio(r.Wall, wf),
			fmt.Sprintf("%.1f/%d", r.Counts.Busy.Seconds()/r.Wall.Seconds(), r.Counts.PeakInFlight),
			fmt.Sprintf("%.1fms", float64(r.Counts.Upstream.Microseconds())/1000/float64(max(r.Counts.Forwarded, 1))),
			ratio(r.Wall, r.adjFloor(cfg.RTT)),
			fmt.Sprintf("%.1f MiB", float64(r.RSS)/(1<<20)),
			secs(r.CPU),
		)
		if r.Min.Wall > 0 {
			row = append(row, fmt.Sprint(r.Min.Counts.Total()), secs(r.Min.Wall), ratio(r.Wall, r.Min.Wall),
				secs(r.Min.CPU), ratio(r.CPU, r.Min.CPU), fmt.Sprintf("%.1f MiB", float64(r.Min.RSS)/(1<<20)))
		} else {
			row = append(row, "—", "—", "—", "—", "—", "—")
		}
		rows = append(rows, row)
	}
	writeTable(&b, rows)

	b.WriteString("\n" + targets(cfg, results, lockCPU))

	var notes []string
	for _, r := range results {
		name := fmt.Sprintf("%s %s c=%d", r.Command, r.cache(), r.C)
		if r.Skipped != "" {
			notes = append(notes, name+": "+r.Skipped)
			continue
		}
		if r.Note != "" {
			notes = append(notes, name+": "+r.Note)
		}
		if r.Min.Note != "" {
			notes = append(notes, name+": "+r.Min.Note)
		}
		if r.Min.Wall > 0 && r.Min.Counts.Total() != r.Counts.Total() {
			notes = append(notes, fmt.Sprintf("%s: the minimal client made %d requests, pin %d", name, r.Min.Counts.Total(), r.Counts.Total()))
		}
		if r.Counts.Errors > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d error answers (4xx/5xx other than the 401 challenges to pings)", name, r.Counts.Errors))
		}
		if r.Counts.TLS > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d https attempts before plain http (TLS handshakes refused by the proxy, not counted as requests)", name, r.Counts.TLS))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString("\nColumns: requests by kind as the proxy saw them; floor/module is docs/design.md's cost model (cold: tag list + manifest, two for an index, + config; warm: tag list + HEAD; a floating tag needs no tag list; resolve describes an at-least-running module's running image once cold and asks nothing warm; one ping for the registry, and one token per 25 repositories, the most pin asks one token for); wall floor = ceil(requests / c) × round trip; in flight = mean/peak requests held by the proxy; registry = mean time the registry took to answer a request, on top of the round trip (it grows when the machine is loaded); wall/adj = wall / (ceil(requests / c) × (round trip + registry)), the ratio with the registry's own time counted in, which tells pin's scheduling apart from a slow registry; peak RSS and CPU (user+system) from the pin process's rusage (pin is started by a small helper, so that ru_maxrss is pin's own and not the bench's, which Linux carries over at execve); min = the minimal client (internal/devtools/bench/cmd/minclient, go-containerregistry making the floor's requests, c modules at a time), run right after pin with the same c, and pin's wall and CPU over its.\n")
	return b.String()
}

// targets checks issue 6's targets against the runs at concurrency 8 (or
// the nearest measured).
func targets(cfg config, results []result, lockCPU time.Duration) string {
	var b strings.Builder
	pick := func(command string, warm bool) (result, bool) {
		var best result
		found := false
		for _, r := range results {
			if r.Command != command || r.Warm != warm || r.Skipped != "" {
				continue
			}
			if !found || abs(r.C-8) < abs(best.C-8) {
				best, found = r, true
			}
		}
		return best, found
	}
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	b.WriteString("Targets (issues 6 and 17):\n")
	for _, command := range []string{"resolve", "outdated"} {
		cold, okc := pick(command, false)
		warm, okw := pick(command, true)
		if !okc || !okw {
			continue
		}
		m := float64(cold.Modules)
		fmt.Fprintf(&b, "- %s cold requests/module ≤ floor + the registry's ping and a token per 25 repositories (c=%d): %.2f vs %.2f: %s\n",
			command, cold.C, float64(cold.Counts.Total())/m, float64(cold.FloorRequests)/m, mark(cold.Counts.Total() <= int64(cold.FloorRequests)))
		fmt.Fprintf(&b, "- %s warm requests = tag list + HEAD per module (c=%d): %.2f vs %.2f: %s\n",
			command, warm.C, float64(warm.Counts.Total())/m, float64(warm.FloorRequests)/m, mark(warm.Counts.Total() <= int64(warm.FloorRequests)))
		for _, r := range []result{cold, warm} {
			wf := r.wallFloor(cfg.RTT)
			fmt.Fprintf(&b, "- %s %s wall ≤ 1.25 × ceil(requests / c) × RTT (c=%d): %s vs %s = %s: %s (%s with the registry's own answer time counted in)\n",
				command, r.cache(), r.C, secs(r.Wall), secs(wf), ratio(r.Wall, wf), mark(float64(r.Wall) <= 1.25*float64(wf)), ratio(r.Wall, r.adjFloor(cfg.RTT)))
			if r.Min.Wall > 0 {
				fmt.Fprintf(&b, "- %s %s wall ≤ 1.10 × the minimal client's (c=%d): %s vs %s = %s: %s\n",
					command, r.cache(), r.C, secs(r.Wall), secs(r.Min.Wall), ratio(r.Wall, r.Min.Wall), mark(float64(r.Wall) <= 1.10*float64(r.Min.Wall)))
				fmt.Fprintf(&b, "- %s %s CPU ≤ 2 × the minimal client's (c=%d): %s vs %s = %s: %s\n",
					command, r.cache(), r.C, secs(r.CPU), secs(r.Min.CPU), ratio(r.CPU, r.Min.CPU), mark(float64(r.CPU) <= 2*float64(r.Min.CPU)))
			}
		}
	}
	var peak int64
	var cpu time.Duration
	for _, r := range results {
		if r.Skipped == "" {
			peak = max(peak, r.RSS)
		}
		if r.Command == "resolve" && r.Skipped == "" {
			cpu = max(cpu, r.CPU)
		}
	}
	fmt.Fprintf(&b, "- peak RSS ≤ 50 MiB: %.1f MiB at most: %s\n", float64(peak)/(1<<20), mark(peak <= 50<<20))
	if lockCPU > 0 {
		fmt.Fprintf(&b, "- the lock written in under a second of CPU: formatting and saving it took %s of CPU at most (pinprof, below; pin resolve formats it once, to compare and to write): %s\n",
			secs(lockCPU), mark(lockCPU < time.Second))
	}
	fmt.Fprintf(&b, "- the whole pin resolve process, for comparison: %s of CPU at most (network, catalogue, lock and plan rendering included)\n", secs(cpu))
	return b.String()
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

// writeTable writes rows as an aligned Markdown table, the first row the
// header; numbers are right-aligned.
func writeTable(b *strings.Builder, rows [][]string) {
	w := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len([]rune(c)))
		}
	}
	line := func(r []string) {
		b.WriteString("|")
		for i, c := range r {
			pad := strings.Repeat(" ", w[i]-len([]rune(c)))
			if i < 2 {
				fmt.Fprintf(b, " %s%s |", c, pad)
			} else {
				fmt.Fprintf(b, " %s%s |", pad, c)
			}
		}
		b.WriteString("\n")
	}
	line(rows[0])
	b.WriteString("|")
	for i := range w {
		if i < 2 {
			fmt.Fprintf(b, ":%s|", strings.Repeat("-", w[i]+1))
		} else {
			fmt.Fprintf(b, "%s:|", strings.Repeat("-", w[i]+1))
		}
	}
	b.WriteString("\n")
	for _, r := range rows[1:] {
		line(r)
	}
}

// loadavg is the 1-minute load average, or "?".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
