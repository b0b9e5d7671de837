package promote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

const registry = "registry.example.org/team/"

// digestOf is the digest of build tag of module mod, derived from both,
// so that the same words are the same image.
func digestOf(mod, tag string) string {
	sum := sha256.Sum256([]byte(mod + ":" + tag))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// world is two environments, staging (s1, s2) and production (p1, p2),
// and what their containers run.
type world struct {
	cat  *catalogue.Catalogue
	obs  observe.Observed
	old  *lock.Lock
	from Env
	to   Env
	// verifyFails names modules whose builds fail the signature policy;
	// verifyErr, when set, is what the verifier answers instead.
	verifyFails map[string]bool
	verifyErr   error
}

func newWorld(mods ...string) *world {
	w := &world{
		cat:  &catalogue.Catalogue{},
		obs:  observe.Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}},
		old:  &lock.Lock{},
		from: Env{Name: "staging", Hosts: []string{"s1", "s2"}},
		to:   Env{Name: "production", Hosts: []string{"p1", "p2"}, Soak: 24 * time.Hour},
	}
	for _, h := range []string{"s1", "s2", "p1", "p2"} {
		w.obs.Snapshots[h] = &host.Snapshot{Schema: 1, Host: h}
	}
	for _, m := range mods {
		mod := &catalogue.Module{Name: m, Image: registry + m, Policy: catalogue.AtLeastRunning}
		for _, h := range []string{"s1", "s2", "p1", "p2"} {
			mod.RunsOn = append(mod.RunsOn, catalogue.RunsOn{Host: h, Container: m})
		}
		w.cat.Modules = append(w.cat.Modules, mod)
	}
	return w
}

// run puts a container of module mod, build tag, on host h, started ago
// before now (0: start not known).
func (w *world) run(h, mod, tag string, ago time.Duration, restarts int) {
	s := w.obs.Snapshots[h]
	d := digestOf(mod, tag)
	id := "sha256:" + strings.Repeat(strconv.Itoa(len(s.Containers)%10), 64)
	c := host.Container{ID: h + mod, Name: mod, Image: registry + mod + ":" + tag + "@" + d, ImageID: id, State: host.StateRunning, RestartCount: restarts}
	if ago != 0 {
		c.StartedAt = now.Add(-ago)
	}
	s.Containers = append(s.Containers, c)
	s.Images = append(s.Images, host.Image{ID: id, RepoDigests: []string{registry + mod + "@" + d}})
}

// lockTo locks module mod at build tag in production.
func (w *world) lockTo(mod, tag string) *lock.Module {
	e := &lock.Module{Name: mod, Policy: lock.PolicyAtLeastRunning, Image: registry + mod, Tag: tag, Digest: digestOf(mod, tag), Source: lock.SourceRunning, Version: tag}
	w.old.Modules = append(w.old.Modules, e)
	return e
}

func (w *world) input(mods ...string) Input {
	w.obs.Index()
	return Input{Catalogue: w.cat, From: w.from, To: w.to, Observed: w.obs, Record: recordOf(w.obs), Old: w.old, Modules: mods, Now: now,
		Floors: oracleFloors{w}, Verifier: oracleVerifier{w}}
}

// oracleFloors is the test's own floor rule: a build is at least every
// build production runs or locks by its dotted version (its tag); a tag
// that is not a dotted version orders nothing.
type oracleFloors struct{ w *world }

func (f oracleFloors) Judge(_ context.Context, m *catalogue.Module, img image.Image) (Verdict, error) {
	v := Verdict{Image: img, Version: img.Tag, Rule: lock.RuleVersion}
	var floors []string
	for _, h := range f.w.to.Hosts {
		for _, c := range f.w.obs.Snapshots[h].Containers {
			if c.Name == m.Name {
				tag := strings.TrimPrefix(strings.Split(c.Image, "@")[0], registry+m.Name+":")
				floors = append(floors, tag)
			}
		}
	}
	if e := f.w.old.Module(m.Name); e != nil {
		floors = append(floors, e.Tag)
	}
	for _, fl := range floors {
		c, ok := dotted(img.Tag, fl)
		if ok && c >= 0 {
			continue
		}
		if m.AllowDowngrade != "" {
			v.Downgrade = m.AllowDowngrade
			continue
		}
		v.Refusal = fmt.Sprintf("%s is below or unordered against %s", img.Tag, fl)
		return v, nil
	}
	return v, nil
}

// dotted compares two dotted versions; false when either is not one.
func dotted(a, b string) (int, bool) {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) != len(pb) {
		return 0, false
	}
	for i := range pa {
		x, err1 := strconv.Atoi(pa[i])
		y, err2 := strconv.Atoi(pb[i])
		if err1 != nil || err2 != nil {
			return 0, false
		}
		if x != y {
			if x < y {
				return -1, true
			}
			return 1, true
		}
	}
	return 0, true
}

type oracleVerifier struct{ w *world }

func (v oracleVerifier) Verify(_ context.Context, m *catalogue.Module, img image.Image) (Signature, error) {
	if v.w.verifyErr != nil {
		return Signature{}, v.w.verifyErr
	}
	if v.w.verifyFails[m.Name] {
		return Signature{}, &verify.Failure{Digest: img.Digest, Reason: verify.Unsigned}
	}
	return Signature{Method: lock.MethodCosignKey, Signer: "sha256:" + strings.Repeat("f", 64), Signature: digestOf(m.Name, "sig")}, nil
}

// releaseOf is the release hash by its definition, written out.
func releaseOf(lines ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func promote(t *testing.T, in Input) *Result {
	t.Helper()
	res, err := Promote(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// refusedAs checks that res refused module mod as kind, and promoted
// nothing: the lock is the old one, as it was.
func refusedAs(t *testing.T, res *Result, old []byte, mod string, kind Kind) *Refusal {
	t.Helper()
	if len(res.Entries) != 0 || string(lock.Format(res.Lock())) != string(old) {
		t.Errorf("a refused promotion changed the lock: %+v", res.Entries)
	}
	for _, r := range res.Refusals {
		if r.Module == mod && r.Kind == kind {
			if !strings.Contains(r.Error(), mod) || r.Fix == "" {
				t.Errorf("refusal names no module or no fix: %v", r)
			}
			return r
		}
	}
	t.Fatalf("want module %q refused as %s; refusals %v, entries %+v", mod, kind, res.Refusals, res.Entries)
	return nil
}

// TestPromoteCarriesWhatRuns: staging runs 1.28.0 on both hosts for two
// days, production runs and locks 1.27.3: production's entry becomes the
// digest staging runs, with where it came from.
func TestPromoteCarriesWhatRuns(t *testing.T) {
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.run("s2", "web", "1.28.0", 30*time.Hour, 2)
	w.run("p1", "web", "1.27.3", 90*time.Hour, 0)
	w.lockTo("web", "1.27.3")
	w.lockTo("other", "9.9.9") // another module's entry: untouched
	res := promote(t, w.input())
	if res.Refused() || len(res.Entries) != 1 {
		t.Fatalf("refusals %v, entries %+v", res.Refusals, res.Entries)
	}
	e := res.Lock().Module("web")
	want := releaseOf("web " + digestOf("web", "1.28.0") + "\n")
	if e.Digest != digestOf("web", "1.28.0") || e.Tag != "1.28.0" || e.Promoted == nil || e.Promoted.From != "staging" ||
		strings.Join(e.Promoted.Hosts, ",") != "s1,s2" || !e.Promoted.Since.Equal(now.Add(-50*time.Hour)) || e.Promoted.Release != want || res.Release != want {
		t.Errorf("entry %+v, promoted %+v, release %s (want %s)", e, e.Promoted, res.Release, want)
	}
	if e.Hold != "" || e.Verified != lock.MethodCosignKey || strings.Join(e.Hosts, ",") != "p1,p2" || len(e.Observed) != 1 || e.Observed[0].Host != "p1" || e.Observed[0].Tag != "1.27.3" {
		t.Errorf("entry %+v", e)
	}
	if !strings.Contains(e.Reason, "promoted from staging") {
		t.Errorf("reason: %s", e.Reason)
	}
	if o := res.Lock().Module("other"); o == nil || o.Digest != digestOf("other", "9.9.9") {
		t.Error("another module's entry changed")
	}
	// Promoted again, the same release: the lock does not change.
	w.old = res.Lock()
	before := lock.Format(w.old)
	again := promote(t, w.input())
	if string(lock.Format(again.Lock())) != string(before) || again.Entries[0].Changed() {
		t.Error("promoting the same release again rewrote the entry")
	}
}

func TestPromoteRefusesSkew(t *testing.T) {
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.run("s2", "web", "1.28.1", 50*time.Hour, 0)
	w.lockTo("web", "1.27.3")
	old := lock.Format(w.old)
	r := refusedAs(t, promote(t, w.input()), old, "web", KindSkew)
	if !strings.Contains(r.Why, "s1/web run 1.28.0") || !strings.Contains(r.Why, "s2/web run 1.28.1") {
		t.Errorf("skew does not say who runs what: %s", r.Why)
	}
}

// TestPromoteRefusesBeforeSoak: the build must have run in staging for
// production's soak in every container; a restart starts the clock
// again (the engine's StartedAt), and a start not known proves nothing.
// A restart by the engine within the soak is a build that does not run
// healthy (no-restart), refused as such.
func TestPromoteRefusesBeforeSoak(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ago      time.Duration
		restarts int
		kind     Kind
		want     string
	}{
		{"young", 23 * time.Hour, 0, KindSoak, "only for 23h0m0s"},
		{"restarted", time.Hour, 3, KindUnhealthy, "restarted 3 times"},
		{"unknown start", 0, 0, KindSoak, "not known"},
		{"host clock ahead", -2 * time.Hour, 0, KindSoak, "2h0m0s ahead of this clock: check the host's clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld("web")
			w.run("s1", "web", "1.28.0", 72*time.Hour, 0)
			w.run("s2", "web", "1.28.0", tc.ago, tc.restarts)
			old := lock.Format(w.old)
			r := refusedAs(t, promote(t, w.input()), old, "web", tc.kind)
			if !strings.Contains(r.Why, tc.want) || !strings.Contains(r.Why, "s2/web") {
				t.Errorf("why: %s", r.Why)
			}
			if strings.Contains(r.Why, "for -") {
				t.Errorf("a negative duration: %s", r.Why)
			}
		})
	}
	// The boundary: exactly the soak passes; no soak needs no start.
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 24*time.Hour, 0)
	if res := promote(t, w.input()); res.Refused() {
		t.Errorf("a build that ran exactly the soak: %v", res.Refusals)
	}
	w = newWorld("web")
	w.to.Soak = 0
	w.run("s1", "web", "1.28.0", 0, 0)
	if res := promote(t, w.input()); res.Refused() {
		t.Errorf("no soak: %v", res.Refusals)
	}
}

func TestPromoteRefusesUnverified(t *testing.T) {
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.verifyFails = map[string]bool{"web": true}
	refusedAs(t, promote(t, w.input()), lock.Format(w.old), "web", KindUnverified)
	// A verifier that cannot check (a registry down) fails the run.
	w.verifyFails, w.verifyErr = nil, errors.New("registry down")
	if _, err := Promote(context.Background(), w.input()); err == nil || !strings.Contains(err.Error(), "registry down") {
		t.Errorf("err = %v", err)
	}
}

// TestPromoteNeverDowngrades: production runs, or locks, something newer
// (or unorderable): refused, unless the module states the downgrade.
func TestPromoteNeverDowngrades(t *testing.T) {
	for name, setup := range map[string]func(w *world){
		"runs newer":  func(w *world) { w.run("p2", "web", "1.29.0", time.Hour, 0) },
		"locks newer": func(w *world) { w.lockTo("web", "1.29.0") },
		"unordered":   func(w *world) { w.lockTo("web", "latest") },
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld("web")
			w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
			setup(w)
			refusedAs(t, promote(t, w.input()), lock.Format(w.old), "web", KindFloor)

			w.cat.Modules[0].AllowDowngrade = "1.29.0 corrupts sessions"
			res := promote(t, w.input())
			if res.Refused() || res.Lock().Module("web").AllowDowngrade != "1.29.0 corrupts sessions" || res.Lock().Module("web").Digest != digestOf("web", "1.28.0") {
				t.Errorf("stated downgrade: %v %+v", res.Refusals, res.Lock().Module("web"))
			}
		})
	}
}

func TestPromoteNothingInFrom(t *testing.T) {
	w := newWorld("web", "db")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.run("p1", "db", "16.4", 50*time.Hour, 0)
	w.obs.Snapshots["s2"].Containers = append(w.obs.Snapshots["s2"].Containers, host.Container{ID: "x", Name: "db", Image: registry + "db:16.5", ImageID: "sha256:" + strings.Repeat("e", 64), State: host.StateExited})
	refusedAs(t, promote(t, w.input("db")), lock.Format(w.old), "db", KindNothing)
	// Not named: reported, and the others promoted.
	res := promote(t, w.input())
	if res.Refused() || len(res.Skipped) != 1 || res.Skipped[0].Module != "db" || res.Skipped[0].Kind != KindNothing || res.Lock().Module("web") == nil || res.Lock().Module("db") != nil {
		t.Errorf("refusals %v, skipped %+v", res.Refusals, res.Skipped)
	}
}

// TestPromoteAllOrNothing: modules promoted together are one unit; one
// refused, none is promoted, and the release names them all.
func TestPromoteAllOrNothing(t *testing.T) {
	w := newWorld("web", "db")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.run("s1", "db", "16.5", 50*time.Hour, 0)
	w.run("s2", "db", "16.6", 50*time.Hour, 0)
	old := lock.Format(w.old)
	refusedAs(t, promote(t, w.input()), old, "db", KindSkew)
	refusedAs(t, promote(t, w.input("web", "db")), old, "db", KindSkew)

	w.obs.Snapshots["s2"].Containers = nil
	res := promote(t, w.input("web", "db")) // the hash sorts its lines: not in this order
	want := releaseOf("db "+digestOf("db", "16.5")+"\n", "web "+digestOf("web", "1.28.0")+"\n")
	if res.Refused() || res.Release != want || res.Lock().Module("web").Promoted.Release != want || res.Lock().Module("db").Promoted.Release != want {
		t.Errorf("release %s, want %s; refusals %v", res.Release, want, res.Refusals)
	}
	// Each alone is another release.
	if one := promote(t, w.input("web")); one.Release == want {
		t.Error("a partial run has the unit's release")
	}
}

func TestPromoteHostUnread(t *testing.T) {
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	delete(w.obs.Snapshots, "s2")
	w.obs.Errors["s2"] = errors.New("connection refused")
	refusedAs(t, promote(t, w.input()), lock.Format(w.old), "web", KindHostUnread)
}

// TestHolds: a pick records a hold; automatic promotions skip the held
// entry (reported), a promotion that names it refuses, until it is
// lifted.
func TestHolds(t *testing.T) {
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.lockTo("web", "1.27.3")
	in := w.input("web")
	in.Pick = &Pick{Ref: "1.27.4@" + digestOf("web", "1.27.4"), Reason: "1.28.0 breaks webhooks"}
	res := promote(t, in)
	e := res.Lock().Module("web")
	if res.Refused() || e.Digest != digestOf("web", "1.27.4") || e.Hold != "1.28.0 breaks webhooks" || e.Source != lock.SourcePin || e.Promoted == nil || len(e.Promoted.Hosts) != 0 {
		t.Fatalf("pick: %v %+v", res.Refusals, e)
	}
	// A pick still never goes below production's floors.
	in.Pick.Ref = digestOf("web", "1.27.0")
	in.Pick.Ref = "1.27.0@" + in.Pick.Ref
	refusedAs(t, promote(t, in), lock.Format(w.old), "web", KindFloor)

	w.old = res.Lock()
	held := lock.Format(w.old)
	auto := promote(t, w.input())
	if auto.Refused() || len(auto.Skipped) != 1 || auto.Skipped[0].Kind != KindHeld || string(lock.Format(auto.Lock())) != string(held) {
		t.Errorf("automatic promotion over a hold: %v %+v", auto.Refusals, auto.Skipped)
	}
	refusedAs(t, promote(t, w.input("web")), held, "web", KindHeld)

	lifted, err := Lift(w.old, []string{"web"})
	if err != nil || lifted.Module("web").Hold != "" || lifted.Module("web").Digest != digestOf("web", "1.27.4") || w.old.Module("web").Hold == "" {
		t.Fatalf("lift: %v", err)
	}
	if _, err := Lift(lifted, []string{"web"}); err == nil {
		t.Error("lifted a hold twice")
	}
	w.old = lifted
	if res := promote(t, w.input()); res.Refused() || res.Lock().Module("web").Digest != digestOf("web", "1.28.0") {
		t.Errorf("after the lift: %v", res.Refusals)
	}
	// A pick names a digest and one module.
	in = w.input("web")
	in.Pick = &Pick{Ref: "1.27.4"}
	if _, err := Promote(context.Background(), in); err == nil {
		t.Error("a pick by tag alone")
	}
	in = w.input()
	in.Pick = &Pick{Ref: digestOf("web", "1.27.4")}
	if _, err := Promote(context.Background(), in); err == nil {
		t.Error("a pick with no module named")
	}
}

// TestPromoteTakesOverARetiredEntry: production's lock retired web (its
// host had left production) and web runs in production again: the
// promoted entry takes the retired one's place, and the lock names web
// once (a lock naming it twice does not parse). Found by the truth test:
// a host moved out of production and back.
func TestPromoteTakesOverARetiredEntry(t *testing.T) {
	w := newWorld("web")
	w.run("s1", "web", "1.28.0", 50*time.Hour, 0)
	w.run("s2", "web", "1.28.0", 30*time.Hour, 0)
	w.lockTo("other", "9.9.9")
	w.old.Retired = append(w.old.Retired, w.lockTo("web", "1.27.3"), &lock.Module{Name: "gone", Policy: lock.PolicyAtLeastRunning, Image: registry + "gone", Tag: "1.0.0", Digest: digestOf("gone", "1.0.0"), Source: lock.SourceRunning, Version: "1.0.0"})
	w.old.Modules = w.old.Modules[:1]
	old := slices.Clone(w.old.Retired)
	res := promote(t, w.input())
	if res.Refused() || len(res.Entries) != 1 {
		t.Fatalf("refusals %v, entries %+v", res.Refusals, res.Entries)
	}
	b := lock.Format(res.Lock())
	l, diags := lock.Parse(b, lock.DefaultPath)
	if diags.HasErrors() {
		t.Fatalf("the promoted lock does not parse: %s\n%s", diags.Error(), b)
	}
	if e := l.Module("web"); e == nil || e.Digest != digestOf("web", "1.28.0") {
		t.Errorf("web: %+v", e)
	}
	if len(l.Retired) != 1 || l.Retired[0].Name != "gone" {
		t.Errorf("retired: want gone alone, got %+v", l.Retired)
	}
	if len(w.old.Retired) != 2 || w.old.Retired[0] != old[0] {
		t.Error("the old lock was changed in place")
	}
}

// recordOf is the record of a run whose hosts answered obs: each host
// that failed is not read, as internal/source records it.
func recordOf(obs observe.Observed) resolve.Record {
	r := resolve.Record{NotRead: map[string]resolve.NotRead{}}
	for h, err := range obs.Errors {
		r.NotRead[h] = resolve.NotRead{Why: resolve.WhyUnreachable, Err: err}
	}
	return r
}
