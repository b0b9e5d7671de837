package promote

import (
	"context"
	"maps"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// ResolveFloors is Floors as pin holds an image against floors:
// resolve.Judge, over In — TO's lock (In.Old) and TO's hosts only
// (In.Observed, see Within) — with the module's allow_downgrade and
// restore as the words that accept a downgrade, as Resolve accepts them.
type ResolveFloors struct{ In resolve.Input }

var _ Floors = ResolveFloors{}

// Judge holds img against TO's floors.
func (f ResolveFloors) Judge(ctx context.Context, m *catalogue.Module, img image.Image) (Verdict, error) {
	if v := f.In.Catalogue.Module(m.Name); v != nil {
		m = v // TO's view: its runs_on limited to TO's hosts
	}
	j, err := resolve.Judge(ctx, f.In, m, img, resolve.Override{Downgrade: m.AllowDowngrade, Restore: m.Restore, Catalogue: true,
		How: `write allow_downgrade = "<why>" in the module`, HowRestore: `write restore = "<backup>" in the module`})
	if err != nil {
		return Verdict{}, err
	}
	opts := resolve.OrderOptions(m, f.In.Now)
	v := Verdict{Image: j.Image, Version: resolve.LockedVersion(opts, j.Image), Created: opts.Created(j.Image), Rule: lock.Rule(j.Order.Rule)}
	switch {
	case j.Refusal != nil:
		v.Refusal = j.Refusal.Error()
	case j.Accepted != nil:
		v.Downgrade, v.Restore = m.AllowDowngrade, m.Restore
	}
	return v, nil
}

// Held is the entry of TO's lock whose hold binds m (resolve.HeldBy),
// for Input.Held.
func (f ResolveFloors) Held(m *catalogue.Module) *lock.Module {
	if v := f.In.Catalogue.Module(m.Name); v != nil {
		m = v // TO's view: its runs_on limited to TO's hosts
	}
	return resolve.HeldBy(f.In, m)
}

// ResolveVerifier is Verifier as pin verifies a new image: the module's
// verify policy, its signatures looked up afresh (resolve.VerifyEntry).
type ResolveVerifier struct{ In resolve.Input }

var _ Verifier = ResolveVerifier{}

// Verify checks img under m's verify policy; a module without one passes.
func (v ResolveVerifier) Verify(ctx context.Context, m *catalogue.Module, img image.Image) (Signature, error) {
	if m.Verify == nil {
		return Signature{}, nil
	}
	c, err := resolve.VerifyEntry(ctx, v.In, m, &lock.Module{Name: m.Name, Image: m.Image, Digest: img.Digest}, true)
	if err != nil {
		return Signature{}, err
	}
	return Signature{Method: lock.Method(c.Result.Method), Signer: c.Result.Signer, Signature: c.Result.Signature}, nil
}

// Within is what obs read of env's hosts only: the floors of one
// environment are its own hosts'.
func Within(obs observe.Observed, env Env) observe.Observed {
	out := observe.Observed{Snapshots: maps.Clone(obs.Snapshots), Errors: maps.Clone(obs.Errors)}
	maps.DeleteFunc(out.Snapshots, func(h string, _ *host.Snapshot) bool { return !env.has(h) })
	maps.DeleteFunc(out.Errors, func(h string, _ error) bool { return !env.has(h) })
	out.Index()
	return out
}
