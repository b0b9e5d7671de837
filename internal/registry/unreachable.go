package registry

import (
	"context"
	"errors"
	"net"
	"os"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Unreachable reports whether err is a registry that did not answer at
// all: its name did not resolve, no connection was made, or the request
// timed out. A registry that answered, even with an error, was reached.
func Unreachable(err error) bool {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return false
	}
	var dns *net.DNSError
	var op *net.OpError
	return errors.As(err, &dns) || errors.As(err, &op) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)
}
