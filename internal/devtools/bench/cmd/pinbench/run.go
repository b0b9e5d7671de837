package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pin-tool/pin/lock"
)

// result is one measured run of pin.
type result struct {
	Command string // resolve, outdated
	Warm    bool
	C       int
	Modules int
	Counts  counts
	// FloorRequests is the cost model's least number of requests.
	FloorRequests int
	Wall          time.Duration
	RSS           int64 // peak resident set, bytes
	CPU           time.Duration
	Exit          int
	Skipped       string // why the run was not made, when it was not
	Note          string // what went wrong, when something did
	// Min is the minimal client's run of the same requests, right after
	// pin's (internal/devtools/bench/cmd/minclient); zero when not made.
	Min minimalRun
}

// minimalRun is one measured run of the minimal client.
type minimalRun struct {
	Counts counts
	Wall   time.Duration
	RSS    int64
	CPU    time.Duration
	Note   string
}

func (r result) cache() string {
	if r.Warm {
		return "warm"
	}
	return "cold"
}

// wallFloor is ceil(requests / concurrency) × rtt.
func (r result) wallFloor(rtt time.Duration) time.Duration {
	n := r.Counts.Total()
	c := int64(r.C)
	return time.Duration((n+c-1)/c) * rtt
}

// adjFloor is ceil(requests / concurrency) × (rtt + the registry's mean
// answer time): the floor with the registry's own time counted in.
func (r result) adjFloor(rtt time.Duration) time.Duration {
	n := r.Counts.Total()
	c := int64(r.C)
	var reg time.Duration
	if r.Counts.Forwarded > 0 {
		reg = r.Counts.Upstream / time.Duration(r.Counts.Forwarded)
	}
	return time.Duration((n+c-1)/c) * (rtt + reg)
}

// runPin runs bin with args in dir, its output kept in logBase.{out,err},
// and measures it: wall time, and from the child's rusage its peak RSS and
// CPU time.
//
// The child is started by a small helper process (this binary, in
// -child-report mode), not by pinbench itself: Linux carries the peak RSS
// of the memory a process replaces at execve into the new program's
// ru_maxrss, and a child that os/exec starts (vfork, then execve) replaces
// pinbench's own memory, a hundred megabytes and more with the fleet built.
// The helper is a few megabytes, so the rusage it reports is pin's own.
func runPin(bin, dir, logBase string, args ...string) (wall time.Duration, rss int64, cpu time.Duration, exit int, stderr string, err error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, 0, 0, "", err
	}
	report := logBase + ".rusage"
	cmd := exec.Command(self, append([]string{childFlag, report, "--", bin}, args...)...)
	cmd.Dir = dir
	out, err := os.Create(logBase + ".out")
	if err != nil {
		return 0, 0, 0, 0, "", err
	}
	defer out.Close()
	var errBuf bytes.Buffer
	cmd.Stdout = out
	cmd.Stderr = &errBuf
	runErr := cmd.Run()
	_ = os.WriteFile(logBase+".err", errBuf.Bytes(), 0o644)
	b, rerr := os.ReadFile(report)
	if rerr != nil {
		return 0, 0, 0, -1, errBuf.String(), fmt.Errorf("running %s: %v (no rusage report: %v)", bin, runErr, rerr)
	}
	var r childReport
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, 0, 0, -1, errBuf.String(), fmt.Errorf("rusage report %s: %w", report, err)
	}
	if r.Err != "" {
		return 0, 0, 0, -1, errBuf.String(), errors.New(r.Err)
	}
	if r.AnonKiB+r.FileKiB > 0 {
		fmt.Fprintf(os.Stderr, "pinbench:         %s: highest RSS sampled %.1f MiB: %.1f MiB private (heap, stacks), %.1f MiB of mapped files (the binary)\n",
			filepath.Base(logBase), float64(r.AnonKiB+r.FileKiB)/1024, float64(r.AnonKiB)/1024, float64(r.FileKiB)/1024)
	}
	return time.Duration(r.WallNS), r.MaxRSSKiB * 1024, time.Duration(r.UserNS + r.SysNS), r.Exit, errBuf.String(), nil
}

// childFlag makes pinbench the helper that runs one measured command.
const childFlag = "-child-report"

// childReport is what the helper writes: the command's wall time, exit code
// and rusage.
type childReport struct {
	WallNS    int64 `json:"wall_ns"`
	UserNS    int64 `json:"user_ns"`
	SysNS     int64 `json:"sys_ns"`
	MaxRSSKiB int64 `json:"maxrss_kib"`
	// AnonKiB and FileKiB split the highest RSS sampled from
	// /proc/PID/status every few milliseconds: the heap, stacks and other
	// private memory, and the pages of files mapped (the binary).
	AnonKiB int64  `json:"anon_kib"`
	FileKiB int64  `json:"file_kib"`
	Exit    int    `json:"exit"`
	Err     string `json:"error,omitempty"`
}

// childMain runs args (after "--"), its standard streams passed through,
// and writes a childReport to report.
func childMain(report string, args []string) int {
	var r childReport
	if len(args) == 0 {
		r.Err = "no command"
	} else {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		start := time.Now()
		err := cmd.Start()
		if err == nil {
			stop := make(chan struct{})
			sampled := make(chan [2]int64)
			go func() { sampled <- sampleRSS(cmd.Process.Pid, stop) }()
			err = cmd.Wait()
			close(stop)
			split := <-sampled
			r.AnonKiB, r.FileKiB = split[0], split[1]
		}
		r.WallNS = int64(time.Since(start))
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			r.Err = err.Error()
		} else {
			ps := cmd.ProcessState
			r.Exit = ps.ExitCode()
			r.UserNS, r.SysNS = int64(ps.UserTime()), int64(ps.SystemTime())
			r.MaxRSSKiB = maxRSSKiB(ps)
		}
	}
	b, _ := json.Marshal(r)
	if err := os.WriteFile(report, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "pinbench:", err)
		return 1
	}
	return 0
}

// sampleRSS reads /proc/pid/status every 5 ms until stop and returns the
// RssAnon and RssFile (KiB) of the sample with the highest sum.
func sampleRSS(pid int, stop <-chan struct{}) [2]int64 {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var best [2]int64
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			var cur [2]int64
			for line := range strings.SplitSeq(string(b), "\n") {
				f := strings.Fields(line)
				if len(f) < 2 {
					continue
				}
				n, _ := strconv.ParseInt(f[1], 10, 64)
				switch f[0] {
				case "RssAnon:":
					cur[0] = n
				case "RssFile:":
					cur[1] = n
				}
			}
			if cur[0]+cur[1] > best[0]+best[1] {
				best = cur
			}
		}
		select {
		case <-stop:
			return best
		case <-t.C:
		}
	}
}

// checkLock compares the lock pin wrote with what the fleet says each
// module must lock; it returns a sentence per mismatch (at most five, and
// a count).
func checkLock(path string, fleet []*seeded) []string {
	src, err := os.ReadFile(path)
	if err != nil {
		return []string{fmt.Sprintf("no lock: %v", err)}
	}
	l, diags := lock.Parse(src, path)
	if diags.HasErrors() {
		return []string{fmt.Sprintf("lock does not parse: %s", diags.Error())}
	}
	var bad []string
	n := 0
	for _, s := range fleet {
		p := s.p
		m := l.Module(p.Module)
		var why string
		switch {
		case m == nil:
			why = "not locked"
		case m.Tag != p.Want:
			why = fmt.Sprintf("locked %q, want %q", m.Tag, p.Want)
		case m.Digest != s.at(p.Want).digest:
			why = fmt.Sprintf("locked digest %s, want %s", m.Digest, s.at(p.Want).digest)
		case p.Running != "" && m.Source != lock.SourceRunning:
			why = fmt.Sprintf("source %q, want %q", m.Source, lock.SourceRunning)
		}
		if why != "" {
			n++
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("module %s (%s): %s", p.Module, p.Shape, why))
			}
		}
	}
	if n > len(bad) {
		bad = append(bad, fmt.Sprintf("… %d modules in all", n))
	}
	return bad
}

// pinArgs are the arguments of one measured run.
func pinArgs(command, dir, cache string, c int) []string {
	return []string{command,
		"--catalogue", filepath.Join(dir, "catalogue.hcl"),
		"--lock", filepath.Join(dir, "pin.lock.hcl"),
		"--cache-dir", cache,
		"--concurrency", strconv.Itoa(c),
		"-v",
	}
}

// lastLines is the end of s, for error notes.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
