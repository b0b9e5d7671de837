package testimage

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// SleeperPath is where Sleeper's layer puts the program; use it as the
// image's entrypoint.
const SleeperPath = "/sleeper"

// sleeperSource is the program in Sleeper's layer. As PID 1 in a container
// it must handle SIGTERM itself, or `docker stop` waits for its timeout.
const sleeperSource = `package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	fmt.Println("sleeper: waiting for SIGTERM")
	s := <-c
	fmt.Println("sleeper: got", s)
}
`

var (
	sleeperOnce sync.Once
	sleeperBin  []byte
	sleeperErr  error
)

// Sleeper returns a layer holding, at /sleeper, a static linux binary for the
// test process's architecture that sleeps until SIGTERM or SIGINT. The binary
// is compiled once per test process (and cached across processes in the user
// cache directory); the layer is byte-for-byte reproducible.
func Sleeper(t testing.TB) v1.Layer {
	t.Helper()
	sleeperOnce.Do(func() { sleeperBin, sleeperErr = buildProgram("sleeper", sleeperSource) })
	if sleeperErr != nil {
		t.Fatalf("testimage: %v", sleeperErr)
	}
	return FileLayer(t, SleeperPath[1:], 0o755, sleeperBin)
}

// buildProgram compiles source, a main package called name, or reads it
// from the cache. The cache key covers the source, the Go version and the
// target, so a stale binary is never reused; concurrent test processes
// write through a rename.
func buildProgram(name, source string) ([]byte, error) {
	key := sha256.Sum256([]byte(source + "\x00" + runtime.Version() + "\x00linux/" + runtime.GOARCH))
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "pin-testimage")
	bin := filepath.Join(dir, name+"-"+hex.EncodeToString(key[:8]))
	if b, err := os.ReadFile(bin); err == nil {
		return b, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s cache: %w", name, err)
	}
	src, err := os.MkdirTemp(dir, "src-")
	if err != nil {
		return nil, fmt.Errorf("%s source dir: %w", name, err)
	}
	defer os.RemoveAll(src)
	files := map[string]string{
		"go.mod":  "module " + name + "\n\ngo 1.21\n",
		"main.go": source,
	}
	for f, text := range files {
		if err := os.WriteFile(filepath.Join(src, f), []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("%s source: %w", name, err)
		}
	}
	tmp := filepath.Join(src, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", tmp, ".")
	cmd.Dir = src
	// A clean environment for the target: static, linux, and no settings
	// (GOFLAGS, GOWORK) from the module under test.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return nil, fmt.Errorf("cache %s: %w", name, err)
	}
	return os.ReadFile(bin)
}
