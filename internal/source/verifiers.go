package source

import (
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
	"github.com/pin-tool/pin/resolve"
)

// What each registry client offers signature verification: every one
// serves manifests and blobs; Remote and Offline list referrers too (an
// OCI layout mirror does not: the tag scheme alone is read from it); only
// Remote can say what the registry serves now (Heads).
var (
	_ sigstore.Source    = (*registry.Remote)(nil)
	_ sigstore.Referrers = (*registry.Remote)(nil)
	_ sigstore.Heads     = (*registry.Remote)(nil)
	_ sigstore.Source    = registry.Offline{}
	_ sigstore.Referrers = registry.Offline{}
	_ sigstore.Source    = (*registry.Layout)(nil)

	_ resolve.Verifier = (*sigstore.Verifier)(nil)
)

// policy is a verify block loaded once per run: its Policy, or why it
// could not be loaded.
type policy struct {
	p   *sigstore.Policy
	err error
}

// Verifier returns the verifier of module m's verify policy bound to m's
// registry (resolve.Input.Verifier): the policy (keys read and parsed, or
// a trusted root) is loaded once per verify block and run, however many
// modules share it. Nil when m has no verify policy, or no registry may
// be asked (offline with no cache, a name that is not a repository).
func (r *Registries) Verifier(m *catalogue.Module) (resolve.Verifier, error) {
	if m.Verify == nil {
		return nil, nil
	}
	p, err := r.policy(m.Verify)
	if err != nil {
		return nil, err
	}
	if r.For(m.Image) == nil {
		return nil, nil
	}
	ref, err := name.NewRepository(m.Image)
	if err != nil {
		return nil, nil
	}
	r.mu.Lock()
	reg, ok := r.sig[ref.RegistryStr()]
	r.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return p.On(reg), nil
}

// policy loads v once.
func (r *Registries) policy(v *catalogue.Verify) (*sigstore.Policy, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.policies[v]; ok {
		return p.p, p.err
	}
	p, err := sigstore.New(verify.Spec{Keys: v.Keys, Issuer: v.Issuer, Subject: v.Subject,
		SubjectRegex: v.SubjectRegex, TrustedRoot: v.TrustedRoot, MatchRepository: v.MatchRepository})
	r.policies[v] = policy{p: p, err: err}
	return p, err
}
