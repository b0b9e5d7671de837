package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
func runPin(bin, dir, logBase string, args ...string) (wall time.Duration, rss int64, cpu time.Duration, exit int, stderr string, err error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := os.Create(logBase + ".out")
	if err != nil {
		return 0, 0, 0, 0, "", err
	}
	defer out.Close()
	var errBuf bytes.Buffer
	cmd.Stdout = out
	cmd.Stderr = &errBuf
	start := time.Now()
	runErr := cmd.Run()
	wall = time.Since(start)
	_ = os.WriteFile(logBase+".err", errBuf.Bytes(), 0o644)
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return wall, 0, 0, -1, errBuf.String(), runErr
	}
	ps := cmd.ProcessState
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if ok {
		rss = ru.Maxrss * 1024 // kilobytes on Linux
	}
	cpu = ps.UserTime() + ps.SystemTime()
	return wall, rss, cpu, ps.ExitCode(), errBuf.String(), nil
}

// hasCommand reports whether pin --help lists command.
func hasCommand(bin, command string) bool {
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == command && strings.HasPrefix(l, "  ") {
			return true
		}
	}
	return false
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
