package resolve

import (
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
)

// The refusals the decision makes, by kind, each with the sentence that
// says what to write or run to decide it. The decision's branches say
// which refusal; the words are here, one place per situation. (A
// downgrade's or an unknown order's advice is written by advise, from the
// claims involved; a lost signature's by lostRefusal; Judge's by judgeFix
// and notServedFix.)

// pinWhere is the pin's place in the catalogue, else the module's.
func pinWhere(m *catalogue.Module) string {
	if rng, ok := m.AttrRange("pin"); ok {
		return rng.String()
	}
	return m.DeclRange.String()
}

// KindDowngrade, KindUnknown.

// spentFix: the catalogue's allow_downgrade accepted an earlier downgrade
// (spender says which) and not this one, below floor f.
func spentFix(m *catalogue.Module, spender string, f Floor, chosen string) string {
	return fmt.Sprintf("in module %q (%s): allow_downgrade = %q accepted the downgrade %s records, below what ran then; %s is newer than %s and was not among it. A reason accepts one downgrade: to accept this one too, write a new allow_downgrade that says why",
		m.Name, pinWhere(m), m.AllowDowngrade, spender, f.Where(), chosen)
}

// noPinFix: floors that cannot be ordered among themselves, and an
// allow_downgrade with no pin to say which to lock.
func noPinFix(m *catalogue.Module) string {
	return fmt.Sprintf("in module %q (%s): allow_downgrade is set, but without a pin nothing says which image to lock: write pin = \"<tag>@sha256:<digest>\" of the one to lock", m.Name, pinWhere(m))
}

// KindUnknown.

// unreadPinRefusal: a pin whose content was out of reach offline, weighed
// against floor f by its text alone.
func unreadPinRefusal(m *catalogue.Module, opts order.Options, pin image.Image, what string, f Floor) *Refusal {
	return &Refusal{Module: m.Name, Kind: KindUnknown, Chosen: pin, What: what, Floor: f, opts: opts,
		Order: order.Result{Cmp: order.Unknown, Rule: order.RuleNone, Detail: "the pin's content is out of reach offline (neither a mirror nor the cache holds its digest), and its text is a claim"},
		fix:   fmt.Sprintf("run without --offline once, so that the cache holds the pin's content, or give registry %q a mirror", m.Image)}
}

// floatingUnknownRefusal: the floating tag the module follows names img,
// whose tag and label conflict (c).
func floatingUnknownRefusal(m *catalogue.Module, opts order.Options, img image.Image, c order.Claim) *Refusal {
	return &Refusal{Module: m.Name, Kind: KindUnknown, Chosen: img, What: "the floating tag " + m.Tag, opts: opts,
		fix: fmt.Sprintf("the floating tag %s names %s, whose %s: its version is unknown, and pin locks no image of unknown version, even with nothing to hold it against. In module %q (%s), follow another tag, or write policy = \"at-least-running\" and pin = %q to lock that image by its digest (its label then says its version)",
			m.Tag, image.Short(img.Digest), c, m.Name, m.DeclRange, img.Digest)}
}

// noneAgreeRefusal: every upstream tag tried (skipped, newest first) has
// conflicting signals, and there is no floor to settle for.
func noneAgreeRefusal(m *catalogue.Module, opts order.Options, skipped []Skipped) *Refusal {
	s := skipped[0]
	return &Refusal{Module: m.Name, Kind: KindUnknown, Chosen: s.Image, What: "the newest upstream tag", opts: opts,
		fix: fmt.Sprintf("every upstream tag of %s pin tried (%d, newest first) names an image whose own label contradicts it (%s: %s), nothing runs and nothing was locked: pin locks no image of unknown version, even with nothing to hold it against. In module %q (%s), write tags = \"<a regular expression>\" or constraint = \"<range>\" to leave those tags out, or policy = \"at-least-running\" and pin = \"sha256:<digest>\" of the image to lock (its label then says its version)",
			m.Image, len(skipped), short(s.Image), s.Why, m.Name, m.DeclRange)}
}

// KindNoDigest: the newest floor f, a container, runs an image without a
// registry digest; res is it against what (the pin, the candidate).
func noDigestRefusal(m *catalogue.Module, opts order.Options, f Floor, res order.Result, what string) *Refusal {
	o := f.Observation
	return &Refusal{Module: m.Name, Kind: KindNoDigest, Chosen: o.Image, What: "what " + o.Where() + " runs", Floor: f, Order: res, opts: opts,
		fix: fmt.Sprintf("%s runs an image the host has no registry digest for (loaded or built locally): push it to %s and pin its digest, or write allow_downgrade = \"<why>\" in module %q to lock %s", o.Where(), m.Image, m.Name, what)}
}

// KindNothing: no pin, no candidate and no container that has run (obs
// are the containers that did not).
func nothingRefusal(m *catalogue.Module, opts order.Options, obs []observe.Observation) *Refusal {
	var missing []string
	for _, o := range obs {
		missing = append(missing, o.Where()+" ("+o.State+")")
	}
	return &Refusal{Module: m.Name, Kind: KindNothing, opts: opts,
		fix: fmt.Sprintf("there is nothing to lock: no pin, no upstream candidate and no container that has run (%s). Add pin = \"<tag>@sha256:<digest>\" to module %q", strings.Join(missing, ", "), m.Name)}
}

// KindUnreadHosts: "lock --from-host in.Record.Host", for module m one of whose
// hosts (unread) the lock has no record of.
func unreadHostsRefusal(in Input, m *catalogue.Module, unread []string) *Refusal {
	return &Refusal{Module: m.Name, Kind: KindUnreadHosts,
		fix: fmt.Sprintf("lock --from-host %s reads %s alone, and the lock has no record of what %s run(s) for module %q (a host added to runs_on or to the catalogue since, one only \"pin resolve MODULE\" for other modules read, or a lock written before pin recorded the hosts it read): their floors are not known. Run \"pin resolve\" (it reads every host), or \"pin lock --from-host\" on each of them first",
			in.Record.Host, in.Record.Host, strings.Join(unread, ", "), m.Name)}
}

// KindLockUnread, KindLockUnreadOffline: a previous entry (floor f; old,
// the module's own, when f names none) whose content nobody could read:
// its lines say it is the newest, but a lock that names a digest the
// registry does not serve cannot be pulled, and lines are claims.
func lockUnreadRefusal(m *catalogue.Module, opts order.Options, f Floor, old *lock.Module) *Refusal {
	e := f.Entry
	if e == nil {
		e = old
	}
	where := ""
	if f.Kind == FloorInherited {
		where = "'s entry for " + f.entryName()
	}
	if w := entryWhere(e); w != "" {
		where += " (" + w + ")"
	}
	r := &Refusal{Module: m.Name, Kind: KindLockUnread, Chosen: f.Image, What: "the previous lock's entry", Floor: f, opts: opts,
		Order: order.Result{Cmp: order.Unknown, Rule: order.RuleNone}}
	if f.content == contentOffline {
		r.Kind = KindLockUnreadOffline
		r.fix = fmt.Sprintf("the previous lock%s names %s, not older by its lines than what would be locked, and offline neither a mirror nor the cache holds that digest: its lines are claims pin cannot check, and pin neither keeps nor goes below what it cannot read. Run once without --offline, so that the cache holds it, or give registry %q a mirror",
			where, withDigest(Label(opts, f.Image), f.Image), m.Image)
		return r
	}
	r.fix = fmt.Sprintf("the previous lock%s names %s, not older by its lines than what would be locked, but %s does not serve that digest: its lines are claims pin cannot check, and pin neither keeps nor goes below what it cannot read. Push the image back to %s, or give its registry a mirror that holds it; to lock something else, write pin = \"<tag>@sha256:<digest>\" and allow_downgrade = \"<why>\" in module %q",
		where, withDigest(Label(opts, f.Image), f.Image), m.Image, m.Image, m.Name)
	return r
}

// KindUnverified.

// unverifiedRefusal: img (the pin, a floating tag: what) fails the
// module's verify policy (f).
func unverifiedRefusal(m *catalogue.Module, opts order.Options, img image.Image, what string, f *verify.Failure) *Refusal {
	return &Refusal{Module: m.Name, Kind: KindUnverified, Chosen: img, What: what, opts: opts,
		fix: fmt.Sprintf("%s %s fails the verify policy: %s. Sign it as the verify block of module %q asks (with a key it names, or as its keyless identity), or pin a signed image", what, short(img), string(f.Reason)+detail(f), m.Name)}
}

// noneVerifiedRefusal: none of the newest upstream tags verifies (skipped,
// newest first), and there is no floor to fall back on.
func noneVerifiedRefusal(m *catalogue.Module, opts order.Options, skipped []Unverified) *Refusal {
	u := skipped[0]
	return &Refusal{Module: m.Name, Kind: KindUnverified, Chosen: u.Image, What: "the newest upstream tag", opts: opts,
		fix: fmt.Sprintf("none of the newest %d upstream tags verifies and nothing runs or was locked: %s is %s%s. Sign it as the verify block of module %q asks (with a key it names, or as its keyless identity)",
			len(skipped), short(u.Image), u.Failure.Reason, detail(u.Failure), m.Name)}
}
