package testimage

import (
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ProberPath is where Prober's layer puts the program.
const ProberPath = "/prober"

// proberSource is the program in Prober's layer: "prober sleep" waits
// for SIGTERM or SIGINT (a container that runs), "prober exit N" exits
// with N at once (a container that crashes), "prober pass" and "prober
// fail" exit 0 and 1 (a health check that passes or fails).
const proberSource = `package main

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	switch {
	case len(os.Args) > 1 && os.Args[1] == "pass":
		os.Exit(0)
	case len(os.Args) > 1 && os.Args[1] == "fail":
		os.Exit(1)
	case len(os.Args) > 2 && os.Args[1] == "exit":
		n, _ := strconv.Atoi(os.Args[2])
		os.Exit(n)
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
`

var (
	proberOnce sync.Once
	proberBin  []byte
	proberErr  error
)

// Prober returns a layer holding, at /prober, a static linux binary that
// runs, exits with a code, or passes or fails as a health check (see
// proberSource): containers whose engine reports them healthy,
// unhealthy, exited or restarting, from one image.
func Prober(t testing.TB) v1.Layer {
	t.Helper()
	proberOnce.Do(func() { proberBin, proberErr = buildProgram("prober", proberSource) })
	if proberErr != nil {
		t.Fatalf("testimage: %v", proberErr)
	}
	return FileLayer(t, ProberPath[1:], 0o755, proberBin)
}
