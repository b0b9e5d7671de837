package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// profile runs pinprof (pin resolve's pipeline under the Go profiler) cold
// and warm at concurrency c, and returns its stage timings and the top of
// each CPU profile, for the report. Profiles and full listings stay in
// logs/.
//
// lockCPU is the most CPU time formatting and saving the lock took.
func profile(cfg config, dir, logs string, c int, px *proxy) (report string, lockCPU time.Duration) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nProfile: pin resolve's pipeline under pinprof, c=%d (profiles in %s)\n", c, logs)
	cache := filepath.Join(cfg.Work, "cache-pinprof")
	os.RemoveAll(cache)
	os.Remove(filepath.Join(dir, "pin.lock.hcl"))
	for _, temp := range []string{"cold", "warm"} {
		cpu := filepath.Join(logs, "pinprof-"+temp+".cpu")
		mem := filepath.Join(logs, "pinprof-"+temp+".heap")
		px.take()
		out, err := exec.Command(cfg.Prof,
			"-catalogue", filepath.Join(dir, "catalogue.hcl"), "-lock", filepath.Join(dir, "pin.lock.hcl"),
			"-cache-dir", cache, "-concurrency", strconv.Itoa(c), "-cpuprofile", cpu, "-memprofile", mem).CombinedOutput()
		// (pinprof reads its peak RSS from /proc/self/status, VmHWM, which
		// is its own memory's, not the ru_maxrss execve carried over.)
		n := px.take()
		var keep []string
		for _, l := range strings.SplitAfter(string(out), "\n") {
			if v, ok := strings.CutPrefix(l, "lock-cpu "); ok {
				if ns, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					lockCPU = max(lockCPU, time.Duration(ns))
				}
				continue
			}
			keep = append(keep, l)
		}
		fmt.Fprintf(&b, "\n%s (%d requests):\n\n```\n%s```\n", temp, n.Total(), strings.Join(keep, ""))
		if err != nil {
			fmt.Fprintf(&b, "pinprof failed: %v\n", err)
			continue
		}
		top, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=40", cfg.Prof, cpu).CombinedOutput()
		_ = os.WriteFile(filepath.Join(logs, "pinprof-"+temp+".top.txt"), top, 0o644)
		if err != nil {
			fmt.Fprintf(&b, "go tool pprof failed: %v\n", err)
			continue
		}
		cum, _ := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=60", cfg.Prof, cpu).CombinedOutput()
		_ = os.WriteFile(filepath.Join(logs, "pinprof-"+temp+".cum.txt"), cum, 0o644)
		fmt.Fprintf(&b, "\n```\n%s```\n", headLines(string(top), 18))
	}
	return b.String(), lockCPU
}

func headLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}
