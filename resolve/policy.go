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
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// platform is the platform to resolve an index to: that of a container
// that runs the module when known, else the module's.
func (dc *decider) platform() string { return firstPlatform(dc.obs, dc.m) }

// fetch asks the registry for repo:ref.
func (dc *decider) fetch(ctx context.Context, ref string) (image.Image, error) {
	if dc.reg == nil {
		return image.Image{}, &observe.SourceError{Source: "registry of " + dc.m.Image, Err: errors.New("no registry may be asked (offline without a mirror)")}
	}
	img, err := dc.reg.Image(ctx, dc.m.Image, ref, dc.platform())
	if err != nil {
		return image.Image{}, &observe.SourceError{Source: "registry of " + dc.m.Image, Err: err}
	}
	dc.claims.vouchRef(ref, img)
	return img, nil
}

// fetchOr is img when the caller has it already, else what fetch says.
func (dc *decider) fetchOr(ctx context.Context, ref string, img *image.Image) (image.Image, error) {
	if img != nil {
		return *img, nil
	}
	return dc.fetch(ctx, ref)
}

// pinImage describes the catalogue's pin from its content: by digest when
// it names one (its tag is then a claim, checked against the image's own
// version label), else by tag. Offline with the content out of reach, the
// pin's text and a previous entry of the same digest are all there is:
// unread says so.
func (dc *decider) pinImage(ctx context.Context) (_ image.Image, unread bool, _ error) {
	pin := dc.m.Pin
	ref := pin.Digest
	if ref == "" {
		ref = pin.Tag
	}
	fromText := func() image.Image {
		img := image.Image{Repository: dc.m.Image, Tag: pin.Tag, Digest: pin.Digest}
		if old := dc.old; old != nil && old.Digest == pin.Digest {
			img.ConfigDigest, img.Created, img.Platforms = old.Config, old.Created, old.Platforms
		}
		dc.claims.offer(img)
		return img
	}
	if dc.reg == nil && pin.Digest != "" {
		return fromText(), true, nil
	}
	img, err := dc.fetch(ctx, ref)
	if errors.Is(err, image.ErrUnavailable) && pin.Digest != "" {
		return fromText(), true, nil
	}
	if err != nil {
		return image.Image{}, false, fmt.Errorf("resolving the pin %q: %w", pin.Text, err)
	}
	if pin.Tag != "" {
		img.Tag = pin.Tag
	}
	if pin.Digest != "" && pin.Tag != "" {
		if c := dc.opts.VersionOf(img); c.Kind == order.Conflicting {
			return image.Image{}, false, &PinMismatchError{Module: dc.m.Name, Pin: pin.Text, Tag: c.Tag.Original, Label: c.Label.Original, Where: dc.pinWhere()}
		}
		dc.claims.offer(img)
	}
	return img, false, nil
}

// pinWhere is the pin's place in the catalogue, else the module's.
func (dc *decider) pinWhere() string { return pinWhere(dc.m) }

// exact locks the pin, never below a floor; w records whether the pin's
// content was read.
func (dc *decider) exact(ctx context.Context, w *weighed) (*settled, choice, *Refusal, error) {
	pin, unread, err := dc.pinImage(ctx)
	w.unread = unread
	if err != nil {
		return nil, choice{}, nil, err
	}
	if err := dc.mustVerify(ctx, pin, "the exact pin"); err != nil {
		return nil, choice{}, nil, err
	}
	s, err := dc.settle(ctx)
	if err != nil {
		return s, choice{}, nil, err
	}
	dg, err := s.checkFloors(ctx, pin, "the exact pin")
	if err != nil {
		return s, choice{}, nil, err
	}
	if r := s.unreadPin(pin, unread, "the exact pin"); r != nil && dg == nil {
		return s, choice{}, nil, r
	}
	reason, rule := s.describeWin(ctx, "the exact pin "+dc.label(pin), pin, dg)
	return s, choice{img: pin, source: lock.SourcePin, reason: reason, rule: rule}, dg, nil
}

// atLeastRunning locks the newest of the pin and the floors; w records
// whether the pin's content was read.
func (dc *decider) atLeastRunning(ctx context.Context, w *weighed) (*settled, choice, *Refusal, error) {
	var pin *image.Image
	if dc.m.Pin.Text != "" {
		p, unread, err := dc.pinImage(ctx)
		w.unread = unread
		if err != nil {
			return nil, choice{}, nil, err
		}
		if err := dc.mustVerify(ctx, p, "the pin"); err != nil {
			return nil, choice{}, nil, err
		}
		pin = &p
	}
	s, err := dc.settle(ctx)
	if err != nil {
		return s, choice{}, nil, err
	}
	return s.with(s.pick(ctx, pin, w.unread, "the pin", lock.SourcePin))
}

// with is what a policy returns: the floors it settled, and what they
// decided.
func (s *settled) with(c choice, dg *Refusal, err error) (*settled, choice, *Refusal, error) {
	return s, c, dg, err
}

// checkFloors holds a chosen image against every floor. Older or unknown is
// a refusal unless the catalogue states the downgrade; then the accepted
// downgrade is returned.
func (dc *settled) checkFloors(ctx context.Context, chosen image.Image, what string) (*Refusal, error) {
	var accepted *Refusal
	for _, f := range dc.floors {
		res := dc.compare(ctx, chosen, f.Image)
		if res.Cmp == order.Newer || res.Cmp == order.Equal {
			continue
		}
		r := &Refusal{Module: dc.m.Name, Kind: kindOf(res), Chosen: chosen, What: what, Floor: f, Order: res, opts: dc.opts}
		spent := dc.spent(ctx, f)
		if dc.downgradeAllowed() && !spent {
			if accepted == nil {
				accepted = r
			}
			continue
		}
		if f.unread() {
			return nil, lockUnreadRefusal(dc.m, dc.opts, f, dc.old)
		}
		r.Advice, r.fix = dc.advise(ctx, chosen, f, res, true)
		if spent {
			r.fix = spentFix(dc.m, dc.spender(), f, dc.label(chosen))
		}
		return nil, r
	}
	return accepted, nil
}

// unreadPin refuses a pin whose content was out of reach (offline) where
// floors exist and none is the same image: its text alone would order it,
// and a tag is a claim. With no floor, or the same content as one, there
// is nothing to hold it against.
func (dc *settled) unreadPin(pin image.Image, unread bool, what string) *Refusal {
	if !unread || len(dc.floors) == 0 {
		return nil
	}
	for _, f := range dc.floors {
		if order.Compare(pin, f.Image, dc.opts).Rule == order.RuleContent {
			return nil
		}
	}
	return unreadPinRefusal(dc.m, dc.opts, pin, what, dc.floors[0])
}

func kindOf(res order.Result) RefusalKind {
	if res.Cmp == order.Unknown {
		return KindUnknown
	}
	return KindDowngrade
}

// pick locks the newest of primary (the pin or the upstream candidate) and
// the floors. With no clear newest, it refuses, or locks primary where the
// catalogue states the downgrade. unread: primary is a pin whose content
// was out of reach, and only its text was weighed.
func (dc *settled) pick(ctx context.Context, primary *image.Image, unread bool, what string, source lock.Source) (choice, *Refusal, error) {
	if primary != nil && dc.allAtLeast(ctx, *primary) {
		if r := dc.unreadPin(*primary, unread, what); r != nil {
			return choice{}, nil, r
		}
		reason, rule := dc.describeWin(ctx, dc.phrase(what, *primary, dc.label(*primary)), *primary, nil)
		return choice{img: *primary, source: source, reason: reason, rule: rule}, nil, nil
	}
	for _, f := range dc.floors {
		if !dc.allAtLeast(ctx, f.Image) {
			continue
		}
		if f.unread() {
			// (A container running the same image would have come first.)
			if dc.downgradeAllowed() {
				continue
			}
			return choice{}, nil, lockUnreadRefusal(dc.m, dc.opts, f, dc.old)
		}
		var res order.Result
		if primary != nil {
			res = dc.compare(ctx, f.Image, *primary)
			if res.Cmp != order.Newer && res.Cmp != order.Equal {
				continue
			}
		}
		return dc.lockFloor(ctx, f, primary, what, res)
	}
	if primary == nil && len(dc.floors) == 0 {
		return choice{}, nil, nothingRefusal(dc.m, dc.opts, dc.obs)
	}
	if primary == nil {
		// Floors that cannot be ordered among themselves.
		a := dc.floors[0]
		b := dc.floors[len(dc.floors)-1]
		for _, f := range dc.floors[1:] {
			if c := dc.compare(ctx, a.Image, f.Image).Cmp; c != order.Newer && c != order.Equal {
				b = f
				break
			}
		}
		res := dc.compare(ctx, a.Image, b.Image)
		advice, fix := dc.advise(ctx, a.Image, b, res, false)
		if dc.downgradeAllowed() {
			advice, fix = nil, noPinFix(dc.m)
		}
		return choice{}, nil, &Refusal{Module: dc.m.Name, Kind: kindOf(res), Chosen: a.Image, What: "what " + a.runs(), Floor: b, Order: res, opts: dc.opts, fix: fix, Advice: advice}
	}
	dg, err := dc.checkFloors(ctx, *primary, what)
	if err != nil {
		return choice{}, nil, err
	}
	// Only reached when the downgrade is allowed.
	reason, rule := dc.describeWin(ctx, dc.phrase(what, *primary, dc.label(*primary)), *primary, dg)
	return choice{img: *primary, source: source, reason: reason, rule: rule}, dg, nil
}

// allAtLeast reports whether img is at or above every floor.
func (dc *settled) allAtLeast(ctx context.Context, img image.Image) bool {
	for _, f := range dc.floors {
		c := dc.compare(ctx, img, f.Image).Cmp
		if c != order.Newer && c != order.Equal {
			return false
		}
	}
	return true
}

// lockFloor locks a floor that is newer than primary: the image a
// container runs, or the previous entry, kept.
func (dc *settled) lockFloor(ctx context.Context, f Floor, primary *image.Image, what string, res order.Result) (choice, *Refusal, error) {
	than := "; no pin to compare with"
	switch {
	case primary == nil && dc.m.Policy == catalogue.TrackUpstream:
		than = "; no upstream tag asked"
	case primary != nil && res.Cmp == order.Equal:
		than = fmt.Sprintf(", the same image as %s", what)
	case primary != nil:
		_, prim := labels(dc.opts, f.Image, *primary)
		than = fmt.Sprintf(", newer than %s (%s): locking %s would be a downgrade", dc.phrase(what, *primary, prim), res.Detail, what)
	}
	if f.entry() {
		// (The same words for an entry taken over: the next run keeps it
		// as the module's own, and its reason does not change.)
		reason := fmt.Sprintf("the previous lock names %s%s; the lock never goes back", dc.floorLabel(f, primary), than)
		c := choice{keep: true, reason: reason, rule: res.Rule}
		if f.Kind == FloorInherited {
			c.from = f.Entry
		}
		return c, nil, nil
	}
	o := f.Observation
	if o.Image.Digest == "" {
		return choice{}, nil, noDigestRefusal(dc.m, dc.opts, f, res, what)
	}
	img := o.Image
	if dc.reg != nil {
		// With what the registry knows (index platforms, config); an image
		// the registry does not hold is still locked as the host knows it.
		full, state, err := describe(ctx, dc.reg, dc.m, img.Digest, platformOf(o))
		if err != nil {
			return choice{}, nil, fmt.Errorf("describing the running image %s: %w", image.Short(img.Digest), err)
		}
		if state == contentRead {
			full.Tag = img.Tag
			img = full
		}
		img.ImageID = ""
	}
	reason := fmt.Sprintf("%s %s%s", f.runs(), dc.floorLabel(f, primary), than)
	if others := dc.containers() - 1; others > 0 {
		if others == 1 {
			reason += "; 1 other container runs or ran an equal or older image"
		} else {
			reason += fmt.Sprintf("; %d other containers run or ran equal or older images", others)
		}
	}
	return choice{img: img, source: lock.SourceRunning, reason: reason, rule: res.Rule}, nil, nil
}

// platformOf is the platform to describe an observation's image with.
func platformOf(o observe.Observation) string { return o.Image.Platform }

// containers counts the floors that are containers (now or recorded).
func (dc *settled) containers() int {
	n := 0
	for _, f := range dc.floors {
		if f.container() {
			n++
		}
	}
	return n
}

// describeWin explains why the chosen image won against the containers,
// and names the rule that decided. The previous lock entry, which the
// chosen image is at or above, is left out: a reason that named it would
// change from one run to the next although nothing did.
func (dc *settled) describeWin(ctx context.Context, what string, img image.Image, dg *Refusal) (string, order.Rule) {
	if dc.containers() == 0 {
		s := what + "; no host runs this module"
		if dg != nil {
			s += dc.allowedText()
		}
		return s, ""
	}
	var parts []string
	var rule order.Rule
	for _, f := range dc.floors {
		if !f.container() {
			continue
		}
		res := dc.compare(ctx, img, f.Image)
		switch res.Cmp {
		case order.Equal:
			parts = append(parts, fmt.Sprintf("%s the same image", f.runs()))
		case order.Newer:
			parts = append(parts, fmt.Sprintf("newer than what %s (%s): an upgrade", f.runs(), res.Detail))
		default:
			parts = append(parts, fmt.Sprintf("%s than what %s (%s)", res.Cmp, f.runs(), res.Detail))
		}
		if rule == "" || res.Rule != order.RuleContent {
			rule = res.Rule
		}
	}
	s := what + "; " + strings.Join(slices.Compact(parts), "; ")
	if dg != nil {
		s += dc.allowedText()
	}
	return s, rule
}

// short renders an image for sentences: "1.27.3 (sha256:abcdef012345)".
func short(i image.Image) string {
	switch {
	case i.Tag != "" && i.Digest != "":
		return fmt.Sprintf("%s (%s)", i.Tag, image.Short(i.Digest))
	case i.Tag != "":
		return i.Tag
	case i.Digest != "":
		return image.Short(i.Digest)
	}
	return "image ID " + image.Short(i.ImageID)
}
