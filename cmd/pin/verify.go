package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
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
	for _, e := range in.Lock.Modules {
		m := in.Catalogue.Module(e.Name)
		if m == nil || m.Verify == nil {
			continue
		}
		checked++
		msg, err := verifyEntry(ctx, in.Registries.For(e.Image), m.Verify, e)
		var f *verify.Failure
		switch {
		case errors.As(err, &f):
			failed++
			fmt.Fprintf(s.Out, "FAIL %s %s: %s\n", e.Name, sanitize(e.Ref()), sanitize(f.Error()))
		case err != nil:
			return withCode(exitSource, fmt.Errorf("module %q: %w", e.Name, err))
		default:
			fmt.Fprintf(s.Out, "ok   %s %s: %s\n", e.Name, sanitize(e.Ref()), sanitize(msg))
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

// verifyEntry re-checks one entry from the signature it records, with the
// module's verify block v (keys, or a keyless identity and trusted root).
func verifyEntry(ctx context.Context, reg any, v *catalogue.Verify, e *lock.Module) (string, error) {
	if e.Signature == "" || e.Verified == "" {
		return "", &verify.Failure{Digest: e.Digest, Reason: verify.Unsigned, Detail: "the lock records no verified signature for this entry (an unverified floor)"}
	}
	src, ok := reg.(verify.Source)
	if !ok {
		return "", errors.New("the registry cannot be asked for signatures")
	}
	p, err := verify.New(verify.Spec{Keys: v.Keys, Issuer: v.Issuer, Subject: v.Subject, SubjectRegex: v.SubjectRegex, TrustedRoot: v.TrustedRoot})
	if err != nil {
		return "", err
	}
	r, err := p.Recheck(ctx, src, e.Image, e.Digest, e.Signature)
	if err != nil {
		return "", err
	}
	if r.Method != e.Verified {
		return "", &verify.Failure{Digest: e.Digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("the lock records %s, the signature verifies as %s", e.Verified, r.Method)}
	}
	if r.Signer != e.Signer {
		return "", &verify.Failure{Digest: e.Digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("the lock records signer %s, the signature verifies with %s", e.Signer, r.Signer)}
	}
	return fmt.Sprintf("%s by %s, signature %s", r.Method, r.Signer, r.Signature), nil
}
