package admit

import (
	"errors"
	"sync/atomic"

	"github.com/pin-tool/pin/internal/enforce"
)

// errNotReady is what a review gets before the catalogue and the lock
// are loaded: undecided, answered as the failure policy says.
var errNotReady = errors.New("the catalogue and the lock are not loaded yet")

// installed holds the Enforcer given by Install.
type installed struct {
	p atomic.Pointer[enforce.Enforcer]
}

// Install gives the server its catalogue and lock once loaded (when
// Enforcer was left nil): from then on it is ready and reviews. It may
// be called while the server serves.
func (s *Server) Install(e *enforce.Enforcer) { s.installed.p.Store(e) }

// enforcer is Enforcer, else what Install gave; nil before either.
func (s *Server) enforcer() *enforce.Enforcer {
	if s.Enforcer != nil {
		return s.Enforcer
	}
	return s.installed.p.Load()
}

// Ready reports whether the server can decide: its catalogue and lock
// are loaded. A replica that is not ready is kept out of the Service's
// endpoints by its readinessProbe (GET /readyz), so the API server never
// sends it a review it would only answer by its failure policy.
func (s *Server) Ready() error {
	e := s.enforcer()
	if e == nil || e.Catalogue == nil {
		return errNotReady
	}
	if e.Lock == nil {
		return errors.New("the lock is not loaded yet")
	}
	return nil
}
