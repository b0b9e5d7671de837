package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/source"
)

// sourceOptions are the global flags that say what a run may ask.
func (g *globalOptions) sourceOptions() source.Options {
	return source.Options{Offline: g.Offline, CacheDir: g.CacheDir, CertsDir: g.CertsDir, Concurrency: g.Concurrency, Timeout: g.Timeout,
		HostConcurrency: g.HostConcurrency, HostTimeout: g.HostTimeout}
}

// load runs source.Load for a command: the catalogue and the lock, then
// what the hosts run (all, or host alone). Diagnostics are printed here;
// bad files and unknown hosts are exit 2.
func load(ctx context.Context, g *globalOptions, s streams, host string, prog *progress) (*source.Inputs, error) {
	req := source.Request{Catalogue: g.Catalogue, Lock: g.Lock, Options: g.sourceOptions(), Host: host}
	if prog != nil {
		req.Loaded, req.HostDone = prog.loaded, prog.hostDone
	}
	in, warnings, err := source.Load(ctx, req)
	if in != nil {
		skippedHosts(s, in.Skipped)
	}
	return in, loadError(s, in, warnings, err)
}

// loadError prints what loading found and maps its error to an exit code.
func loadError(s streams, in *source.Inputs, warnings hcl.Diagnostics, err error) error {
	var de *source.DiagnosticsError
	var uh *source.UnknownHostError
	switch {
	case errors.As(err, &de):
		printDiags(s, de.Files, de.Diagnostics)
		return withCode(exitInput, fmt.Errorf("%s: %w", de.Error(), errReported))
	case errors.As(err, &uh):
		return withCode(exitInput, err)
	case err != nil:
		return err
	}
	if in != nil {
		printDiags(s, in.Catalogue.Files, warnings)
	}
	return nil
}

// modulesAtOnce is how many modules a run decides at once: twice the
// requests the registries its catalogue names may have in flight
// (--concurrency each), enough to keep each busy while the other half
// does its own work, and no more modules' state held at once. A constant
// 32 held 1–2 MiB more at the peak of a 1,100-module run at
// --concurrency 8 than 16, for the same wall time (issue 17).
func modulesAtOnce(cat *catalogue.Catalogue, concurrency int) int {
	registries := map[string]bool{}
	for _, m := range cat.Modules {
		host, _, _ := strings.Cut(m.Image, "/")
		registries[host] = true
	}
	return 2 * max(1, concurrency) * max(1, len(registries))
}

// requestSummary prints, with -v, the requests sent to each registry.
func requestSummary(g *globalOptions, s streams, r *source.Registries) {
	if !g.Verbose {
		return
	}
	lines := r.Summary()
	if len(lines) == 0 {
		fmt.Fprintln(s.Err, "pin: no registry requests")
	}
	for _, l := range lines {
		fmt.Fprintf(s.Err, "pin: %s\n", sanitize(l))
	}
}
