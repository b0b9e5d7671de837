package source

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/resolve"
)

func selectWorld(t *testing.T) (*Inputs, string) {
	t.Helper()
	c, diags := catalogue.Load(filepath.Join("..", "catalogue", "testdata", "environments"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return &Inputs{Catalogue: c}, filepath.Join(t.TempDir(), "pin.lock.hcl")
}

// TestSelectNamedModules: "pin resolve api canary" decides, in each
// environment, the named modules in its view, and its record says so:
// the hosts read count for the named modules alone, never for the lock
// as a whole.
func TestSelectNamedModules(t *testing.T) {
	in, lk := selectWorld(t)
	run, err := in.Select(Selection{Lock: lk, Modules: []string{"api", "canary"}})
	if err != nil || run.Orphans != nil || run.Moved != nil {
		t.Fatalf("select: %v %v %v", err, run.Orphans, run.Moved)
	}
	want := map[string][]string{"production": {"api"}, "staging": {"api", "canary"}}
	if len(run.Envs) != len(want) {
		t.Fatalf("environments %d, want %d", len(run.Envs), len(want))
	}
	for _, e := range run.Envs {
		if !slices.Equal(e.Only, want[e.Name]) || !e.Decides() {
			t.Errorf("%s decides %v, want %v", e.Name, e.Only, want[e.Name])
		}
		r := run.Input(e).Record
		if !slices.Equal(r.Only, want[e.Name]) {
			t.Errorf("%s: the record names %v, want %v", e.Name, r.Only, want[e.Name])
		}
		for _, h := range e.Catalogue.Hosts {
			if !r.Read(h.Name) || r.ReadForEvery(h.Name) {
				t.Errorf("%s: host %s read %v, read for every module %v; want read for the named modules alone", e.Name, h.Name, r.Read(h.Name), r.ReadForEvery(h.Name))
			}
		}
		if r.Decides("labelled") {
			t.Errorf("%s: the record decides labelled, which was not named", e.Name)
		}
	}
	// Without names, every module, and every host read counts for the lock.
	run, err = in.Select(Selection{Lock: lk})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range run.Envs {
		r := run.Input(e).Record
		if e.Only != nil || r.Only != nil || !r.ReadForEvery(e.Catalogue.Hosts[0].Name) || run.Input(e).Mode != resolve.ModeResolve {
			t.Errorf("%s: Only %v, record %v, mode %v", e.Name, e.Only, r.Only, run.Input(e).Mode)
		}
	}
}

// TestSelectRefuses: what the command line gets wrong is an error of its
// own type; an orphan lock beside the lock is a refusal, returned.
func TestSelectRefuses(t *testing.T) {
	in, lk := selectWorld(t)
	_, err := in.Select(Selection{Lock: lk, Modules: []string{"api", "nope", "nope"}})
	var um *UnknownModulesError
	if !errors.As(err, &um) || err.Error() != `no module "nope" in the catalogue; its modules are api, canary, labelled` {
		t.Errorf("unknown module: %v", err)
	}
	_, err = in.Select(Selection{Lock: lk, Environments: []string{"production"}, Modules: []string{"canary"}})
	var ne *NotInEnvironmentsError
	if !errors.As(err, &ne) || err.Error() != `module "canary" is not in environment production: name its environment with --environment, or drop it` {
		t.Errorf("canary in production: %v", err)
	}
	_, err = in.Select(Selection{Lock: lk, Environments: []string{"staging"}, Host: "p1"})
	var he *HostEnvironmentError
	if !errors.As(err, &he) || he.Environment != "production" {
		t.Errorf("p1 with staging: %v", err)
	}
	run, err := in.Select(Selection{Lock: lk, Host: "p1"})
	if err != nil || len(run.Envs) != 1 || run.Envs[0].Name != "production" || run.Input(run.Envs[0]).Mode != resolve.ModeFromHost {
		t.Errorf("lock --from-host p1: %v %v", run, err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(lk), "pin.lock.qa.hcl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err = in.Select(Selection{Lock: lk})
	if err != nil || run.Orphans == nil || run.Envs != nil {
		t.Errorf("orphan lock: %v %+v", err, run)
	}
}

// TestSelectPromotion: "pin promote staging production" selects (SelectTarget)
// production's share of the run and the pair, checked; it refuses a
// pair against the catalogue's from, the same environment twice and an
// unknown one, and an orphan lock before the pair is looked at. A
// promotion says itself which named modules it promotes: canary, not in
// production, is no error of the selection.
func TestSelectPromotion(t *testing.T) {
	in, lk := selectWorld(t)
	run, err := in.SelectTarget(Target{Lock: lk, From: "staging", Environment: "production", Modules: []string{"canary"}})
	if err != nil || run.Orphans != nil || run.Moved != nil {
		t.Fatalf("select: %v %+v", err, run)
	}
	if len(run.Envs) != 1 || run.Envs[0].Name != "production" || run.Envs[0].Path != LockPath(lk, "production") || run.Envs[0].Only != nil {
		t.Errorf("envs %+v", run.Envs)
	}
	if run.From == nil || run.From.Name != "staging" || run.To == nil || run.To.Name != "production" {
		t.Errorf("pair %+v %+v", run.From, run.To)
	}
	var pe *PromotionPairError
	var ce *catalogue.PromotionError
	_, err = in.SelectTarget(Target{Lock: lk, From: "production", Environment: "staging"})
	if !errors.As(err, &pe) || !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "promote production staging: ") {
		t.Errorf("reversed: %v", err)
	}
	_, err = in.SelectTarget(Target{Lock: lk, From: "staging", Environment: "staging"})
	if !errors.As(err, &pe) || err.Error() != "promote staging staging: name two environments" {
		t.Errorf("same: %v", err)
	}
	var ue *UnknownEnvironmentError
	_, err = in.SelectTarget(Target{Lock: lk, From: "qa", Environment: "production"})
	if !errors.As(err, &ue) || ue.Environment != "qa" {
		t.Errorf("unknown from: %v", err)
	}
	_, err = in.SelectTarget(Target{Lock: lk, From: "staging", Environment: "production", Modules: []string{"nope"}})
	var um *UnknownModulesError
	if !errors.As(err, &um) {
		t.Errorf("unknown module: %v", err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(lk), "pin.lock.qa.hcl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err = in.SelectTarget(Target{Lock: lk, From: "staging", Environment: "staging"})
	if err != nil || run.Orphans == nil || run.Envs != nil || run.To != nil {
		t.Errorf("orphan lock: %v %+v", err, run)
	}
}

// TestSelectOwnAndReadOnly: with Own (SelectTarget), the lock named is the one
// environment's own file (pin propose's work tree copy), and orphan
// locks are those beside the lock it is named after; a ReadOnly run is
// not refused by an orphan lock but told of it, with its environments.
func TestSelectOwnAndReadOnly(t *testing.T) {
	in, lk := selectWorld(t)
	own := LockPath(lk, "staging")
	run, err := in.SelectTarget(Target{Lock: own, Own: true, Environment: "staging"})
	if err != nil || run.Orphans != nil || len(run.Envs) != 1 || run.Envs[0].Name != "staging" || run.Envs[0].Path != own {
		t.Fatalf("own: %v %+v", err, run)
	}
	orphan := filepath.Join(filepath.Dir(lk), "pin.lock.qa.hcl")
	if err := os.WriteFile(orphan, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err = in.SelectTarget(Target{Lock: own, Own: true, Environment: "staging"})
	if err != nil || run.Orphans == nil || !slices.Equal(run.Orphans.Locks, []string{orphan}) || run.Envs != nil {
		t.Errorf("own beside an orphan: %v %+v", err, run)
	}
	run, err = in.Select(Selection{Lock: lk, ReadOnly: true})
	if err != nil || run.Orphans == nil || !slices.Equal(run.Orphans.Locks, []string{orphan}) || len(run.Envs) != 2 {
		t.Errorf("read-only beside an orphan: %v %+v", err, run)
	}
}
