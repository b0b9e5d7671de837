package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/resolve"
)

func newVerifyCmd(g *globalOptions, s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Re-check the signatures the lock records",
		Long: `verify re-checks, for every lock entry whose module has a verify block, the
signature the entry records: the signature manifest is read by the digest
the lock names (so a tag re-pushed since changes nothing, and a warm cache
answers without a request; --offline reads the cache only), and must verify
the locked digest under the module's verify block (a configured key, or the
keyless identity against the trusted root) as the signer the lock names.
It reads the catalogue, the lock and registries; no host is asked.

It prints one line per entry and exits 1 when any entry fails (unsigned,
untrusted signer, bad signature, signature for another digest, or an entry
the lock records as not verified), 2 on bad input and 3 when a registry
could not be reached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVerify(cmd.Context(), g, s)
		},
	}
}

func runVerify(ctx context.Context, g *globalOptions, s streams) error {
	// A lock is re-checked against registries only: no host is asked.
	cat, warnings, old, _, err := source.LoadFiles(g.Catalogue, g.Lock)
	var in *source.Inputs
	if err == nil {
		in = &source.Inputs{Catalogue: cat, Lock: old, Registries: source.NewRegistries(cat, g.sourceOptions())}
	}
	if err := loadError(s, in, warnings, err); err != nil {
		return err
	}
	defer requestSummary(g, s, in.Registries)
	failed, checked := 0, 0
	rin := resolve.Input{Catalogue: in.Catalogue, Old: in.Lock, Registry: in.Registries.For, Verifier: in.Registries.Verifier}
	for _, e := range in.Lock.Modules {
		m := in.Catalogue.Module(e.Name)
		if m == nil || m.Verify == nil {
			continue
		}
		checked++
		r, err := resolve.VerifyEntry(ctx, rin, m, e)
		var f *verify.Failure
		switch {
		case errors.As(err, &f):
			failed++
			fmt.Fprintf(s.Out, "FAIL %s %s: %s\n", e.Name, sanitize(e.Ref()), sanitize(f.Error()))
		case err != nil:
			return withCode(exitSource, fmt.Errorf("module %q: %w", e.Name, err))
		default:
			fmt.Fprintf(s.Out, "ok   %s %s: %s\n", e.Name, sanitize(e.Ref()), sanitize(fmt.Sprintf("%s by %s, signature %s", r.Method, r.Signer, r.Signature)))
		}
	}
	if checked == 0 {
		fmt.Fprintln(s.Err, "pin: no lock entry has a verify policy")
	}
	if failed > 0 {
		return withCode(exitFindings, fmt.Errorf("%d of %d lock entries failed verification: %w", failed, checked, errReported))
	}
	return nil
}
