package resolve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
)

// VerdictFirst is the verdict of Judge when the module has no floor: no
// container of it has run on the hosts read and the lock names nothing.
// Nothing can be downgraded.
const VerdictFirst Verdict = "first"

// Override is what the object that asks for a new image says in words to
// accept a downgrade or an unknown order: the counterpart, at the point of
// replacement, of a module's allow_downgrade and restore.
type Override struct {
	// Downgrade is the reason given; "" for none.
	Downgrade string
	// Restore is the backup the downgrade of a one_way module restores
	// from; without it a one_way module's downgrade is refused.
	Restore string
	// How and HowRestore tell people how to give Downgrade and Restore
	// where the caller reads them (`annotate the object with
	// pin.dev/allow-downgrade: "<why>"`); refusals end with them.
	How, HowRestore string
	// Catalogue says Downgrade and Restore are the module's own
	// allow_downgrade and restore (pin promote), not words given for this
	// one replacement (an annotation, a label): as in Resolve, they then
	// accept one downgrade, and words a previous entry already spent on
	// another downgrade accept nothing.
	Catalogue bool
}

// Judgement is what Judge decided of one new image.
type Judgement struct {
	Module string
	// Image is the new image as its content says (read by digest, else by
	// tag); as the reference said when the registry does not hold it
	// (NotServed).
	Image image.Image
	// NotServed: the registry of the image's repository answered that it
	// has no image by the reference (no such tag, no such manifest). The
	// reference then orders nothing; refused, the refusal is of kind
	// KindNotServed and says so.
	NotServed bool
	// Floors are what the image was held against, as in Decision.Floors.
	Floors []Floor
	// Verdict is the worst order against the floors: downgrade or unknown
	// when a floor is newer or cannot be ordered, else upgrade or same;
	// VerdictFirst with no floor.
	Verdict Verdict
	// Order is the result against the floor that decided Verdict.
	Order order.Result
	// Refusal is set when the image is refused: its text is that of pin
	// resolve's refusals, ending with what to write to decide.
	Refusal *Refusal
	// Accepted is set when a downgrade or unknown order was accepted, and
	// Reason then says by whom and why (the override, or a lock entry that
	// records the catalogue's allow_downgrade for this very digest).
	Accepted *Refusal
	Reason   string
}

// Allowed reports whether the new image may replace what runs.
func (j *Judgement) Allowed() bool { return j.Refusal == nil }

// Judge decides whether img may replace what module m's containers run:
// it orders img, described from its content, against every floor of m
// (the containers in.Observed reports for m whatever their state but
// "created", and the lock entry in.Old names, read by digest and checked
// against its lines) with m's ordering options, exactly as Resolve holds a
// locked image against them. Older or unknown is refused unless ov gives
// the reason (and, for a one_way module, the restore), or the lock entry
// names this digest with the catalogue's allow_downgrade.
//
// img needs Repository and a Tag or Digest (a reference as deployed). Its
// content is asked of in.Registry(img.Repository) by digest, else by tag;
// a registry that does not hold it leaves the reference's words to order
// by, and one that fails is an error. So are a host of m that could not be
// read (in.Observed.Errors), a lock entry whose lines disagree with its
// digest (*LockMismatchError) and a registry that fails on a floor: Judge
// then cannot decide, and the caller applies its failure policy. Only the
// hosts in in.Observed are floors; the others bound the lock, and the lock
// bounds the image. The previous entries of other modules, or retired
// ones, whose floors m takes over (a module renamed, or removed and added
// back) are floors too, as in Resolve. in.Mode is ignored.
func Judge(ctx context.Context, in Input, m *catalogue.Module, img image.Image, ov Override) (*Judgement, error) {
	u := look(ctx, in, m, nil)
	if len(u.hostErrs) > 0 {
		return nil, errors.Join(u.hostErrs...)
	}
	if u.enrichErr != nil {
		return nil, u.enrichErr
	}
	opts, old := u.opts, u.old
	// Only the hosts in in.Observed are floors: what the previous entry
	// recorded elsewhere is not (an empty record: every host read).
	dc, err := (&decider{in: in, m: m, opts: opts, reg: u.reg, old: old, obs: u.obs, claims: u.tags, heirs: u.heirs, heirIdx: u.idx}).settleOn(ctx, Record{})
	var lu *lockUnreadError
	if errors.As(err, &lu) {
		err = lu.err
	}
	if err != nil {
		return nil, err
	}
	fl := dc.floors
	newImg, served, err := dc.describeNew(ctx, img)
	if err != nil {
		return nil, err
	}
	j := &Judgement{Module: m.Name, Image: newImg, Floors: fl, Verdict: VerdictFirst, NotServed: !served}
	if old != nil && newImg.Digest == old.Digest {
		// The lock's own image: refused if it lost its verification.
		r, _, err := lockLost(ctx, in, m, old)
		if err != nil {
			return nil, err
		}
		if r != nil {
			j.Verdict, j.Refusal = VerdictUnverified, r
			return j, nil
		}
	}
	what := "the new image " + short(newImg)
	ordered := newImg
	if !served {
		// What its reference says is a claim nothing backs: it orders
		// nothing (the digest alone may still be what a floor runs).
		ordered = image.Image{Repository: newImg.Repository, Digest: newImg.Digest}
	}
	var failed *Refusal
	var spentOn *Floor  // with ov.Catalogue, a floor below which the words were spent on another downgrade
	unrecorded := false // a floor it fails against that the lock was not held against
	foreign := newImg.Repository != "" && newImg.Repository != m.Image
	for _, f := range fl {
		res := dc.claims.compare(ctx, ordered, f.Image, ordered, f.Image, opts)
		if foreign && res.Rule != order.RuleContent {
			// Another repository's tags and labels are its publisher's
			// words: only the same content as what runs orders it.
			res = order.Result{Cmp: order.Unknown, Rule: order.RuleNone,
				Detail: fmt.Sprintf("the new image comes from %s, not from the module's repository %s: only the same content as a floor orders it", newImg.Repository, m.Image)}
		}
		switch res.Cmp {
		case order.Newer:
			if j.Verdict == VerdictFirst || j.Verdict == VerdictSame {
				j.Verdict, j.Order = verdictOf(res), res
			}
			continue
		case order.Equal:
			if j.Verdict == VerdictFirst {
				j.Verdict, j.Order = verdictOf(res), res
			}
			continue
		}
		if old != nil && !dc.recordedBy(ctx, old, f) {
			unrecorded = true
		}
		if ov.Catalogue && spentOn == nil && ov.Downgrade == m.AllowDowngrade && dc.spent(ctx, f) {
			spentOn = &f
		}
		if failed == nil {
			failed = &Refusal{Module: m.Name, Kind: kindOf(res), Chosen: newImg, What: what, Floor: f, Order: res, opts: opts}
			j.Order = res
			j.Verdict = verdictOf(res)
		}
	}
	if failed == nil {
		return j, nil
	}
	switch {
	case old != nil && wordsAccept(m, old.AllowDowngrade, old.Restore) && newImg.Digest != "" && newImg.Digest == old.Digest &&
		wordsAccept(m, m.AllowDowngrade, m.Restore) && !unrecorded:
		// The lock states it, and the catalogue still does: a stale line
		// in the lock alone accepts nothing, and it accepts the downgrade
		// below what the lock was held against, not below a container
		// that started a newer image since.
		j.Accepted = failed
		j.Reason = "the lock names this image with the catalogue's allow_downgrade: " + old.AllowDowngrade
		if old.Restore != "" {
			j.Reason += "; restore from: " + old.Restore
		}
	case wordsAccept(m, ov.Downgrade, ov.Restore) && spentOn == nil:
		j.Accepted = failed
		j.Reason = "downgrade allowed: " + ov.Downgrade
		if ov.Restore != "" {
			j.Reason += "; restore from: " + ov.Restore
		}
	case !served && !foreign:
		// The registry has no such tag or manifest: that, not an order,
		// is what to fix; no override is asked for.
		failed.Kind = KindNotServed
		failed.fix = dc.notServedFix(ctx, failed)
		j.Refusal = failed
	case spentOn != nil:
		failed.Floor = *spentOn
		failed.fix = spentFix(m, dc.spender(), *spentOn, dc.label(newImg))
		j.Refusal = failed
	default:
		failed.fix = dc.judgeFix(ctx, failed, ov)
		if ov.Downgrade != "" && !catalogue.HasWords(ov.Downgrade) || m.OneWay && ov.Restore != "" && !catalogue.HasWords(ov.Restore) {
			failed.fix = "the override gives no reason in words (letters or digits: only spaces or characters nobody sees), which accepts nothing; " + failed.fix
		}
		j.Refusal = failed
	}
	return j, nil
}

// describeNew reads the new image's content: by digest when the reference
// names one (its tag then a claim the content is checked against by
// order.Compare), else by tag. served is false when the registry answered
// that it has no image by that reference (no such tag, no such manifest):
// the image is then the reference as given, which orders nothing.
func (dc *decider) describeNew(ctx context.Context, img image.Image) (_ image.Image, served bool, _ error) {
	ref := img.Digest
	if ref == "" {
		ref = img.Tag
	}
	if ref == "" || dc.in.Registry == nil {
		return img, true, nil
	}
	reg := dc.in.Registry(img.Repository)
	if reg == nil {
		return img, true, nil
	}
	full, err := reg.Image(ctx, img.Repository, ref, dc.platform())
	switch {
	case errors.Is(err, image.ErrNotFound):
		return image.Image{Repository: img.Repository, Tag: img.Tag, Digest: img.Digest}, false, nil
	case errors.Is(err, image.ErrUnavailable):
		return img, true, nil
	case err != nil:
		return image.Image{}, false, fmt.Errorf("describing the new image %s: %w", img.Ref(), &observe.SourceError{Source: "registry of " + img.Repository, Err: err})
	}
	full.Repository = img.Repository
	if img.Tag != "" {
		full.Tag = img.Tag
	}
	dc.claims.vouchRef(ref, full)
	dc.claims.offer(full)
	return full, true, nil
}

// notServedFix says what to do about a new image its registry has no
// image by: push it, or deploy what it has; or what the floor runs.
func (dc *settled) notServedFix(ctx context.Context, r *Refusal) string {
	fix := []string{fmt.Sprintf("push %s first, or deploy a tag the registry has", r.Chosen.Ref())}
	if r.Chosen.Digest != "" {
		fix = []string{"deploy a digest the registry serves (this one was never pushed there, or was deleted)"}
	}
	if f := r.Floor; f.Image.Digest != "" {
		img, _ := dc.asWritten(ctx, f.Image)
		img.Repository = f.Image.Repository
		if dc.allAtLeast(ctx, img) {
			fix = append(fix, fmt.Sprintf("to run what %s, deploy %s", f.runs(), img.Ref()))
		}
	}
	return strings.Join(fix, "; ")
}

// judgeFix says what to do instead of a refused replacement: run what
// the floor runs, or give the override.
func (dc *settled) judgeFix(ctx context.Context, r *Refusal, ov Override) string {
	var opts []string
	if v, ok := dc.claims.disbelieved(r.Chosen); ok && v.now != "" && dc.allAtLeast(ctx, image.Image{Repository: r.Chosen.Repository, Tag: r.Chosen.Tag, Digest: v.now}) {
		// The reference's tag names another digest now: what it most
		// likely meant.
		opts = append(opts, fmt.Sprintf("to run what the tag %s names now, deploy %s:%s@%s", r.Chosen.Tag, r.Chosen.Repository, r.Chosen.Tag, v.now))
	}
	if f := r.Floor; f.Image.Digest != "" {
		// (A tag pin does not believe is not advised back.)
		img, _ := dc.asWritten(ctx, f.Image)
		p := f.Image.Repository + "@" + img.Digest
		if img.Tag != "" {
			p = f.Image.Repository + ":" + img.Tag + "@" + img.Digest
		}
		var s string
		switch f.Kind {
		case FloorLocked:
			s = fmt.Sprintf("to run what the lock names, deploy %s", p)
		case FloorInherited:
			s = fmt.Sprintf("to run what the lock names for %s, whose floor module %q takes over, deploy %s", f.entryName(), dc.m.Name, p)
		default:
			s = fmt.Sprintf("to run what %s runs, deploy %s", f.Where(), p)
		}
		switch {
		case dc.allAtLeast(ctx, img):
			opts = append(opts, s)
		case ov.How != "":
			// It cannot be ordered against another floor itself: the
			// override accepts that.
			opts = append(opts, s+" and "+dc.howOverride(ov))
		}
	}
	if ov.How != "" {
		opts = append(opts, "to replace it anyway, "+dc.howOverride(ov))
	}
	if r.Kind == KindUnknown && dc.m.Versioning.Kind == "" && (dc.notVersion(r.Floor.Image) || dc.notVersion(r.Chosen)) {
		opts = append(opts, fmt.Sprintf(`if the tags are not semver, set versioning = "calver", "numeric" or "regex:…" in module %q (%s)`, dc.m.Name, dc.pinWhere()))
	}
	return strings.Join(opts, "; ")
}

// howOverride says how to give the override where the caller reads it,
// with the restore for a one_way module.
func (dc *decider) howOverride(ov Override) string {
	s := ov.How
	if dc.m.OneWay && ov.HowRestore != "" {
		s += " and " + ov.HowRestore + " (module " + fmt.Sprintf("%q", dc.m.Name) + " is one_way)"
	}
	return s
}
