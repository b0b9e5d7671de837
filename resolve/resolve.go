package resolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// Registry is what resolving needs of a registry (or a mirror of one).
type Registry interface {
	// Tags lists the repository's tags.
	Tags(ctx context.Context, repo string) ([]string, error)
	// Image describes repo:ref, ref being a tag or a "sha256:" digest, with
	// an index resolved to platform.
	Image(ctx context.Context, repo, ref, platform string) (image.Image, error)
}

// Input is everything one resolution reads.
type Input struct {
	Catalogue *catalogue.Catalogue
	Old       *lock.Lock
	Observed  observe.Observed
	// Registry returns the source to ask for a repository, or nil when none
	// may be asked (offline, no mirror).
	Registry func(repo string) Registry
	// Now bounds plausible build dates.
	Now time.Time
	// Concurrency bounds modules resolved at once (default 16).
	Concurrency int
	// FromHost, when set, records what that host runs ("pin lock
	// --from-host"): modules that take over nothing on it keep their old
	// entry, and track-upstream weighs the old lock entry, not upstream
	// tags, against what runs.
	FromHost string
}

// Resolve decides every module of the catalogue. It never fails as a whole:
// each Decision carries its own refusal or error.
func Resolve(ctx context.Context, in Input) *Plan {
	mods := in.Catalogue.Modules
	p := &Plan{Decisions: make([]*Decision, len(mods))}
	n := in.Concurrency
	if n <= 0 {
		n = 16
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, m := range mods {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p.Decisions[i] = decide(ctx, in, m)
		})
	}
	wg.Wait()
	// Modules locked before but gone from the catalogue are removed.
	if in.Old != nil {
		for _, om := range in.Old.Modules {
			if in.Catalogue.Module(om.Name) == nil {
				p.Removed = append(p.Removed, om)
			}
		}
	}
	return p
}

// resolver carries one module's inputs through its decision.
type resolver struct {
	ctx  context.Context
	in   Input
	m    *catalogue.Module
	opts order.Options
	reg  Registry
	d    *Decision
}

func decide(ctx context.Context, in Input, m *catalogue.Module) *Decision {
	d := &Decision{Module: m, Old: in.Old.Module(m.Name)}
	r := &resolver{ctx: ctx, in: in, m: m, d: d,
		opts: orderOptions(m, in.Now)}
	if in.Registry != nil {
		r.reg = in.Registry(m.Image)
	}
	d.Observations, d.Missing = observe.Observations(m, in.Observed)
	var failed []string
	for _, ro := range m.RunsOn {
		if err, ok := in.Observed.Errors[ro.Host]; ok && !slices.Contains(failed, ro.Host) {
			failed = append(failed, ro.Host)
			d.Err = errors.Join(d.Err, &observe.SourceError{Source: "host " + ro.Host, Err: err})
		}
	}
	if d.Err != nil {
		return d // without every host, the floor is not known
	}
	if in.FromHost != "" && !runsOn(d.Observations, in.FromHost) {
		// Not on this host: keep what was locked, or, with nothing locked
		// yet, leave the module to "pin resolve".
		d.New = d.Old
		d.Observations, d.Missing = nil, nil
		return d
	}
	if err := observe.Enrich(ctx, r.reg, m, d.Observations); err != nil {
		d.Err = err
		return d
	}
	floors := d.Floors()
	d.Skew = skew(floors, r.opts)
	if in.FromHost != "" && m.Policy == catalogue.TrackUpstream {
		r.keepRunning(floors)
		return d
	}
	switch m.Policy {
	case catalogue.Exact:
		r.exact(floors)
	case catalogue.AtLeastRunning:
		r.atLeastRunning(floors)
	case catalogue.TrackUpstream:
		r.trackUpstream(floors)
	default:
		d.Err = fmt.Errorf("module %s: unknown policy %q", m.Name, m.Policy)
	}
	return d
}

func runsOn(obs []observe.Observation, host string) bool {
	for _, o := range obs {
		if o.Host == host {
			return true
		}
	}
	return false
}

// keepRunning weighs the old lock entry against what runs, for a
// track-upstream module recorded from a host: no upstream tag is asked.
func (r *resolver) keepRunning(floors []observe.Observation) {
	var primary *image.Image
	if old := r.d.Old; old != nil {
		img := LockedImage(old)
		primary = &img
	}
	r.pick(primary, "the locked image", lock.SourceUpstream, floors)
}

// LockedImage is what a lock entry says of its image, for ordering.
func LockedImage(m *lock.Module) image.Image {
	img := image.Image{Repository: m.Image, Tag: m.Tag, Digest: m.Digest, ConfigDigest: m.Config, Platforms: m.Platforms, Created: m.Created}
	if m.Version != "" {
		img.Labels = map[string]string{image.LabelVersion: m.Version}
	}
	return img
}

// platform is the platform to resolve an index to: that of the running
// container when known, else the module's.
func (r *resolver) platform(floors []observe.Observation) string {
	for _, o := range floors {
		if o.Image.Platform != "" {
			return o.Image.Platform
		}
	}
	return r.m.Platform()
}

// fetch asks the registry for repo:ref, recording failures on the decision.
func (r *resolver) fetch(ref, platform string) (image.Image, error) {
	if r.reg == nil {
		return image.Image{}, &observe.SourceError{Source: "registry of " + r.m.Image, Err: errors.New("no registry may be asked (offline without a mirror)")}
	}
	img, err := r.reg.Image(r.ctx, r.m.Image, ref, platform)
	if err != nil {
		return image.Image{}, &observe.SourceError{Source: "registry of " + r.m.Image, Err: err}
	}
	return img, nil
}

// pinImage describes the catalogue's pin: from the registry when one may be
// asked, else from what the pin (and an old lock entry of the same digest)
// says.
func (r *resolver) pinImage(floors []observe.Observation) (image.Image, bool) {
	pin := r.m.Pin
	ref := pin.Digest
	if ref == "" {
		ref = pin.Tag
	}
	// Offline, with the pin never fetched: its text and the old lock entry
	// of the same digest are all there is.
	fromText := func() (image.Image, bool) {
		img := image.Image{Repository: r.m.Image, Tag: pin.Tag, Digest: pin.Digest}
		if old := r.d.Old; old != nil && old.Digest == pin.Digest {
			img.ConfigDigest, img.Created, img.Platforms = old.Config, old.Created, old.Platforms
		}
		return img, true
	}
	if r.reg == nil && pin.Digest != "" {
		return fromText()
	}
	img, err := r.fetch(ref, r.platform(floors))
	if errors.Is(err, image.ErrUnavailable) && pin.Digest != "" {
		return fromText()
	}
	if err != nil {
		r.d.Err = fmt.Errorf("resolving the pin %q: %w", pin.Text, err)
		return image.Image{}, false
	}
	if pin.Tag != "" {
		img.Tag = pin.Tag
	}
	return img, true
}

func (r *resolver) exact(floors []observe.Observation) {
	pin, ok := r.pinImage(floors)
	if !ok {
		return
	}
	if !r.checkFloors(pin, "the exact pin", floors) {
		return
	}
	r.lockImage(pin, lock.SourcePin, r.describeWin("the exact pin "+short(pin), pin, floors))
}

// checkFloors holds a chosen image against every floor. Older or unknown is
// a refusal unless the catalogue states the downgrade.
func (r *resolver) checkFloors(chosen image.Image, what string, floors []observe.Observation) bool {
	for _, o := range floors {
		res := order.Compare(chosen, o.Image, r.opts)
		if res.Cmp == order.Newer || res.Cmp == order.Equal {
			continue
		}
		if r.downgradeAllowed() {
			r.d.Downgrade = &Refusal{Module: r.m.Name, Kind: kindOf(res), Chosen: chosen, What: what, Observation: o, Order: res, opts: r.opts}
			continue
		}
		r.d.Refusal = &Refusal{Module: r.m.Name, Kind: kindOf(res), Chosen: chosen, What: what, Observation: o, Order: res, opts: r.opts, fix: r.fix(chosen, o, res.Cmp == order.Unknown)}
		return false
	}
	return true
}

func kindOf(res order.Result) string {
	if res.Cmp == order.Unknown {
		return KindUnknown
	}
	return KindDowngrade
}

func (r *resolver) downgradeAllowed() bool {
	return r.m.AllowDowngrade != "" && (!r.m.OneWay || r.m.Restore != "")
}

// fix says what the author can write to decide.
func (r *resolver) fix(chosen image.Image, o observe.Observation, unknown bool) string {
	loc := ""
	if rng, ok := r.m.AttrRanges["pin"]; ok {
		loc = fmt.Sprintf(" (%s)", rng)
	} else {
		loc = fmt.Sprintf(" (%s)", r.m.DeclRange)
	}
	var opts []string
	if o.Image.Digest != "" {
		p := o.Image.Digest
		if o.Image.Tag != "" {
			p = o.Image.Tag + "@" + p
		}
		opts = append(opts, fmt.Sprintf("to run what %s runs, write pin = %q", o.Where(), p))
		if r.m.Policy == catalogue.Exact {
			opts = append(opts, `or policy = "at-least-running"`)
		}
	}
	dg := `allow_downgrade = "<why>"`
	if r.m.OneWay {
		dg += ` and restore = "<the backup it restores from>"`
	}
	opts = append(opts, fmt.Sprintf("to lock %s anyway, write %s", short(chosen), dg))
	if unknown && r.m.Versioning.Kind == "" && o.Image.Tag != "" {
		opts = append(opts, `if the tags are not semver, set versioning = "calver", "numeric" or "regex:…"`)
	}
	return fmt.Sprintf("in module %q%s: %s", r.m.Name, loc, strings.Join(opts, "; "))
}

func (r *resolver) atLeastRunning(floors []observe.Observation) {
	var pin *image.Image
	if r.m.Pin.Text != "" {
		// Fetch only what ordering needs: when what runs is newer than the
		// pin by what the pin's text says (its tag), the pin is not fetched.
		cheap := image.Image{Repository: r.m.Image, Tag: r.m.Pin.Tag, Digest: r.m.Pin.Digest}
		for _, o := range floors {
			res := order.Compare(o.Image, cheap, r.opts)
			if res.Cmp == order.Newer && allAtLeast(o.Image, floors, r.opts) {
				r.lockRunning(o, &cheap, "the pin", res)
				return
			}
		}
		p, ok := r.pinImage(floors)
		if !ok {
			return
		}
		pin = &p
	}
	r.pick(pin, "the pin", lock.SourcePin, floors)
}

// pick locks the newest of primary (the pin or the upstream candidate) and
// the running images. With no clear newest, it refuses, or locks primary
// where the catalogue states the downgrade.
func (r *resolver) pick(primary *image.Image, what, source string, floors []observe.Observation) {
	if primary != nil && allAtLeast(*primary, floors, r.opts) {
		r.lockImage(*primary, source, r.describeWin(what+" "+short(*primary), *primary, floors))
		return
	}
	for _, o := range floors {
		if !allAtLeast(o.Image, floors, r.opts) {
			continue
		}
		var res order.Result
		if primary != nil {
			res = order.Compare(o.Image, *primary, r.opts)
			if res.Cmp != order.Newer && res.Cmp != order.Equal {
				continue
			}
		}
		r.lockRunning(o, primary, what, res)
		return
	}
	if primary == nil && len(floors) == 0 {
		r.d.Refusal = &Refusal{Module: r.m.Name, Kind: KindNothing, opts: r.opts,
			fix: fmt.Sprintf("there is nothing to lock: no pin, no upstream candidate and no running container (%s). Add pin = \"<tag>@sha256:<digest>\" to module %q", strings.Join(r.d.Missing, ", "), r.m.Name)}
		return
	}
	if primary == nil {
		// Running images that cannot be ordered among themselves.
		a, b := floors[0], floors[1]
		res := order.Compare(a.Image, b.Image, r.opts)
		r.d.Refusal = &Refusal{Module: r.m.Name, Kind: KindUnknown, Chosen: a.Image, What: "what " + a.Where() + " runs", Observation: b, Order: res, opts: r.opts, fix: r.fix(a.Image, b, res.Cmp == order.Unknown)}
		return
	}
	if r.checkFloors(*primary, what, floors) {
		// Only reached when the downgrade is allowed.
		r.lockImage(*primary, source, r.describeWin(what+" "+short(*primary), *primary, floors))
	}
}

func allAtLeast(img image.Image, floors []observe.Observation, opts order.Options) bool {
	for _, o := range floors {
		c := order.Compare(img, o.Image, opts).Cmp
		if c != order.Newer && c != order.Equal {
			return false
		}
	}
	return true
}

// lockRunning locks the image a host runs, which is newer than primary.
func (r *resolver) lockRunning(o observe.Observation, primary *image.Image, what string, res order.Result) {
	if o.Image.Digest == "" {
		r.d.Refusal = &Refusal{Module: r.m.Name, Kind: KindNoDigest, Chosen: o.Image, What: "what " + o.Where() + " runs", Observation: o, Order: res, opts: r.opts,
			fix: fmt.Sprintf("%s runs an image the host has no registry digest for (loaded or built locally): push it to %s and pin its digest, or write allow_downgrade = \"<why>\" in module %q to lock %s", o.Where(), r.m.Image, r.m.Name, what)}
		return
	}
	img := o.Image
	if r.reg != nil {
		// observe.Enrich with what the registry knows (index platforms, config); an
		// image the registry does not hold is still locked as the host knows it.
		if full, err := r.reg.Image(r.ctx, r.m.Image, img.Digest, r.platform([]observe.Observation{o})); err == nil {
			full.Tag = img.Tag
			img = full
		} else if !errors.Is(err, image.ErrNotFound) && !errors.Is(err, image.ErrUnavailable) {
			r.d.Err = fmt.Errorf("describing the running image %s: %w", img.Digest, &observe.SourceError{Source: "registry of " + r.m.Image, Err: err})
			return
		}
		img.ImageID = ""
	}
	reason := fmt.Sprintf("%s runs %s", o.Where(), short(o.Image))
	if primary == nil {
		reason += "; no pin to compare with"
	} else if res.Cmp == order.Equal {
		reason += fmt.Sprintf(", the same image as %s", what)
	} else {
		reason += fmt.Sprintf(", newer than %s %s (%s): locking %s would be a downgrade", what, short(*primary), res.Detail, what)
	}
	if others := len(r.d.Floors()) - 1; others > 0 {
		reason += fmt.Sprintf("; %d other running container(s) are equal or older", others)
	}
	r.d.Rule = string(res.Rule)
	r.lockImage(img, lock.SourceRunning, reason)
}

// describeWin explains why the primary image won against the floors.
func (r *resolver) describeWin(what string, img image.Image, floors []observe.Observation) string {
	if len(floors) == 0 {
		return what + "; no host runs this module"
	}
	var parts []string
	for _, o := range floors {
		res := order.Compare(img, o.Image, r.opts)
		switch res.Cmp {
		case order.Equal:
			parts = append(parts, fmt.Sprintf("%s runs the same image", o.Where()))
		case order.Newer:
			parts = append(parts, fmt.Sprintf("newer than what %s runs (%s): an upgrade", o.Where(), res.Detail))
		default:
			parts = append(parts, fmt.Sprintf("%s than what %s runs (%s)", res.Cmp, o.Where(), res.Detail))
		}
		if r.d.Rule == "" || res.Rule != order.RuleContent {
			r.d.Rule = string(res.Rule)
		}
	}
	s := what + "; " + strings.Join(parts, "; ")
	if r.d.Downgrade != nil {
		s += "; downgrade allowed: " + r.m.AllowDowngrade
		if r.m.Restore != "" {
			s += "; restore from: " + r.m.Restore
		}
	}
	return s
}

// lockImage writes the decision's new lock entry.
func (r *resolver) lockImage(img image.Image, source, reason string) {
	e := &lock.Module{
		Name:      r.m.Name,
		Policy:    string(r.m.Policy),
		Image:     r.m.Image,
		Tag:       img.Tag,
		Digest:    img.Digest,
		Config:    img.ConfigDigest,
		Platforms: img.Platforms,
		Created:   r.opts.Created(img),
		Source:    source,
		Rule:      r.d.Rule,
		Reason:    reason,
	}
	if v, fromTag, ok := r.opts.Version(img); ok {
		e.Version = v.String()
		if !fromTag {
			e.Version = v.Original
		}
	}
	if r.d.Downgrade != nil {
		e.AllowDowngrade = r.m.AllowDowngrade
		e.Restore = r.m.Restore
	}
	for _, o := range r.d.Floors() {
		ob := lock.Observation{Host: o.Host, Container: o.Container, Tag: o.Image.Tag, Digest: o.Image.Digest, ImageID: o.Image.ImageID, Created: r.opts.Created(o.Image)}
		if v, _, ok := r.opts.Version(o.Image); ok {
			ob.Version = v.String()
		}
		e.Observed = append(e.Observed, ob)
	}
	r.d.New = e
}

// skew reports whether running containers of one module run different
// images.
func skew(floors []observe.Observation, opts order.Options) bool {
	for i := 1; i < len(floors); i++ {
		if order.Compare(floors[0].Image, floors[i].Image, opts).Cmp != order.Equal {
			return true
		}
	}
	return false
}

// short renders an image for sentences: "1.27.3 (sha256:abcdef012345)".
func short(i image.Image) string {
	var s string
	switch {
	case i.Tag != "" && i.Digest != "":
		s = fmt.Sprintf("%s (%s)", i.Tag, image.Short(i.Digest))
	case i.Tag != "":
		s = i.Tag
	case i.Digest != "":
		s = image.Short(i.Digest)
	default:
		s = "image ID " + image.Short(i.ImageID)
	}
	return s
}
