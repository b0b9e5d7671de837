package resolve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
)

// VerdictUnverified is the cutover verdict (pin plan) and the Judgement
// verdict (admit, authz) of the locked image when it was verified and can
// no longer be: its signature deleted from the registry, its key rotated
// out of the catalogue, its identity changed. Never safe.
const VerdictUnverified Verdict = "unverified"

// Losing verification is a change pin says out loud, as a downgrade: a
// lock entry whose image was verified (or was kept unverified by the
// catalogue's allow_unverified) is the module's claim about that image's
// signature, and an image that no longer meets it is refused, with what
// was lost and what to write, unless the catalogue's allow_unverified
// gives the reason to keep it (then recorded in the lock, as
// allow_downgrade is).

// staked reports whether the previous entry old of module m makes a claim
// about the signature of digest: it names that image of m's repository,
// and records it verified, or kept unverified by allow_unverified.
func staked(m *catalogue.Module, old *lock.Module, digest string) bool {
	return m.Verify != nil && old != nil && digest != "" && old.Image == m.Image && old.Digest == digest &&
		(old.Verified != "" || old.AllowUnverified != "")
}

// lostRefusal is the refusal of module m's locked image img, staked by
// the previous entry old, which failed verification with f; what is the
// fix's opening for the command at hand (how the catalogue's
// allow_unverified reaches the lock).
func lostRefusal(m *catalogue.Module, old *lock.Module, img image.Image, f *verify.Failure, how string) *Refusal {
	var b strings.Builder
	ref := m.Image + "@" + img.Digest
	if img.Tag != "" {
		ref = m.Image + ":" + img.Tag + "@" + img.Digest
	}
	fmt.Fprintf(&b, "the locked image %s can no longer be verified\n  locked:   %s\n", short(img), ref)
	if old.Verified != "" {
		fmt.Fprintf(&b, "  verified: %s by %s, signature %s (the previous lock)\n", old.Verified, old.Signer, old.Signature)
	} else {
		fmt.Fprintf(&b, "  kept unverified by allow_unverified = %q (the previous lock), which module %q no longer states\n", old.AllowUnverified, m.Name)
	}
	fmt.Fprintf(&b, "  now:      %s%s\n", f.Reason, detail(f))
	fmt.Fprintf(&b, "  to decide, re-sign %s (cosign sign) with a key the verify block at %s names, or as its keyless identity, or lock a signed image; "+
		"to keep this one unverified, write allow_unverified = \"<why>\" in module %q (%s)%s",
		ref, m.Verify.DeclRange, m.Name, m.DeclRange, how)
	return &Refusal{Module: m.Name, Kind: KindUnverified, Chosen: img, What: "the locked image", fix: b.String()}
}

// lost judges img, which failed verification with f, for the decision: a
// refusal when it is the image the previous entry staked and the
// catalogue gives no reason to keep it; nil otherwise (nothing was lost,
// or allow_unverified keeps it: stamp records the words).
func (dc *decider) lost(img image.Image, f *verify.Failure) *Refusal {
	if !staked(dc.m, dc.old, img.Digest) || dc.m.AllowUnverified != "" {
		return nil
	}
	return lostRefusal(dc.m, dc.old, img, f, ": the reason goes into the lock")
}

// lockLost checks, for pin plan and admission, whether the image the lock
// names for m lost its verification: staked by the entry, and failing
// verification now, unless the lock records the catalogue's
// allow_unverified words for it (as "pin resolve" writes them). It
// returns the refusal and its one-line summary, or nil; an error is the
// registry's, or the policy's that could not be loaded.
func lockLost(ctx context.Context, in Input, m *catalogue.Module, locked *lock.Module) (*Refusal, string, error) {
	if locked == nil || !staked(m, locked, locked.Digest) || (locked.AllowUnverified != "" && locked.AllowUnverified == m.AllowUnverified) {
		return nil, "", nil
	}
	v, err := newVerifier(in, m)
	if err != nil {
		return nil, "", err
	}
	if locked.Signature != "" {
		v.recorded = map[string]string{locked.Digest: locked.Signature}
	}
	img := image.Image{Repository: locked.Image, Tag: locked.Tag, Digest: locked.Digest}
	_, err = v.check(ctx, m, img)
	var f *verify.Failure
	if !errors.As(err, &f) {
		return nil, "", err
	}
	how := `, and run "pin resolve": the reason goes into the lock`
	if m.AllowUnverified != "" {
		how = `: it does; run "pin resolve", which records it in the lock`
	}
	was := fmt.Sprintf("verified %s by %s", locked.Verified, locked.Signer)
	if locked.Verified == "" {
		was = fmt.Sprintf("kept unverified by allow_unverified = %q, which module %q no longer states", locked.AllowUnverified, m.Name)
	}
	line := fmt.Sprintf("the locked image can no longer be verified: %s%s (the lock records it %s); re-sign it, or write allow_unverified = \"<why>\" in module %q and run \"pin resolve\"",
		f.Reason, detail(f), was, m.Name)
	return lostRefusal(m, locked, img, f, how), line, nil
}

// lostCutover is the cutover verdict of a container whose replacement,
// the locked image, lost its verification (line, from lockLost).
func lostCutover(line string) (Verdict, order.Result) {
	return VerdictUnverified, order.Result{Cmp: order.Unknown, Rule: order.RuleNone, Detail: line}
}
