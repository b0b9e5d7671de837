package resolve

import (
	"context"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// Foreign is an entry of another lock: Lock names that lock's file, for
// sentences.
type Foreign struct {
	Lock  string
	Entry *lock.Module
}

// Registry is what deciding needs of a registry (or a mirror of one).
type Registry interface {
	// Tags lists the repository's tags.
	Tags(ctx context.Context, repo string) ([]string, error)
	// Image describes repo:ref, ref being a tag or a "sha256:" digest, with
	// an index resolved to platform.
	Image(ctx context.Context, repo, ref, platform string) (image.Image, error)
}

// Mode is what a run records.
type Mode int

const (
	// ModeResolve decides every module against every host ("pin resolve").
	ModeResolve Mode = iota
	// ModeFromHost records what one host runs ("pin lock --from-host"):
	// Input.Record.Host is the host read. Modules that take over nothing on it keep
	// their entry; the others keep every floor the previous lock recorded
	// for the hosts not read, and track-upstream weighs what runs against
	// the previous entry instead of upstream tags.
	ModeFromHost
)

// Input is everything one run reads.
type Input struct {
	Catalogue *catalogue.Catalogue
	Old       *lock.Lock
	Observed  observe.Observed
	// Record is what the run knows besides what the hosts answered: the
	// hosts not read and why, the one host asked alone, other locks
	// held against its hosts (see Record).
	Record Record
	// Registry returns the source to ask for a repository, or nil when none
	// may be asked (offline, no mirror).
	Registry func(repo string) Registry
	// Verifier returns the verifier of module m's verify policy, bound to
	// m's registry (internal/source builds it); nil, or a nil Verifier,
	// when no registry may be asked for signatures: a module with a
	// verify policy then cannot verify, and says so.
	Verifier func(m *catalogue.Module) (Verifier, error)
	// Now bounds plausible build dates.
	Now  time.Time
	Mode Mode
	// Progress, when not nil, is called by Resolve after each module it
	// decides, with the number done and the number to decide, never
	// concurrently. Outdated takes its own.
	Progress func(done, total int)
	// ModulesAtOnce bounds how many modules Resolve and Outdated decide at
	// once; zero means DefaultModulesAtOnce. Enough to keep every registry
	// busy is enough: each module decided at once holds its state (tag
	// list, responses, images) until it is done.
	ModulesAtOnce int

	// heirs indexes Old's entries by what they were held against; made
	// once by Resolve and Outdated (see takeover.go).
	heirs *heirs
}

// registry is the source for module m's repository, or nil.
func (in Input) registry(m *catalogue.Module) Registry {
	if in.Registry == nil {
		return nil
	}
	return in.Registry(m.Image)
}
