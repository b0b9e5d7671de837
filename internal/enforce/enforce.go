package enforce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Annotation keys (Kubernetes) and label keys (Docker) that carry the
// override in words. The restore is needed only for a one_way module.
const (
	AllowDowngradeKey = "pin.dev/allow-downgrade"
	RestoreKey        = "pin.dev/restore"
	// AllowEphemeralKey is the override of an ephemeral container (kubectl
	// debug) in a Pod a module covers: a Pod's annotation.
	AllowEphemeralKey = "pin.dev/allow-ephemeral"
)

// Enforcer decides replacements for one catalogue and lock. It is safe
// for concurrent use.
type Enforcer struct {
	Catalogue *catalogue.Catalogue
	Lock      *lock.Lock
	// Elsewhere are other environments' entries held against this
	// environment's hosts (resolve.Record.Elsewhere): floors here too.
	Elsewhere []resolve.Foreign
	// Hosts are the adapters of the catalogue's hosts, by name.
	Hosts map[string]observe.Host
	// Registry returns the source to ask for a repository (see Memo).
	Registry func(repo string) resolve.Registry
	// Verifier returns the verifier of a module's verify policy (see
	// resolve.Input.Verifier); nil when no signature may be checked.
	Verifier func(m *catalogue.Module) (resolve.Verifier, error)
	// Now is the clock that bounds plausible build dates; nil means
	// time.Now.
	Now func() time.Time

	// byHost are, for a catalogue with environments, the enforcers of
	// each host's environment (see For).
	byHost map[string]*Enforcer
	// parent is the enforcer an environment's was made by, whose Now
	// it keeps.
	parent *Enforcer
}

// For is the enforcer that judges what host hostName runs: e itself for
// a catalogue without environments; else one of the host's environment,
// whose catalogue is the environment's view (every module, its runs_on
// limited to the environment's hosts, so that a pin.module label still
// covers) and whose lock is the environment's. A host in no environment
// gets e.
func (e *Enforcer) For(hostName string) *Enforcer {
	if sub := e.byHost[hostName]; sub != nil {
		return sub
	}
	return e
}

// environments fills e.byHost: an enforcer per environment of e's
// catalogue, each with its view and the lock beside lockPath
// (source.Views).
func (e *Enforcer) environments(lockPath string) error {
	views, err := source.Views(lockPath, e.Catalogue, e.Lock)
	if err != nil {
		return err
	}
	for _, v := range views {
		if v.Env == nil {
			e.Elsewhere = v.Elsewhere
			continue
		}
		sub := &Enforcer{Catalogue: v.Catalogue, Lock: v.Lock, Elsewhere: v.Elsewhere, Hosts: e.Hosts, Registry: e.Registry, Verifier: e.Verifier, parent: e}
		if e.byHost == nil {
			e.byHost = map[string]*Enforcer{}
		}
		for _, h := range v.Env.Hosts {
			e.byHost[h] = sub
		}
	}
	return nil
}

// Load loads the catalogue and the lock and builds the adapters and the
// registries as every pin command does (source.LoadFiles, source.Hosts,
// source.NewRegistries), the registries behind a Memo; with environments,
// each environment's lock too (For). Catalogue or lock errors are a
// *source.DiagnosticsError.
func Load(catPath, lockPath string, o source.Options) (*Enforcer, *Memo, error) {
	cat, _, old, _, err := source.LoadFiles(catPath, lockPath)
	if err != nil {
		return nil, nil, err
	}
	hosts, err := source.Hosts(cat, o, "")
	if err != nil {
		return nil, nil, err
	}
	regs := source.NewRegistries(cat, o)
	memo := NewMemo(regs.For, 0)
	e := &Enforcer{Catalogue: cat, Lock: old, Hosts: hosts, Registry: memo.For, Verifier: regs.Verifier}
	if err := e.environments(lockPath); err != nil {
		return nil, nil, err
	}
	return e, memo, nil
}

// Candidate is a container about to be created on a host: what the
// Engine's create request or the admitted object says of it.
type Candidate struct {
	// Name is the container's name; Labels its labels (a pod's labels for
	// Kubernetes); Workload and Pod as host.Container has them.
	Name     string
	Labels   map[string]string
	Workload string
	Pod      string
	// Image is the reference as deployed ("repo:tag", "repo@sha256:…").
	Image string
}

// Covering lists the modules of the catalogue that take over c on host
// hostName, by the rules of observe.Observations (runs_on container,
// workload, selector, the pin.module label), in catalogue order.
func (e *Enforcer) Covering(hostName string, c Candidate) []*catalogue.Module {
	snap := &host.Snapshot{Host: hostName, Containers: []host.Container{{ID: "candidate", Name: c.Name, Labels: c.Labels,
		Workload: c.Workload, Pod: c.Pod, Image: c.Image, State: host.StateCreated}}}
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{hostName: snap}}
	var out []*catalogue.Module
	for _, m := range e.Catalogue.Modules {
		if obs, _ := observe.Observations(m, seen); len(obs) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// Observe reads host hostName now, as Observed: its snapshot, or its
// error (which Judge then returns: without the host, the floors are not
// known).
func (e *Enforcer) Observe(ctx context.Context, hostName string) observe.Observed {
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}}
	h, ok := e.Hosts[hostName]
	if !ok {
		seen.Errors[hostName] = fmt.Errorf("host %s is not in the catalogue", hostName)
		return seen
	}
	s, err := h.Observe(ctx)
	if err != nil {
		seen.Errors[hostName] = err
	} else {
		seen.Snapshots[hostName] = s
	}
	return seen
}

// Judge asks resolve.Judge whether ref may replace what module m runs on
// the hosts in seen, the lock bounding the rest.
func (e *Enforcer) Judge(ctx context.Context, seen observe.Observed, m *catalogue.Module, ref string, ov resolve.Override) (*resolve.Judgement, error) {
	img, err := ParseRef(ref)
	if err != nil {
		return nil, err
	}
	return e.JudgeImage(ctx, seen, m, img, ov)
}

// JudgeImage is Judge for an image already read: a reference's repository,
// tag and digest (ParseRef), or what a host says of an image it holds
// under no registry digest (its image ID alone, so that only the same
// content as a floor orders it). A reference the registry has no image
// by is refused saying so (resolve.KindNotServed).
func (e *Enforcer) JudgeImage(ctx context.Context, seen observe.Observed, m *catalogue.Module, img image.Image, ov resolve.Override) (*resolve.Judgement, error) {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	} else if e.parent != nil && e.parent.Now != nil {
		now = e.parent.Now
	}
	in := resolve.Input{Catalogue: e.Catalogue, Old: e.Lock, Record: resolve.Record{Elsewhere: e.Elsewhere}, Observed: seen, Registry: e.Registry, Verifier: e.Verifier, Now: now()}
	return resolve.Judge(ctx, in, m, img, ov)
}

// ParseRef reads an image reference as a container spec gives it
// ("alpine", "repo:tag", "repo@sha256:…", "repo:tag@sha256:…") into the
// repository (normalised as the catalogue normalises it), the tag and
// the digest. A reference with neither tag nor digest means ":latest", as
// engines read it.
func ParseRef(ref string) (image.Image, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return image.Image{}, fmt.Errorf("image %q: %w", ref, err)
	}
	img := image.Image{Repository: r.Context().Name()}
	switch v := r.(type) {
	case name.Digest:
		img.Digest = v.DigestStr()
		if before, _, ok := strings.Cut(ref, "@"); ok {
			if i := strings.LastIndex(before, "/"); strings.Contains(before[i+1:], ":") {
				if t, err := name.NewTag(before); err == nil {
					img.Tag = t.TagStr()
				}
			}
		}
	case name.Tag:
		img.Tag = v.TagStr()
	}
	return img, nil
}

// Override reads the override from an object's annotations or a
// container's labels (AllowDowngradeKey, RestoreKey); how tells people how
// to give it where they are ("annotate the Deployment with", "label the
// container with").
func Override(kv map[string]string, how string) resolve.Override {
	return OverrideBy(kv, AllowDowngradeKey, how)
}

// OverrideBy is Override with the reason under key (AllowDowngradeKey,
// AllowEphemeralKey).
func OverrideBy(kv map[string]string, key, how string) resolve.Override {
	return resolve.Override{
		Downgrade:  strings.TrimSpace(kv[key]),
		Restore:    strings.TrimSpace(kv[RestoreKey]),
		How:        fmt.Sprintf(`%s %s: "<why>"`, how, key),
		HowRestore: fmt.Sprintf(`%s: "<the backup it restores from>"`, RestoreKey),
	}
}

// ErrUndecided wraps what kept a decision from being made (a host or a
// registry that failed, a lock entry that disagrees with its digest, the
// time budget spent): the servers apply their failure policy to it.
var ErrUndecided = errors.New("pin could not decide")

// Undecided wraps err as ErrUndecided.
func Undecided(err error) error { return fmt.Errorf("%w: %w", ErrUndecided, err) }
