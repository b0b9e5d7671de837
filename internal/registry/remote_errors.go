package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/pin-tool/pin/internal/image"
)

// classify marks a registry's 404 as image.ErrNotFound, keeping its error, and
// names the HTTP status of an error answer whose message does not (an OCI
// error body: "UNKNOWN: …" alone does not say it was a 503).
func classify(err error) error {
	var terr *transport.Error
	if !errors.As(err, &terr) {
		return err
	}
	if len(terr.Errors) > 0 {
		err = withStatus{err: err, code: terr.StatusCode}
	}
	if terr.StatusCode == http.StatusNotFound {
		return notFound{err}
	}
	return err
}

// withStatus adds the HTTP status to a registry's error.
type withStatus struct {
	err  error
	code int
}

func (e withStatus) Error() string {
	return fmt.Sprintf("%s (HTTP %d %s)", e.err, e.code, http.StatusText(e.code))
}
func (e withStatus) Unwrap() error { return e.err }

// unusableHead reports whether a HEAD failed after the registry answered
// it successfully (go-containerregistry's errors for a missing
// Docker-Content-Digest, Content-Type or Content-Length), or was refused
// as a method: then a GET can still answer. An error status, a network
// error or a cancelled context is not worth a GET after it.
func unusableHead(err error) bool {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return terr.StatusCode == http.StatusMethodNotAllowed || terr.StatusCode == http.StatusNotImplemented
	}
	var uerr *url.Error
	return !errors.As(err, &uerr) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// notFound reads as the registry's error and matches image.ErrNotFound.
type notFound struct{ err error }

func (e notFound) Error() string   { return e.err.Error() }
func (e notFound) Unwrap() []error { return []error{e.err, image.ErrNotFound} }
