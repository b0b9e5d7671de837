package observe

import (
	"errors"

	"github.com/pin-tool/pin/internal/image"
)

// SourceError is a host or registry that could not be read or answered
// wrongly. Source names it: "host mesh-1", "registry of repo".
type SourceError struct {
	Source string
	Err    error
}

// Error names the source, unless the error names it already: an error
// that says, by its ErrorSource method, that its message names this very
// source (a host adapter's host.Error and host.SnapshotError, a
// SourceError of the same source). The type says so, never the text.
func (e *SourceError) Error() string {
	var s sourced
	if errors.As(e.Err, &s) && s.ErrorSource() == e.Source {
		return e.Err.Error()
	}
	return e.Source + ": " + e.Err.Error()
}

// ErrorSource is the source the message names.
func (e *SourceError) ErrorSource() string { return e.Source }

// sourced is an error whose message names its source.
type sourced interface{ ErrorSource() string }

func (e *SourceError) Unwrap() error { return e.Err }

// Unreachable reports whether err means that a host or registry could not be
// read at all or answered wrongly: not when it answered that something does
// not exist (image.ErrNotFound), and not when it was not asked because the
// run is offline (image.ErrUnavailable).
func Unreachable(err error) bool {
	return err != nil && !errors.Is(err, image.ErrNotFound) && !errors.Is(err, image.ErrUnavailable)
}
