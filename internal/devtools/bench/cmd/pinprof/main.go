//go:build linux

// Command pinprof runs what "pin resolve" runs, stage by stage, under the
// Go profiler: load the catalogue and the old lock, read the snapshot
// hosts, resolve against the registries, format and save the lock. It
// prints each stage's wall and CPU time, and writes a CPU profile and a
// heap profile for "go tool pprof". Linux only: it reads /proc.
//
// pin has no profiling flag, so this harness runs the same pipeline as
// cmd/pin (source.Load, then resolve.Resolve). It leaves out what only the
// CLI does: the folder lock and the plan rendering. pinbench runs it after its measured runs (bench/run).
//
// Usage:
//
//	pinprof -catalogue C -lock L -cache-dir D [-concurrency 8] [-cpuprofile F] [-memprofile F]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

func main() {
	catPath := flag.String("catalogue", "catalogue.hcl", "catalogue")
	lockPath := flag.String("lock", "pin.lock.hcl", "lockfile")
	cacheDir := flag.String("cache-dir", "", "registry cache (required)")
	conc := flag.Int("concurrency", 8, "requests in flight per registry")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile here")
	memProfile := flag.String("memprofile", "", "write a heap profile (in use at the end of resolving) here")
	flag.Parse()
	if *cacheDir == "" {
		fmt.Fprintln(os.Stderr, "pinprof: -cache-dir is required")
		os.Exit(2)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(context.Background(), *catPath, *lockPath, *cacheDir, *conc, *memProfile); err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pinprof:", err)
	os.Exit(1)
}

// stage measures wall and CPU time between marks, and the peak RSS so far.
type stage struct {
	wall time.Time
	cpu  time.Duration
	rss  int64 // bytes
}

func now() stage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return stage{wall: time.Now(), cpu: cpu, rss: hwm()}
}

// hwm is the peak RSS of this process's memory (VmHWM), in bytes. Not
// ru_maxrss: Linux carries into it, at execve, the peak of the memory the
// new program replaced, which for a child of a large process is the
// parent's.
func hwm() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n * 1024
			}
		}
	}
	return 0
}

func run(ctx context.Context, catPath, lockPath, cacheDir string, conc int, memProfile string) error {
	t := now()
	mark := func(what string) {
		n := now()
		fmt.Printf("%-30s wall %7.3fs  cpu %7.3fs  peak RSS so far %6.1f MiB\n", what, n.wall.Sub(t.wall).Seconds(), (n.cpu - t.cpu).Seconds(), float64(n.rss)/(1<<20))
		t = n
	}
	start := t

	in, _, err := source.Load(ctx, source.Request{Catalogue: catPath, Lock: lockPath,
		Options: source.Options{CacheDir: cacheDir, Concurrency: conc, Timeout: 30 * time.Second}})
	if err != nil {
		var de *source.DiagnosticsError
		if errors.As(err, &de) {
			return fmt.Errorf("%w: %s", err, de.Diagnostics.Error())
		}
		return err
	}
	mark(fmt.Sprintf("load, observe hosts (%d modules)", len(in.Catalogue.Modules)))

	plan := resolve.Resolve(ctx, in.Input(time.Now()))
	mark("resolve (registry requests)")
	for _, l := range in.Registries.Summary() {
		fmt.Println("  " + l)
	}
	if plan.Failed() || plan.Refused() {
		for _, d := range plan.Decisions {
			if d.Err() != nil {
				return fmt.Errorf("module %s: %w", d.Module.Name, d.Err())
			}
		}
		return fmt.Errorf("the plan refused a module")
	}
	if memProfile != "" {
		runtime.GC()
		f, err := os.Create(memProfile)
		if err != nil {
			return err
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
		f.Close()
	}

	l := plan.Lock()
	before := t
	b := lock.Format(l)
	mark(fmt.Sprintf("format the lock (%d bytes)", len(b)))
	if _, err := lock.Save(lockPath, l); err != nil {
		return err
	}
	mark("save the lock")
	// What "pin resolve" spends to write the lock: it formats once to
	// compare with the old lock, and Save formats again.
	lockCPU := t.cpu - before.cpu
	if _, diags := lock.Parse(b, lockPath); diags.HasErrors() {
		return fmt.Errorf("the lock written does not parse: %s", diags.Error())
	}
	mark("parse the lock back")

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	end := now()
	fmt.Printf("%-30s wall %7.3fs  cpu %7.3fs  peak RSS %.1f MiB, heap in use %.1f MiB, %d GCs\n", "total",
		end.wall.Sub(start.wall).Seconds(), (end.cpu - start.cpu).Seconds(),
		float64(end.rss)/(1<<20), float64(ms.HeapInuse)/(1<<20), ms.NumGC)
	fmt.Printf("lock-cpu %d\n", lockCPU.Nanoseconds())
	return nil
}
