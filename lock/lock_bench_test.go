package lock

import (
	"fmt"
	"testing"
	"time"
)

// benchLock is a lock of n modules shaped like a fleet's: every module
// with a tag, digests, a version, a build date and a reason; one in six
// with a multi-platform index; one in ten taken over from a running
// container, with its observation.
func benchLock(n int) *Lock {
	digest := func(i int) string { return fmt.Sprintf("sha256:%064x", i) }
	l := &Lock{}
	for i := range n {
		m := &Module{
			Name:    fmt.Sprintf("app-%04d", i),
			Policy:  "track-upstream",
			Image:   fmt.Sprintf("registry.example.org/fleet/app-%04d", i),
			Tag:     fmt.Sprintf("1.%d.%d", i%30, i%7),
			Digest:  digest(3*i + 1),
			Config:  digest(3*i + 2),
			Version: fmt.Sprintf("1.%d.%d", i%30, i%7),
			Created: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%60),
			Source:  SourceUpstream,
			Rule:    "version",
			Reason:  fmt.Sprintf("the newest upstream tag of 12 matching, 1.%d.%d (sha256:%012x); no host runs this module", i%30, i%7, 3*i+1),
		}
		if i%6 == 0 {
			m.Platforms = map[string]string{"linux/amd64": digest(3*i + 3), "linux/arm64/v8": digest(3*i + 4)}
		}
		if i%10 == 0 {
			m.Policy, m.Source = "at-least-running", SourceRunning
			m.Observed = []Observation{{
				Host: "fleet-1", Container: m.Name, Tag: m.Tag, Digest: m.Digest, ImageID: m.Config,
				Version: m.Version, Created: m.Created,
			}}
		}
		l.Modules = append(l.Modules, m)
	}
	return l
}

// BenchmarkFormat1000 renders a 1,000-module lock.
func BenchmarkFormat1000(b *testing.B) {
	l := benchLock(1000)
	b.SetBytes(int64(len(Format(l))))
	for b.Loop() {
		Format(l)
	}
}

// BenchmarkParse1000 reads a 1,000-module lock back.
func BenchmarkParse1000(b *testing.B) {
	src := Format(benchLock(1000))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, diags := Parse(src, "pin.lock.hcl"); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

// BenchmarkEqual1000 compares two equal 1,000-module locks, the case
// where every field must be looked at; BenchmarkEqualByFormat1000 answers
// the same question by formatting both, as callers did before Equal.
func BenchmarkEqual1000(b *testing.B) {
	x, y := benchLock(1000), benchLock(1000)
	for b.Loop() {
		if !Equal(x, y) {
			b.Fatal("not equal")
		}
	}
}

func BenchmarkEqualByFormat1000(b *testing.B) {
	x, y := benchLock(1000), benchLock(1000)
	for b.Loop() {
		if string(Format(x)) != string(Format(y)) {
			b.Fatal("not equal")
		}
	}
}

// The same at 10,000 modules: per module, the 10k benchmarks should cost
// what the 1k ones do (no quadratic step). BenchmarkParseFormat10000 is
// what a warm run of pin does with its lock: read it, write it back.
func BenchmarkFormat10000(b *testing.B) {
	l := benchLock(10000)
	b.SetBytes(int64(len(Format(l))))
	for b.Loop() {
		Format(l)
	}
}

func BenchmarkParse10000(b *testing.B) {
	src := Format(benchLock(10000))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, diags := Parse(src, "pin.lock.hcl"); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

func BenchmarkParseFormat10000(b *testing.B) {
	src := Format(benchLock(10000))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		l, diags := Parse(src, "pin.lock.hcl")
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		Format(l)
	}
}

// BenchmarkParseHCL1000 is the hclparse path the fast path replaces, for
// comparison.
func BenchmarkParseHCL1000(b *testing.B) {
	src := Format(benchLock(1000))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, diags := parseHCL(src, "pin.lock.hcl"); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
