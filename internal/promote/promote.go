package promote

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Env is an environment as promotion reads it: the catalogue's
// environment block.
type Env struct {
	Name  string
	Hosts []string
	// From is the environment builds come here from; "" for none.
	From string
	// Soak is how long a build must have run in the environment it is
	// promoted from before it may come here; zero for none.
	Soak time.Duration
	// Require is what a build must show on every host of the environment
	// it is promoted from before it comes here (catalogue.Requirements'
	// words); nil: all of them.
	Require []string
}

func (e Env) has(host string) bool { return slices.Contains(e.Hosts, host) }

// Floors holds a candidate against environment TO's floors: every
// container TO's hosts report for the module and TO's lock entry, as
// package resolve holds a locked image against them (ResolveFloors).
type Floors interface {
	Judge(ctx context.Context, m *catalogue.Module, img image.Image) (Verdict, error)
}

// Verdict is what Floors says of a candidate.
type Verdict struct {
	// Image is the candidate as its content says (config, platforms,
	// labels); Version and Created as a lock entry records them.
	Image   image.Image
	Version string
	Created time.Time
	Rule    lock.Rule
	// Refusal, when not empty, says why the candidate is older than a
	// floor of TO or cannot be ordered against one, and what to write.
	Refusal string
	// Downgrade and Restore are the catalogue's words that accepted a
	// downgrade (allow_downgrade), when one was.
	Downgrade, Restore string
}

// Verifier checks a candidate against its module's signature policy. A
// *verify.Failure is a verdict against the image (the module is
// refused); any other error means it could not be checked (the run
// fails). A module without a verify policy passes with no Signature.
type Verifier interface {
	Verify(ctx context.Context, m *catalogue.Module, img image.Image) (Signature, error)
}

// Signature is how a candidate verified, as the lock records it.
type Signature struct {
	Method            lock.Method
	Signer, Signature string
}

// Pick is a manual pick: the image to promote instead of what FROM
// runs, and the reason recorded as the entry's hold.
type Pick struct {
	// Ref is "sha256:…" or "tag@sha256:…": a digest (a tag alone is a
	// claim).
	Ref    string
	Reason string
}

// Input is everything one promotion reads.
type Input struct {
	Catalogue *catalogue.Catalogue
	From, To  Env
	// Observed holds the hosts of both environments.
	Observed observe.Observed
	// Record says which hosts were not read, and why (skipped under
	// skip_unreachable, unreachable): a FROM host not read is not a host
	// that runs nothing.
	Record resolve.Record
	// Old is TO's lock.
	Old *lock.Lock
	// Modules names the modules to promote; none: every module of the
	// catalogue that runs in TO (its runs_on names a host of TO).
	Modules []string
	// Pick, when set, promotes its image for the one module named.
	Pick     *Pick
	Now      time.Time
	Floors   Floors
	Verifier Verifier
	// Held, when not nil, is the entry of TO's lock whose hold binds a
	// module (resolve.HeldBy: its own, or one it takes over, since a hold
	// follows its floor through a rename); nil: the module's own entry.
	Held func(m *catalogue.Module) *lock.Module
}

// Entry is one module of the unit promoted: its entry in TO before (nil
// when none) and after.
type Entry struct {
	Module   string
	Old, New *lock.Module
}

// Changed reports whether the promotion changes the module's entry.
func (e Entry) Changed() bool { return !e.Old.Equal(e.New) }

// Skipped is a module an automatic promotion leaves as it is, and why:
// held by a manual pick, or not running in FROM.
type Skipped struct {
	Module string
	Kind   Kind // KindHeld or KindNothing
	Why    string
}

// Result is what a promotion decided. With a refusal, nothing is
// promoted: Entries is empty and Lock returns the old lock.
type Result struct {
	// Release is the unit's hash: SHA-256 over the sorted "module
	// digest\n" lines of the modules promoted together.
	Release  string
	Entries  []Entry
	Skipped  []Skipped
	Refusals []*Refusal
	old      *lock.Lock
	lock     *lock.Lock
}

// Refused reports whether a module was refused (then nothing changes).
func (r *Result) Refused() bool { return len(r.Refusals) > 0 }

// Lock is TO's lock after the promotion: the old one, as it was, when a
// module was refused or nothing changed.
func (r *Result) Lock() *lock.Lock {
	if r.lock == nil {
		return r.old
	}
	return r.lock
}

// ErrInput wraps what Promote cannot decide because the request is wrong
// (a module the catalogue or TO does not hold, a pick without a digest):
// the caller's input to fix, not a source that failed.
var ErrInput = errors.New("cannot promote")

// Promote decides a promotion from in.From to in.To. An error means it
// could not decide (a module not in the catalogue, a pick that names no
// digest, a registry that failed): nothing is promoted.
func Promote(ctx context.Context, in Input) (*Result, error) {
	mods, named, err := selected(in)
	if err != nil {
		return nil, err
	}
	res := &Result{old: in.Old}
	var entries []Entry
	for _, m := range mods {
		e, skip, r, err := promoteOne(ctx, in, m, named)
		switch {
		case err != nil:
			return nil, fmt.Errorf("module %q: %w", m.Name, err)
		case r != nil:
			res.Refusals = append(res.Refusals, r)
		case skip != nil:
			res.Skipped = append(res.Skipped, *skip)
		default:
			entries = append(entries, e)
		}
	}
	if res.Refused() || len(entries) == 0 {
		return res, nil
	}
	res.Release = Release(entries)
	for i := range entries {
		e := &entries[i]
		e.New.Promoted.Release = res.Release
		if o := e.Old; o != nil && o.Digest == e.New.Digest && o.Hold == e.New.Hold && o.Promoted != nil && o.Promoted.Release == res.Release && o.Promoted.From == in.From.Name {
			// The same build of the same release, promoted again:
			// the entry stays as it was (its start and observations
			// are those of the promotion that wrote it).
			e.New = o
		}
	}
	res.Entries = entries
	res.lock = withEntries(in.Old, in.To, entries)
	return res, nil
}

// selected returns the modules to promote, in catalogue order, and
// whether they were named.
func selected(in Input) ([]*catalogue.Module, bool, error) {
	var mods []*catalogue.Module
	if len(in.Modules) > 0 {
		for _, n := range in.Modules {
			m := in.Catalogue.Module(n)
			if m == nil {
				return nil, true, fmt.Errorf("%w: module %q is not in the catalogue", ErrInput, n)
			}
			if !runsIn(m, in.To) {
				// Its entry would be held against no host of TO, and the
				// next resolve would retire it: nothing of it runs there.
				return nil, true, fmt.Errorf("%w: module %q does not run in environment %s (its runs_on names none of %s's hosts): there is nothing of it to promote to", ErrInput, n, in.To.Name, in.To.Name)
			}
			if !slices.Contains(mods, m) {
				mods = append(mods, m)
			}
		}
	} else {
		for _, m := range in.Catalogue.Modules {
			if runsIn(m, in.To) {
				mods = append(mods, m)
			}
		}
	}
	if in.Pick != nil && len(in.Modules) != 1 {
		return nil, false, fmt.Errorf("%w: a pick names one module's image: name exactly one module", ErrInput)
	}
	return mods, len(in.Modules) > 0, nil
}

// runsIn reports whether m's runs_on names a host of env.
func runsIn(m *catalogue.Module, env Env) bool {
	return slices.ContainsFunc(m.RunsOn, func(r catalogue.RunsOn) bool { return env.has(r.Host) })
}

// promoteOne decides one module: its entry, a reason to skip it (an
// automatic promotion only), or a refusal.
func promoteOne(ctx context.Context, in Input, m *catalogue.Module, named bool) (Entry, *Skipped, *Refusal, error) {
	old := in.Old.Module(m.Name)
	entry := Entry{Module: m.Name, Old: old}
	held := old
	if in.Held != nil {
		held = in.Held(m)
	}
	if held != nil && held.Hold != "" && in.Pick == nil {
		why := fmt.Sprintf("%s's entry is held at %s by a manual pick (%q)", in.To.Name, held.Ref(), held.Hold)
		if held != old {
			why = fmt.Sprintf("%s's entry for module %q, whose floor %s takes over, is held at %s by a manual pick (%q)", in.To.Name, held.Name, m.Name, held.Ref(), held.Hold)
		}
		if !named {
			return entry, &Skipped{Module: m.Name, Kind: KindHeld, Why: why}, nil, nil
		}
		return entry, nil, &Refusal{Module: m.Name, Kind: KindHeld, Why: why,
			Fix: fmt.Sprintf("lift the hold first (pin promote --lift %s %s %s), or pick a build by hand (--pick)", in.From.Name, in.To.Name, m.Name)}, nil
	}
	for _, h := range hostsOf(m, in.From) {
		if nr, ok := in.Record.Unread(h); ok {
			return entry, nil, &Refusal{Module: m.Name, Kind: KindHostUnread, Why: nr.Sentence(h + " of " + in.From.Name),
				Fix: "promote once every host of " + in.From.Name + " that runs it can be read: what it runs is part of what is promoted"}, nil
		}
	}
	obs, _ := observe.Observations(m, in.Observed)
	var running []observe.Observation
	for _, o := range obs {
		if in.From.has(o.Host) && o.Running() {
			running = append(running, o)
		}
	}
	health, refusal := healthGate(in, m, obs)
	if refusal != nil && in.Pick == nil {
		return entry, nil, refusal, nil
	}
	var cand image.Image
	if in.Pick != nil {
		p, msg := catalogue.ParsePin(in.Pick.Ref)
		if msg != "" || p.Digest == "" {
			return entry, nil, nil, fmt.Errorf("%w: --pick %q: name a digest, as sha256:<digest> or <tag>@sha256:<digest> (a tag alone is a claim)", ErrInput, in.Pick.Ref)
		}
		cand = image.Image{Repository: m.Image, Tag: p.Tag, Digest: p.Digest}
		running = slices.DeleteFunc(running, func(o observe.Observation) bool { return o.Image.Digest != p.Digest })
	} else {
		c, skip, r := fromBuild(in, m, running, named)
		if skip != nil || r != nil {
			return entry, skip, r, nil
		}
		cand = c
	}
	if in.Verifier == nil || in.Floors == nil {
		return entry, nil, nil, errors.New("a promotion needs a verifier and the floor rule (Input.Verifier, Input.Floors)")
	}
	sig, err := in.Verifier.Verify(ctx, m, cand)
	var f *verify.Failure
	if errors.As(err, &f) {
		return entry, nil, &Refusal{Module: m.Name, Kind: KindUnverified, Why: fmt.Sprintf("%s fails the module's signature policy: %v", label(cand), f),
			Fix: "sign the build (cosign sign) with a key or identity the module's verify block trusts, deploy a signed build in " + in.From.Name + ", and promote it"}, nil
	}
	if err != nil {
		return entry, nil, nil, fmt.Errorf("verifying %s: %w", label(cand), err)
	}
	v, err := in.Floors.Judge(ctx, m, cand)
	if err != nil {
		return entry, nil, nil, err
	}
	if v.Refusal != "" {
		return entry, nil, &Refusal{Module: m.Name, Kind: KindFloor, Why: fmt.Sprintf("%s would be a downgrade in %s, or cannot be ordered against what it runs or locks: %s", label(cand), in.To.Name, v.Refusal),
			Fix: "a promotion is never a downgrade: promote a newer build, or state the downgrade (allow_downgrade) in the module"}, nil
	}
	entry.New = newEntry(in, m, cand, v, sig, running, obs)
	entry.New.Promoted.Health = health
	return entry, nil, nil, nil
}

// fromBuild is the build every host of FROM that runs m runs, once it has
// run there for TO's soak; or why there is none to promote.
func fromBuild(in Input, m *catalogue.Module, running []observe.Observation, named bool) (image.Image, *Skipped, *Refusal) {
	if len(running) == 0 {
		why := fmt.Sprintf("no host of %s runs it", in.From.Name)
		if !named {
			return image.Image{}, &Skipped{Module: m.Name, Kind: KindNothing, Why: why}, nil
		}
		return image.Image{}, nil, &Refusal{Module: m.Name, Kind: KindNothing, Why: why,
			Fix: fmt.Sprintf("deploy it in %s first (its hosts: %s), or promote other modules", in.From.Name, strings.Join(in.From.Hosts, ", "))}
	}
	for _, o := range running {
		if o.Image.Digest == "" {
			return image.Image{}, nil, &Refusal{Module: m.Name, Kind: KindNoDigest, Why: fmt.Sprintf("%s runs an image with no registry digest (image ID %s: loaded or built on the host)", o.Where(), image.Short(o.Image.ImageID)),
				Fix: "push the image to the module's registry and deploy it from there in " + in.From.Name}
		}
	}
	if d := distinct(running); len(d) > 1 {
		return image.Image{}, nil, &Refusal{Module: m.Name, Kind: KindSkew, Why: fmt.Sprintf("the hosts of %s disagree: %s", in.From.Name, strings.Join(d, "; ")),
			Fix: fmt.Sprintf("roll one build out to every host of %s and promote once it has run there, or pick one by hand (--pick <digest>: a hold)", in.From.Name)}
	}
	if soak := in.To.Soak; soak > 0 {
		for _, o := range running {
			if o.StartedAt.IsZero() {
				return image.Image{}, nil, &Refusal{Module: m.Name, Kind: KindSoak, Why: fmt.Sprintf("the start of %s is not known (its host was read without start times)", o.Where()),
					Fix: fmt.Sprintf("read the hosts of %s with start times (a Docker or Podman host; pin observe publishes them), so that the soak of %s can be counted", in.From.Name, soak)}
			}
		}
		latest := slices.MaxFunc(running, func(a, b observe.Observation) int { return a.StartedAt.Compare(b.StartedAt) })
		if ahead := latest.StartedAt.Sub(in.Now); ahead > 0 {
			return image.Image{}, nil, &Refusal{Module: m.Name, Kind: KindSoak,
				Why: fmt.Sprintf("%s started %s at %s, %s ahead of this clock: check the host's clock; the soak cannot be counted from a start in the future", latest.Where(), label(latest.Image), lock.FormatTime(latest.StartedAt), ahead.Round(time.Second)),
				Fix: fmt.Sprintf("set the host's clock right (NTP), restart the container there, and promote once it has run %s", soak)}
		}
		if ran := in.Now.Sub(latest.StartedAt); ran < soak {
			restarts := ""
			if latest.RestartCount > 0 {
				restarts = fmt.Sprintf(", restarted %d times by its engine", latest.RestartCount)
			}
			return image.Image{}, nil, &Refusal{Module: m.Name, Kind: KindSoak,
				Why: fmt.Sprintf("%s has run %s only for %s (started %s%s); %s needs %s", latest.Where(), label(latest.Image), ran.Round(time.Second), lock.FormatTime(latest.StartedAt), restarts, in.To.Name, soak),
				Fix: fmt.Sprintf("promote after %s, if it runs without a restart until then", lock.FormatTime(latest.StartedAt.Add(soak)))}
		}
	}
	return running[0].Image, nil, nil
}

// distinct lists the builds running, "host/container runs tag (digest)",
// one line per build, when there is more than one.
func distinct(running []observe.Observation) []string {
	byDigest := map[string][]string{}
	for _, o := range running {
		byDigest[o.Image.Digest] = append(byDigest[o.Image.Digest], o.Where())
	}
	var out []string
	for _, o := range running {
		if w, ok := byDigest[o.Image.Digest]; ok {
			out = append(out, fmt.Sprintf("%s run %s", strings.Join(w, ", "), label(o.Image)))
			delete(byDigest, o.Image.Digest)
		}
	}
	return out
}

// newEntry is TO's entry for cand: what it is, why, where it came from,
// and what TO's hosts run (the floors it was held against).
func newEntry(in Input, m *catalogue.Module, cand image.Image, v Verdict, sig Signature, running, obs []observe.Observation) *lock.Module {
	opts := resolve.OrderOptions(m, in.Now)
	p := &lock.Promotion{From: in.From.Name}
	for _, o := range running {
		p.Hosts = append(p.Hosts, o.Host)
		if !o.StartedAt.IsZero() && (p.Since.IsZero() || o.StartedAt.Before(p.Since)) {
			p.Since = o.StartedAt
		}
	}
	slices.Sort(p.Hosts)
	p.Hosts = slices.Compact(p.Hosts)
	e := &lock.Module{
		Name: m.Name, Policy: lock.Policy(m.Policy), Image: m.Image, Tag: cand.Tag, Digest: cand.Digest,
		Config: v.Image.ConfigDigest, Platforms: v.Image.Platforms, Version: v.Version, Created: v.Created,
		Source: lock.SourceRunning, Rule: v.Rule, AllowDowngrade: v.Downgrade, Restore: v.Restore,
		Verified: sig.Method, Signer: sig.Signer, Signature: sig.Signature,
		Hosts: hostsOf(m, in.To), Promoted: p,
	}
	if len(p.Hosts) > 0 {
		e.Reason = fmt.Sprintf("promoted from %s: %s ran %s on every host of it that runs the module (%s) since %s", in.From.Name, plural(len(p.Hosts), "host"), label(cand), strings.Join(p.Hosts, ", "), cmp.Or(lock.FormatTime(p.Since), "a time not known"))
	} else {
		e.Reason = fmt.Sprintf("picked by hand for %s: %s", in.To.Name, label(cand))
	}
	if in.Pick != nil {
		e.Source = lock.SourcePin
		e.Hold = cmp.Or(in.Pick.Reason, "picked by hand: "+in.Pick.Ref)
		if len(p.Hosts) > 0 {
			e.Reason = "picked by hand, " + e.Reason
		}
	}
	for _, o := range obs {
		if !in.To.has(o.Host) || o.State == host.StateCreated {
			continue
		}
		e.Observed = append(e.Observed, lock.Observation{Host: o.Host, Container: o.Container, Tag: o.Image.Tag, Digest: o.Image.Digest,
			ImageID: o.Image.ImageID, Version: resolve.LockedVersion(opts, o.Image), Created: opts.Created(o.Image)})
	}
	return e
}

// hostsOf lists the hosts of env that m's runs_on names, sorted.
func hostsOf(m *catalogue.Module, env Env) []string {
	var hs []string
	for _, r := range m.RunsOn {
		if env.has(r.Host) {
			hs = append(hs, r.Host)
		}
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// Release is the hash of a unit: SHA-256 over the sorted "module
// digest\n" lines of its entries.
func Release(entries []Entry) string {
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		lines = append(lines, e.Module+" "+e.New.Digest+"\n")
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// withEntries is old with entries in place of the modules' entries, and
// the hosts of env read recorded. A retired entry of a module promoted is
// taken over by its new entry (its floor was TO's, judged with the rest):
// a lock names a module once.
func withEntries(old *lock.Lock, env Env, entries []Entry) *lock.Lock {
	l := &lock.Lock{}
	if old != nil {
		l.Hosts, l.Retired = slices.Clone(old.Hosts), slices.Clone(old.Retired)
		l.Modules = slices.Clone(old.Modules)
	}
	for _, e := range entries {
		l.Retired = slices.DeleteFunc(l.Retired, func(r *lock.Module) bool { return r.Name == e.Module })
		if i := slices.IndexFunc(l.Modules, func(m *lock.Module) bool { return m.Name == e.Module }); i >= 0 {
			l.Modules[i] = e.New
		} else {
			l.Modules = append(l.Modules, e.New)
		}
	}
	return l
}

// Lift lifts the holds of the modules named in lock l: their entries
// stay as they are, without the hold. It is an error to name a module
// with no entry, or one that is not held.
func Lift(l *lock.Lock, modules []string) (*lock.Lock, error) {
	if len(modules) == 0 {
		return nil, errors.New("name the modules whose hold to lift")
	}
	out := &lock.Lock{}
	if l != nil {
		out.Hosts, out.Retired, out.Modules = l.Hosts, l.Retired, slices.Clone(l.Modules)
	}
	for _, n := range modules {
		i := slices.IndexFunc(out.Modules, func(m *lock.Module) bool { return m.Name == n })
		if i < 0 || out.Modules[i].Hold == "" {
			return nil, fmt.Errorf("module %q is not held in this lock: nothing to lift", n)
		}
		c := *out.Modules[i]
		c.Hold = ""
		out.Modules[i] = &c
	}
	return out, nil
}

func label(img image.Image) string {
	if img.Tag != "" && img.Digest != "" {
		return fmt.Sprintf("%s (%s)", img.Tag, image.Short(img.Digest))
	}
	return image.Short(cmp.Or(img.Digest, img.ImageID))
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	return fmt.Sprintf("%d %ss", n, s)
}

// LiftAll is Lift of the modules named in TO's previous lock (in.Old, at
// path), and of every hold each would take over again: an entry it takes
// over (resolve.HeldBy) that holds too, whether in TO's lock (a retired
// entry, another module's) or in another environment's lock
// (in.Record.Elsewhere: its host moved in). Left there, that hold would
// bind the module at its next resolve, and a lifted hold would come back.
// It returns the locks to write, TO's first; it is an error, as for Lift,
// to name a module not held in TO's lock.
func LiftAll(in resolve.Input, path string, modules []string) ([]lock.Write, error) {
	l, err := Lift(in.Old, modules)
	if err != nil {
		return nil, err
	}
	writes := []lock.Write{{Path: path, Lock: l}}
	in.Old = l
	for _, name := range modules {
		m := in.Catalogue.Module(name)
		if m == nil {
			continue
		}
		for range 16 { // each pass lifts one entry; a module takes over few
			h := resolve.HeldBy(in, m)
			if h == nil {
				break
			}
			at, i := path, slices.IndexFunc(in.Record.Elsewhere, func(f resolve.Foreign) bool { return f.Entry == h })
			if i >= 0 {
				at = in.Record.Elsewhere[i].Lock
			}
			w := slices.IndexFunc(writes, func(w lock.Write) bool { return w.Path == at })
			if w < 0 {
				other, _, diags := lock.Load(at)
				if diags.HasErrors() {
					return nil, fmt.Errorf("%s: %s", at, diags.Error())
				}
				writes = append(writes, lock.Write{Path: at, Lock: other})
				w = len(writes) - 1
			}
			lifted, ok := liftEntry(writes[w].Lock, h)
			if !ok {
				return nil, fmt.Errorf("module %q: the hold it would take over (%q, entry %q of %s) is not in that lock", name, h.Hold, h.Name, at)
			}
			writes[w].Lock = lifted
			if i >= 0 {
				c := *h
				c.Hold = ""
				in.Record.Elsewhere = slices.Clone(in.Record.Elsewhere)
				in.Record.Elsewhere[i].Entry = &c
			} else {
				in.Old = lifted
			}
		}
	}
	return writes, nil
}

// liftEntry is l with the hold of its entry e (a module's or a retired
// one, found by name and digest) lifted; false when l has no such entry.
func liftEntry(l *lock.Lock, e *lock.Module) (*lock.Lock, bool) {
	out := *l
	for _, list := range []*[]*lock.Module{&out.Modules, &out.Retired} {
		i := slices.IndexFunc(*list, func(m *lock.Module) bool { return m.Name == e.Name && m.Digest == e.Digest && m.Hold != "" })
		if i < 0 {
			continue
		}
		*list = slices.Clone(*list)
		c := *(*list)[i]
		c.Hold = ""
		(*list)[i] = &c
		return &out, true
	}
	return l, false
}
