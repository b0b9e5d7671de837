package published

import (
	"errors"
	"fmt"
)

// Reason is why an observation was refused.
type Reason string

// Reasons an observation is refused.
const (
	// NotPublished: nothing at the place named (no file, no tag).
	NotPublished Reason = "nothing published"
	// Unsigned: no signature beside it.
	Unsigned Reason = "unsigned"
	// WrongSigner: signed, but by none of the trusted keys (or identity);
	// with a bare signature file, also content altered since signing.
	WrongSigner Reason = "not signed by a trusted key"
	// Tampered: the signature names other content (a signature copied
	// onto an altered observation), or is itself malformed.
	Tampered Reason = "tampered"
	// Malformed: signed, but not an observation pin reads.
	Malformed Reason = "malformed"
	// OtherHost: a valid observation of another host.
	OtherHost Reason = "observation of another host"
	// Future: read later than now, beyond ClockSkew.
	Future Reason = "read in the future"
	// TooOld: read longer ago than the host's maximum age.
	TooOld Reason = "too old"
	// RolledBack: read before an observation of the host this client
	// verified earlier (its cache remembers the newest).
	RolledBack Reason = "rolled back"
)

// ErrRefused marks every *Refusal.
var ErrRefused = errors.New("observation refused")

// Refusal is an observation that does not count, and why. Its host's
// modules are refused with it, never resolved as if the host ran nothing.
type Refusal struct {
	Host   string
	Where  string
	Reason Reason
	Detail string
}

func (r *Refusal) Error() string {
	s := fmt.Sprintf("host %s: observation %s refused: %s", r.Host, r.Where, r.Reason)
	if r.Detail != "" {
		s += " (" + r.Detail + ")"
	}
	return s
}

// Is makes every Refusal ErrRefused.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }
