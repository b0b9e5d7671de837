package resolve

import (
	"cmp"
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

// Resolve decides every module of the catalogue. It never fails as a whole:
// each Decision carries its own refusal or error.
func Resolve(ctx context.Context, in Input) *Plan {
	mods := in.Catalogue.Modules
	in.heirs = newHeirs(in.Old, in.Catalogue, in.Record.Elsewhere)
	p := &Plan{Decisions: make([]*Decision, len(mods)), Hosts: hostsRead(in), retired: in.heirs.retired, elsewhere: in.heirs.elsewhere}
	todo := in.selected(p)
	eachModule(len(todo), in.atOnce(), func(i int) {
		// What only Outdated reads (the weighed tag lists) is let go: a
		// plan of 10,000 modules would otherwise keep every tag list until
		// it is written.
		d, _ := decide(ctx, in, look(ctx, in, mods[todo[i]], nil))
		// An entry that formats as the previous one did is that one (as
		// an unselected module's is): a warm run of 1,100 modules kept a
		// second copy of nearly every entry until the lock was written.
		if d.New() != nil && d.New() != d.Old && d.Old.Equal(d.New()) {
			d.outcome.entry = d.Old
		}
		p.Decisions[todo[i]] = d
	}, in.Progress)
	retire(in, p)
	return p
}

// retire says what becomes of the previous entries of modules no longer in
// the catalogue: taken over by a module decided by this run, they leave
// the lock; else they stay, as retired entries (or, when Record.Only named
// other modules, as the module entries they were).
func retire(in Input, p *Plan) {
	if in.Old == nil {
		return
	}
	taken := map[*lock.Module][]string{}
	for _, d := range p.Decisions {
		if d.New() == nil || d.Unselected() || d.Refusal() != nil || d.Err() != nil {
			continue
		}
		for _, e := range d.TakenOver {
			taken[e] = append(taken[e], d.Module.Name)
		}
	}
	for _, om := range in.Old.Modules {
		switch {
		case in.Catalogue.Module(om.Name) != nil:
		case len(taken[om]) > 0:
			p.TakenOver = append(p.TakenOver, TakenOver{Entry: om, By: taken[om]})
		case in.Record.Only != nil:
			p.Kept = append(p.Kept, om)
		default:
			p.Retired = append(p.Retired, Retired{Entry: om, Now: true})
		}
	}
	for _, r := range in.Old.Retired {
		if by := taken[r]; len(by) > 0 {
			p.TakenOver = append(p.TakenOver, TakenOver{Entry: r, Retired: true, By: by})
			continue
		}
		p.Retired = append(p.Retired, Retired{Entry: r})
	}
	slices.SortFunc(p.Retired, func(a, b Retired) int { return strings.Compare(a.Entry.Name, b.Entry.Name) })
	slices.SortFunc(p.TakenOver, func(a, b TakenOver) int { return strings.Compare(a.Entry.Name, b.Entry.Name) })
}

// decider carries one module's inputs through its decision: decide makes
// it whole, in one literal, once the hosts are read, and no step writes it
// after (onPlatform's memo, and the verifier's and the claims' accounts of
// what they asked, aside). It holds no context: every method that may ask
// a registry is given one. The steps return what they find.
type decider struct {
	in   Input
	m    *catalogue.Module
	opts order.Options
	reg  Registry
	old  *lock.Module
	obs  []observe.Observation
	// platformed memoizes onPlatform.
	platformed map[string]image.Image
	// ver is the module's verify policy (verify.go); nil without one.
	ver *verifier
	// claims accounts for tags that alone say a version (claims.go),
	// with the containers' tags vouched for by their hosts.
	claims *claims
	// heirs are the previous entries of other modules whose floors m
	// takes over (takeover.go); heirIdx the index they were found in.
	heirs   []*lock.Module
	heirIdx *heirs
}

// settled is a decider once the floors are read (settle): the steps that
// weigh an image against the floors take it. The floors are set once,
// when settle returns them, and never written after.
type settled struct {
	*decider
	floors []Floor
}

// choice is what a policy picked: an image and why, or the previous entry
// kept as it is.
type choice struct {
	img    image.Image
	source lock.Source
	reason string
	rule   order.Rule
	// keep: the previous lock entry stays (with this run's observations);
	// from, when set, is the entry of another module taken over that is
	// kept, under this module's name, instead of its own.
	keep bool
	from *lock.Module
}

// decide decides the module u sets up (look), and says what it weighed
// on the way.
func decide(ctx context.Context, in Input, u *setUp) (*Decision, weighed) {
	var w weighed
	m := u.m
	d := &Decision{Module: m, Old: u.old}
	opts, reg := u.opts, u.reg
	d.Observations, d.Missing = u.obs, u.missing
	if len(u.hostErrs) > 0 {
		d.outcome = failed(errors.Join(u.hostErrs...))
		return d, w // without every host, the floors are not known
	}
	if in.Mode == ModeFromHost && !runsOn(d.Observations, in.Record.Host) && !inheritsOn(in, m) {
		if unread := unknownHosts(in, m, d.Old); hasHost(m, in.Record.Host) && len(unread) > 0 {
			// Its runs_on names the host read, which runs nothing of it
			// now; but a host of it the lock never read may run anything:
			// "up to date" would be a claim nobody checked.
			d.outcome = refused(unreadHostsRefusal(in, m, unread))
			return d, w
		}
		// Not on this host: keep what was locked, or, with nothing locked
		// yet, leave the module to "pin resolve". What is kept is checked
		// against its content all the same: a hand-edited entry is not
		// written back as if it were pin's.
		d.Observations, d.Missing = nil, nil
		if d.Old != nil {
			if _, _, err := lockedImage(ctx, reg, m, d.Old, opts, firstPlatform(d.Observations, m)); err != nil {
				d.outcome = failed(err)
				return d, w
			}
		}
		if d.Old != nil {
			e := d.Old
			if hasHost(m, in.Record.Host) && !slices.Contains(d.Old.Hosts, in.Record.Host) {
				// Read, and running nothing of the module: recorded, so
				// that lock --from-host on another host knows it.
				k := *d.Old
				k.Hosts = entryHosts(m, d.Old, in)
				e = &k
			}
			d.outcome = kept(e, d.Old)
		}
		d.Repository = repositoryKept(m, d.New())
		return d, w
	}
	if in.Mode == ModeFromHost {
		// Reading one host keeps the floors the lock recorded of the
		// others; a host of the module it never recorded has floors
		// nobody knows.
		if unread := unknownHosts(in, m, d.Old); len(unread) > 0 {
			d.outcome = refused(unreadHostsRefusal(in, m, unread))
			return d, w
		}
	}
	if u.enrichErr != nil {
		d.outcome = failed(u.enrichErr)
		return d, w
	}
	idx := u.idx
	d.TakenOver = u.heirs
	d.Skew = skew(d.Observations, opts)
	ver, err := verifierFor(in, m, d.Old)
	if err != nil {
		d.outcome = failed(err)
		return d, w
	}
	if ver != nil {
		d.Verification = ver.found
	}
	dc := &decider{in: in, m: m, opts: opts, reg: reg, old: d.Old, obs: d.Observations, ver: ver, claims: u.tags, heirs: d.TakenOver, heirIdx: idx}

	// Each policy first fetches what it would lock (the pin, the
	// candidate), then reads the floors (settle), then judges: a previous
	// entry that names the same image is then read from the cache, not
	// asked again.
	var s *settled
	var c choice
	var dg *Refusal
	switch {
	case holder(d.Old, d.TakenOver) != nil:
		// A manual pick holds the entry, whatever the policy.
		s, c, dg, err = dc.held(ctx, holder(d.Old, d.TakenOver))
	case in.Mode == ModeFromHost && m.Policy == catalogue.TrackUpstream:
		// Recording a host: what runs against the previous entry, no
		// upstream tag asked.
		if s, err = dc.settle(ctx); err == nil {
			c, dg, err = s.keepOrRunning(ctx)
		}
	case m.Policy == catalogue.Exact:
		s, c, dg, err = dc.exact(ctx, &w)
	case m.Policy == catalogue.AtLeastRunning:
		s, c, dg, err = dc.atLeastRunning(ctx, &w)
	case m.Policy == catalogue.TrackUpstream:
		s, c, dg, err = dc.trackUpstream(ctx, &w)
		d.Skipped = w.skipped
	default:
		err = &unknownPolicyError{module: m.Name, policy: string(m.Policy)}
	}
	if s != nil {
		d.Floors = s.floors
	}
	if lu, ok := err.(*lockUnreadError); ok {
		w.lockUnread, err = true, lu.err
	}
	var r *Refusal
	switch {
	case errors.As(err, &r):
		d.outcome = refused(r)
	case err != nil:
		d.outcome = failed(err)
	default:
		e := s.entry(c, dg)
		var from *lock.Module
		if c.keep {
			from = cmp.Or(c.from, d.Old)
		}
		switch {
		case dg != nil:
			d.outcome = downgraded(e, from, dg)
		case from != nil:
			d.outcome = kept(e, from)
		default:
			d.outcome = locked(e)
		}
		d.Repository = repositoryKept(m, e)
		if err := s.stamp(ctx, e); errors.As(err, &r) {
			d.outcome, d.Repository = refused(r), nil
		} else if err != nil {
			d.outcome = failed(err)
		}
	}
	return d, w
}

// lockUnreadError is settle's failure to read the previous entry's
// content; decide unwraps it into Decision.Err and weighed.lockUnread.
type lockUnreadError struct{ err error }

func (e *lockUnreadError) Error() string { return e.err.Error() }

type unknownPolicyError struct{ module, policy string }

func (e *unknownPolicyError) Error() string {
	return "module " + e.module + ": unknown policy \"" + e.policy + "\""
}

func runsOn(obs []observe.Observation, host string) bool {
	return slices.ContainsFunc(obs, func(o observe.Observation) bool { return o.Host == host })
}

// keepOrRunning weighs the previous entry against what runs, for a
// track-upstream module recorded from a host: the entry stays where it is
// at or above every floor (or the catalogue states the downgrade), else
// the newest floor is locked.
func (dc *settled) keepOrRunning(ctx context.Context) (choice, *Refusal, error) {
	for _, f := range dc.floors {
		if f.Kind != FloorLocked {
			continue
		}
		if f.unread() {
			// Lines alone cannot be kept: the newest container, if it
			// is at or above them.
			break
		}
		img := f.Image
		c, dg, err := dc.pick(ctx, &img, false, "the locked image", lock.SourceUpstream)
		if err == nil && !c.keep && c.img.Digest == img.Digest {
			c = choice{keep: true, reason: c.reason, rule: c.rule}
		}
		return c, dg, err
	}
	return dc.pick(ctx, nil, false, "", lock.SourceUpstream)
}

// settle reads the floors (see settleOn) with the run's record: what the
// previous entry recorded on hosts this run did not read is a floor too.
func (dc *decider) settle(ctx context.Context) (*settled, error) {
	return dc.settleOn(ctx, dc.in.Record)
}

// settleOn reads the floors: the containers the hosts report, the previous
// entry by its content (a *lockUnreadError where it cannot, around a
// *LockMismatchError where its lines disagree), what it recorded on the
// hosts rec says were not read, and the entries m takes over. The floors
// read before a failure come back with it (the Decision shows them).
func (dc *decider) settleOn(ctx context.Context, rec Record) (*settled, error) {
	var oldImg *image.Image
	read := contentRead
	if dc.old != nil {
		img, state, err := lockedImage(ctx, dc.reg, dc.m, dc.old, dc.opts, dc.platform())
		if err != nil {
			return nil, &lockUnreadError{err}
		}
		oldImg, read = &img, state
	}
	fl := floors(dc.obs, dc.old, oldImg, rec)
	for i := range fl {
		if fl[i].Kind == FloorLocked {
			fl[i].content = read
		}
	}
	s := &settled{decider: dc, floors: fl}
	if len(dc.heirs) > 0 {
		// The entries of other modules (or retired ones) whose floors m
		// takes over bound the image as m's own entry does.
		inherited, err := inheritedFloors(ctx, dc.reg, dc.m, dc.heirs, dc.heirIdx, dc.opts, dc.platform())
		if err != nil {
			return s, err
		}
		s.floors = append(s.floors, inherited...)
	}
	dc.claims.holdUp(s.floors)
	return s, describeRecorded(ctx, dc.reg, dc.m, s.floors)
}

// describeRecorded reads the content of what the previous entry recorded
// on hosts not read (floors of kind FloorRecorded, in place), where a
// registry can give it; the recorded lines are what is left otherwise.
func describeRecorded(ctx context.Context, reg Registry, m *catalogue.Module, floors []Floor) error {
	for i := range floors {
		f := &floors[i]
		if f.Kind != FloorRecorded || f.Image.Digest == "" {
			continue
		}
		img, state, err := describe(ctx, reg, m, f.Image.Digest, m.Platform())
		if err != nil {
			return err
		}
		switch {
		case state == contentRead && len(img.Platforms) == 0:
			img.Tag, img.ImageID = f.Image.Tag, f.Image.ImageID
			f.Image, f.Observation.Image = img, img
		case state == contentRead:
			// An index is one platform's build per host, and which one
			// the host ran the lock does not say: its recorded date
			// stays, rather than another platform's. Its version is the
			// content's, never the recorded line, which may be a host's
			// tag that was a claim (a "docker tag" on the host).
			img.Tag, img.ImageID, img.Created = f.Image.Tag, f.Image.ImageID, f.Image.Created
			f.Image, f.Observation.Image = img, img
		}
	}
	return nil
}

// skew reports whether the containers a module takes over that run now
// run different images.
func skew(obs []observe.Observation, opts order.Options) bool {
	var first *image.Image
	for _, o := range obs {
		if !o.Running() {
			continue
		}
		if first == nil {
			first = &o.Image
			continue
		}
		if order.Compare(*first, o.Image, opts).Cmp != order.Equal {
			return true
		}
	}
	return false
}

// repositoryKept says, of a new entry that names another repository than
// the module's image (the catalogue's image moved, and the previous
// entry won and was kept as it was locked), what the lock keeps, why, and
// what to write to lock the same image from the module's repository.
func repositoryKept(m *catalogue.Module, e *lock.Module) *RepositoryKept {
	if e == nil || e.Image == m.Image {
		return nil
	}
	ref := e.Image + "@" + e.Digest
	tagged := e.Digest
	if e.Tag != "" {
		tagged = e.Tag + "@" + e.Digest
	}
	how := fmt.Sprintf("to lock the same image from %s, write pin = %q in module %q (%s): the pin, read there, is not older than the previous entry, and wins", m.Image, tagged, m.Name, pinWhere(m))
	if m.Policy == catalogue.TrackUpstream {
		tag := cmp.Or(m.Tag, e.Tag, "<a tag the module follows>")
		how = fmt.Sprintf("to lock the same image from %s, copy it there (crane copy %s %s:%s): its newest upstream tag then names it", m.Image, ref, m.Image, tag)
	}
	return &RepositoryKept{Catalogue: m.Image, Locked: e.Image,
		Why: fmt.Sprintf("module %q's image is now %s, and the lock keeps %s: the previous entry won (the lock never goes back) and is kept as it was locked, repository included; %s",
			m.Name, m.Image, ref, how)}
}
