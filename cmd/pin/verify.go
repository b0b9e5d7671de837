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
	fresh := false
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Re-check the signatures the lock records",
		Long: `verify re-checks, for every lock entry whose module has a verify block, the
signature the entry records: the signature manifest is read by the digest
the lock names (so a tag re-pushed since changes nothing), the registry is
asked with one HEAD whether it still serves it (its content may come from
the cache; --offline reads the cache only and asks nothing), and it must
verify the locked digest under the module's verify block (a configured
key, or the keyless identity against the trusted root, and the repository
under match_repository) as the signer the lock names. An entry the lock
keeps unverified by the catalogue's allow_unverified passes while the
catalogue states the same words. It reads the catalogue, the lock and
registries; no host is asked. With environments, every environment's
lock is checked, each line naming the entry's environment.

With --fresh, each entry's image is looked up afresh instead, as pin
resolve looks up a new image (the .sig tag, then OCI 1.1 referrers): it
passes when any signature the verify block accepts verifies it now, and
the line names that signature.

It prints one line per entry and exits 1 when any entry fails (unsigned,
untrusted signer, bad signature, signature for another digest or
repository, or an entry the lock records as not verified), 2 on bad input
and 3 when a registry could not be reached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := textOnly(g, "verify", "read its exit code (0: every entry verifies, 1: one fails) and its lines, one per entry; the lock file records each entry's verified, signer and signature"); err != nil {
				return err
			}
			return runVerify(cmd.Context(), g, s, fresh)
		},
	}
	cmd.Flags().BoolVar(&fresh, "fresh", false, "look each image's signatures up afresh (the .sig tag, then referrers), not the one the lock records")
	return cmd
}

func runVerify(ctx context.Context, g *globalOptions, s streams, fresh bool) error {
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
	envs, err := environments(in, g, s, nil, "")
	if err != nil {
		return err
	}
	failed, checked := 0, 0
	for _, env := range envs {
		rin := env.Input(g.now())
		for _, e := range env.Inputs.Lock.Modules {
			m := in.Catalogue.Module(e.Name)
			if m == nil || m.Verify == nil {
				continue
			}
			checked++
			name := e.Name
			if env.Name != "" {
				name += " (" + env.Name + ")"
			}
			c, err := resolve.VerifyEntry(ctx, rin, m, e, fresh)
			var f *verify.Failure
			r := c.Result
			switch {
			case errors.As(err, &f):
				failed++
				fmt.Fprintf(s.Out, "FAIL %s %s: %s\n", name, sanitize(e.Ref()), sanitize(f.Error()))
			case err != nil:
				return withCode(exitSource, fmt.Errorf("module %q: %w", name, err))
			case c.Kept != "":
				fmt.Fprintf(s.Out, "kept %s %s: not verified; allow_unverified: %s\n", name, sanitize(e.Ref()), sanitize(c.Kept))
			case r.Signature != e.Signature:
				fmt.Fprintf(s.Out, "ok   %s %s: %s\n", name, sanitize(e.Ref()), sanitize(fmt.Sprintf("%s by %s, signature %s (the lock records %s: \"pin resolve\" records this one)", r.Method, r.Signer, r.Signature, recorded(e.Signature))))
			default:
				fmt.Fprintf(s.Out, "ok   %s %s: %s\n", name, sanitize(e.Ref()), sanitize(fmt.Sprintf("%s by %s, signature %s", r.Method, r.Signer, r.Signature)))
			}
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

// recorded names the signature a lock entry records, or says it has none.
func recorded(sig string) string {
	if sig == "" {
		return "none"
	}
	return sig
}
