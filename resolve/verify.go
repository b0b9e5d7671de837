package resolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
)

// KindUnverified: the image a policy would lock fails the module's verify
// policy (unsigned, untrusted signer, bad signature, signature for another
// digest).
const KindUnverified RefusalKind = "unverified"

// StatusUnverified: an upstream candidate newer than what would be locked,
// an image that runs, or the locked image fails the module's verify
// policy; each finding names the reason.
const StatusUnverified Status = "unverified"

// maxVerifyTries bounds how many upstream tags, newest first, a
// track-upstream module with a verify policy tries before it settles for
// its floors: each costs a manifest and a signature lookup.
const maxVerifyTries = 10

// Verification is what a module's verify policy found in one decision.
type Verification struct {
	// Skipped are the upstream candidates newer than the one chosen that
	// failed verification, newest first.
	Skipped []Unverified
	// Floors are images that run (or the previous entry) and fail
	// verification: floors all the same, reported.
	Floors []Unverified
}

// Unverified is an image that failed verification, and why.
type Unverified struct {
	Image   image.Image
	Failure *verify.Failure
}

// Verifier checks images' signatures under one module's verify policy.
// internal/verify/sigstore implements it; internal/source builds one per
// verify block and run, bound to the module's registry (Input.Verifier).
type Verifier interface {
	// Verify looks up the signatures of repo@digest (cosign's tag scheme,
	// then OCI 1.1 referrers) and checks them. A verdict against the
	// image is a *verify.Failure; any other error is the registry's.
	Verify(ctx context.Context, repo, digest string) (verify.Result, error)
	// Recheck verifies repo@digest again from the signature manifest a
	// lock recorded (signature, a digest): by digest, so a tag re-pushed
	// since changes nothing and a warm cache holds its content, while the
	// registry is asked whether it still serves it (a signature deleted
	// there is gone). Errors as Verify's.
	Recheck(ctx context.Context, repo, digest, signature string) (verify.Result, error)
}

// verifier holds a module's verify policy and what it verified in this
// decision, by digest.
type verifier struct {
	v      Verifier
	done   map[string]verify.Result
	failed map[string]*verify.Failure
	found  *Verification
	// recorded is the signature the previous lock entry records for its
	// digest: rechecked first, by digest (a warm cache answers it with no
	// request).
	recorded map[string]string
}

// newVerifier asks in for m's verifier; nil when m has no verify policy.
func newVerifier(in Input, m *catalogue.Module) (*verifier, error) {
	if m.Verify == nil {
		return nil, nil
	}
	var v Verifier
	if in.Verifier != nil {
		var err error
		if v, err = in.Verifier(m); err != nil {
			return nil, fmt.Errorf("module %q (%s): %w", m.Name, m.Verify.DeclRange, err)
		}
	}
	return &verifier{v: v, done: map[string]verify.Result{}, failed: map[string]*verify.Failure{}, found: &Verification{}}, nil
}

// check verifies img by its digest, once per decision. A verdict against
// the image is a *verify.Failure; other errors are the registry's.
func (v *verifier) check(ctx context.Context, m *catalogue.Module, img image.Image) (verify.Result, error) {
	if r, ok := v.done[img.Digest]; ok {
		return r, nil
	}
	if f, ok := v.failed[img.Digest]; ok {
		return verify.Result{}, f
	}
	if v.v == nil {
		return verify.Result{}, &observe.SourceError{Source: "registry of " + m.Image, Err: fmt.Errorf("verifying %s: no registry may be asked for its signatures", short(img))}
	}
	var r verify.Result
	var err error
	var f *verify.Failure
	if sig, ok := v.recorded[img.Digest]; ok {
		r, err = v.v.Recheck(ctx, m.Image, img.Digest, sig)
		if errors.As(err, &f) {
			// The recorded signature no longer verifies (the policy
			// changed, or it is gone): look for signatures afresh. When
			// none is found, what became of the recorded one is said too.
			rechecked := f
			r, err = v.v.Verify(ctx, m.Image, img.Digest)
			if errors.As(err, &f) && f.Reason == verify.Unsigned {
				err = &verify.Failure{Digest: f.Digest, Reason: rechecked.Reason, Detail: rechecked.Detail + "; afresh: " + f.Detail}
			}
		}
	} else {
		r, err = v.v.Verify(ctx, m.Image, img.Digest)
	}
	switch {
	case errors.As(err, &f):
		v.failed[img.Digest] = f
	case err == nil:
		v.done[img.Digest] = r
	}
	return r, err
}

// verifierFor is module m's verify policy, nil without one; old is its
// previous entry, whose recorded signature it may recheck.
func verifierFor(in Input, m *catalogue.Module, old *lock.Module) (*verifier, error) {
	v, err := newVerifier(in, m)
	if err != nil {
		return nil, err
	}
	if v != nil {
		if o := old; o != nil && o.Image == m.Image && o.Digest != "" && o.Signature != "" {
			v.recorded = map[string]string{o.Digest: o.Signature}
		}
	}
	return v, nil
}

// mustVerify refuses img (the pin, a floating tag) when it fails the
// module's verify policy.
func (dc *decider) mustVerify(ctx context.Context, img image.Image, what string) error {
	if dc.ver == nil {
		return nil
	}
	_, err := dc.ver.check(ctx, dc.m, img)
	var f *verify.Failure
	if errors.As(err, &f) && staked(dc.m, dc.old, img.Digest) {
		// The image the previous entry staked: its verification is lost,
		// which the catalogue may accept (stamp then records the words).
		if r := dc.lost(img, f); r != nil {
			return r
		}
		return nil
	}
	if errors.As(err, &f) {
		return unverifiedRefusal(dc.m, dc.opts, img, what, f)
	}
	return err
}

func detail(f *verify.Failure) string {
	if f.Detail == "" {
		return ""
	}
	return " (" + f.Detail + ")"
}

// newestVerified walks the upstream tags newest first from best, the
// newest that passes the filters, and returns the newest whose image
// verifies (and that image), recording the newer ones that do not. It
// gives up ("" and no image) after maxVerifyTries tags; the floors then
// decide.
func (dc *decider) newestVerified(ctx context.Context, tags []string, f Filters, best string, n int) (string, int, *image.Image, error) {
	if dc.ver == nil || best == "" {
		return best, n, nil, nil
	}
	left := slices.Clone(tags)
	for range maxVerifyTries {
		img, err := dc.fetch(ctx, best)
		if err != nil {
			return "", 0, nil, fmt.Errorf("describing the upstream tag %q: %w", best, err)
		}
		img.Tag = best
		_, err = dc.ver.check(ctx, dc.m, img)
		var fl *verify.Failure
		switch {
		case err == nil:
			return best, n, &img, nil
		case errors.As(err, &fl):
			dc.ver.found.Skipped = append(dc.ver.found.Skipped, Unverified{Image: img, Failure: fl})
		default:
			return "", 0, nil, err
		}
		left = slices.DeleteFunc(left, func(t string) bool { return t == best })
		best, n = rank(left, f, dc.obs)
		if best == "" {
			break
		}
	}
	return "", 0, nil, nil
}

// stamp records on e how its image was verified, and, where the image
// locked is a floor that fails verification (what runs stays a floor
// whether signed or not), reports it instead. When e's image is the one
// the previous entry staked (verified, or kept by allow_unverified) and
// it fails, its verification is lost: a *Refusal, unless the catalogue's
// allow_unverified keeps it, whose words e then records.
func (dc *settled) stamp(ctx context.Context, e *lock.Module) error {
	if e == nil {
		return nil
	}
	e.AllowUnverified = ""
	if dc.ver == nil {
		e.Verified, e.Signer, e.Signature = "", "", ""
		return nil
	}
	// What runs is verified too, to be reported when it fails.
	for _, fl := range dc.floors {
		if fl.entry() || fl.Image.Digest == "" || fl.Image.Digest == e.Digest {
			continue
		}
		if _, err := dc.floorVerified(ctx, fl.Image); err != nil {
			return err
		}
	}
	img := image.Image{Repository: e.Image, Tag: e.Tag, Digest: e.Digest}
	r, err := dc.floorVerified(ctx, img)
	if err != nil {
		return err
	}
	e.Verified, e.Signer, e.Signature = lock.Method(r.Method), r.Signer, r.Signature
	if r.Method == "" && staked(dc.m, dc.old, e.Digest) {
		if r := dc.lost(img, dc.ver.failed[e.Digest]); r != nil {
			return r
		}
		e.AllowUnverified = dc.m.AllowUnverified
		if !strings.Contains(e.Reason, unverifiedText) {
			e.Reason += unverifiedText + e.AllowUnverified
		}
	}
	return nil
}

// unverifiedText opens, in an entry's reason, the words that keep its
// image unverified.
const unverifiedText = "; no longer verified, kept unverified: "

// floorVerified verifies img, recording a failure as a floor's: a zero
// Result and no error.
func (dc *decider) floorVerified(ctx context.Context, img image.Image) (verify.Result, error) {
	r, err := dc.ver.check(ctx, dc.m, img)
	var f *verify.Failure
	if errors.As(err, &f) {
		if !slices.ContainsFunc(dc.ver.found.Floors, func(u Unverified) bool { return u.Image.Digest == img.Digest }) {
			dc.ver.found.Floors = append(dc.ver.found.Floors, Unverified{Image: img, Failure: f})
		}
		return verify.Result{}, nil
	}
	return r, err
}

// reportUnverified adds the unverified findings of d to an outdated check.
func (c *checker) reportUnverified(d *Decision) {
	if d == nil || d.Verification == nil {
		return
	}
	for _, u := range d.Verification.Skipped {
		c.add(StatusUnverified, fmt.Sprintf("upstream offers %s, skipped: %s%s", short(u.Image), u.Failure.Reason, detail(u.Failure)))
	}
	for _, u := range d.Verification.Floors {
		c.add(StatusUnverified, fmt.Sprintf("%s is a floor but not verified: %s%s", short(u.Image), u.Failure.Reason, detail(u.Failure)))
	}
}

// noneVerified refuses a track-upstream module none of whose newest tags
// verifies when nothing runs and nothing was locked: there is no floor to
// fall back on. Nil otherwise (the floors decide).
func (dc *decider) noneVerified() *Refusal {
	if dc.ver == nil || len(dc.ver.found.Skipped) == 0 || dc.old != nil || slices.ContainsFunc(dc.obs, IsFloor) {
		return nil
	}
	return noneVerifiedRefusal(dc.m, dc.opts, dc.ver.found.Skipped)
}
