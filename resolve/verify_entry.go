package resolve

import (
	"context"
	"fmt"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
)

// VerifyEntry re-checks lock entry e of module m, which has a verify
// policy ("pin verify"): the signature manifest e records, read by its
// digest (a tag re-pushed since changes nothing; a warm cache answers
// with no request), must verify e's digest under m's policy, by the
// method and the signer e names. A verdict against the entry is a
// *verify.Failure (an entry that records no verification, such as an
// unverified floor, fails too); other errors are the registry's, or the
// policy's that could not be loaded.
func VerifyEntry(ctx context.Context, in Input, m *catalogue.Module, e *lock.Module) (verify.Result, error) {
	if e.Signature == "" || e.Verified == "" {
		return verify.Result{}, &verify.Failure{Digest: e.Digest, Reason: verify.Unsigned, Detail: "the lock records no verified signature for this entry (an unverified floor)"}
	}
	v, err := newVerifier(in, m)
	if err != nil {
		return verify.Result{}, err
	}
	if v == nil || v.v == nil {
		return verify.Result{}, &observe.SourceError{Source: "registry of " + e.Image, Err: fmt.Errorf("no registry may be asked for the signatures of %s", e.Ref())}
	}
	r, err := v.v.Recheck(ctx, e.Image, e.Digest, e.Signature)
	if err != nil {
		return verify.Result{}, err
	}
	if r.Method != e.Verified {
		return verify.Result{}, &verify.Failure{Digest: e.Digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("the lock records %s, the signature verifies as %s", e.Verified, r.Method)}
	}
	if r.Signer != e.Signer {
		return verify.Result{}, &verify.Failure{Digest: e.Digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("the lock records signer %s, the signature verifies with %s", e.Signer, r.Signer)}
	}
	return r, nil
}
