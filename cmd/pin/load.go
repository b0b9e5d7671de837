package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"

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

// sourceCode is the exit code of an error reading a host or a
// registry: 2 when the input is at fault (a lock entry or pin that
// disagrees with its content, a snapshot file that is not one), else 3.
// It is the one mapping of such errors to an exit code.
func sourceCode(err error) int {
	if badInput(err) {
		return exitInput
	}
	return exitSource
}

// hostFailure is host h that could not be read, with what that means for
// the command (tail, after "; " when not empty), and its exit code.
func hostFailure(h string, err error, tail string) error {
	if tail != "" {
		return withCode(sourceCode(err), fmt.Errorf("host %s: %w; %s", h, err, tail))
	}
	return withCode(sourceCode(err), fmt.Errorf("host %s: %w", h, err))
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
