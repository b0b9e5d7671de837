package host

import "fmt"

// Error is an error of a host adapter reading host Host. Its message
// names the host itself ("host h1 (unix:///…): …"), so that whoever
// reports it knows, by its type, not to name the host again.
type Error struct {
	Host string
	Err  error
}

// Errorf is an Error of host h, its message fmt.Errorf's (which must
// name the host).
func Errorf(h, format string, args ...any) error {
	return &Error{Host: h, Err: fmt.Errorf(format, args...)}
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ErrorSource is the source the message names: "host <name>".
func (e *Error) ErrorSource() string { return "host " + e.Host }

// ErrorSource is the source the message names: "host <name>", or ""
// when the host is not known.
func (e *SnapshotError) ErrorSource() string {
	if e.Host == "" {
		return ""
	}
	return "host " + e.Host
}
