package resolve

import (
	"context"
	"fmt"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
)

// EntryCheck is what VerifyEntry found of a lock entry that passes.
type EntryCheck struct {
	// Result is how the entry's image verified.
	Result verify.Result
	// Kept, when not empty, is the allow_unverified reason the entry
	// records and the catalogue still states: the image is kept
	// unverified, in words (Result is then empty).
	Kept string
}

// VerifyEntry re-checks lock entry e of module m, which has a verify
// policy ("pin verify"): the signature manifest e records, read by its
// digest (a tag re-pushed since changes nothing; the registry is asked
// whether it still serves it, its content may come from the cache), must
// verify e's digest under m's policy, by the method and the signer e
// names. With fresh, the image's signatures are looked up afresh instead
// (the .sig tag, then referrers), as "pin resolve" looks up a new image's:
// any signature the policy accepts passes. An entry the lock keeps
// unverified by allow_unverified passes while the catalogue states the
// same words (EntryCheck.Kept). A verdict against the entry is a
// *verify.Failure (an entry that records no verification, such as an
// unverified floor, fails too); other errors are the registry's, or the
// policy's that could not be loaded.
func VerifyEntry(ctx context.Context, in Input, m *catalogue.Module, e *lock.Module, fresh bool) (EntryCheck, error) {
	if e.AllowUnverified != "" && e.Verified == "" && e.AllowUnverified == m.AllowUnverified && !fresh {
		return EntryCheck{Kept: e.AllowUnverified}, nil
	}
	if (e.Signature == "" || e.Verified == "") && !fresh {
		why := "the lock records no verified signature for this entry (an unverified floor)"
		if e.AllowUnverified != "" {
			why = fmt.Sprintf("the lock keeps it unverified by allow_unverified = %q, which module %q no longer states", e.AllowUnverified, m.Name)
		}
		return EntryCheck{}, &verify.Failure{Digest: e.Digest, Reason: verify.Unsigned, Detail: why}
	}
	v, err := newVerifier(in, m)
	if err != nil {
		return EntryCheck{}, err
	}
	if v == nil || v.v == nil {
		return EntryCheck{}, &observe.SourceError{Source: "registry of " + e.Image, Err: fmt.Errorf("no registry may be asked for the signatures of %s", e.Ref())}
	}
	if fresh {
		r, err := v.v.Verify(ctx, e.Image, e.Digest)
		return EntryCheck{Result: r}, err
	}
	r, err := v.v.Recheck(ctx, e.Image, e.Digest, e.Signature)
	if err != nil {
		return EntryCheck{}, err
	}
	if lock.Method(r.Method) != e.Verified {
		return EntryCheck{}, &verify.Failure{Digest: e.Digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("the lock records %s, the signature verifies as %s", e.Verified, r.Method)}
	}
	if r.Signer != e.Signer {
		return EntryCheck{}, &verify.Failure{Digest: e.Digest, Reason: verify.UntrustedSigner, Detail: fmt.Sprintf("the lock records signer %s, the signature verifies with %s", e.Signer, r.Signer)}
	}
	return EntryCheck{Result: r}, nil
}
