package observe

import (
	"errors"
	"strings"

	"github.com/pin-tool/pin/internal/image"
)

// SourceError is a host or registry that could not be read or answered
// wrongly. Source names it: "host mesh-1", "registry of repo".
type SourceError struct {
	Source string
	Err    error
}

// Error names the source, unless the error names it already: host
// adapters say "host h1 (unix:///…): …", "snapshot of host h1 (…): …".
func (e *SourceError) Error() string {
	msg := e.Err.Error()
	if strings.Contains(msg, e.Source+" ") || strings.Contains(msg, e.Source+":") {
		return msg
	}
	return e.Source + ": " + msg
}

func (e *SourceError) Unwrap() error { return e.Err }

// Unreachable reports whether err means that a host or registry could not be
// read at all or answered wrongly: not when it answered that something does
// not exist (image.ErrNotFound), and not when it was not asked because the
// run is offline (image.ErrUnavailable).
func Unreachable(err error) bool {
	return err != nil && !errors.Is(err, image.ErrNotFound) && !errors.Is(err, image.ErrUnavailable)
}
