package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The start-up benchmarks exec the pin binary, as a user does: what they
// measure is the process, from fork to exit (issue 17's target: under
// 50 ms for "pin --help" and for an offline "pin resolve" of the
// repository's incident). They report; nothing asserts a time.
//
//	go test -run XXX -bench Startup -benchtime 20x ./internal/devtools/bench

var pinBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "pin-startup-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "pin")
	// As the release builds it (CGO_ENABLED=0, -trimpath): the binary
	// users get, compiled from what the suite's vet compiled.
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/pin-tool/pin/cmd/pin")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	if err != nil {
		return "", &buildError{err, string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building pin: " + e.err.Error() + "\n" + e.out }

func BenchmarkStartupHelp(b *testing.B) {
	bin, err := pinBinary()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if out, err := exec.Command(bin, "--help").CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// BenchmarkStartupResolveOffline resolves the repository's incident (the
// root catalogue: the layout mirror and the snapshot of mesh-1) offline,
// with its lock in place, as a second "pin resolve" does.
func BenchmarkStartupResolveOffline(b *testing.B) {
	bin, err := pinBinary()
	if err != nil {
		b.Fatal(err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	src, err := os.ReadFile(filepath.Join(root, "catalogue.hcl"))
	if err != nil {
		b.Fatal(err)
	}
	cat := strings.ReplaceAll(string(src), `"examples/`, `"`+root+`/examples/`)
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		b.Fatal(err)
	}
	run := func() {
		cmd := exec.Command(bin, "resolve", "--offline", "--cache-dir", filepath.Join(dir, "cache"))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
	run() // the lock, written once
	for b.Loop() {
		run()
	}
}
