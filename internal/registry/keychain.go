package registry

import (
	"context"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// quietKeychain keeps what a credential helper printed out of errors: the
// Docker CLI's helper client puts the helper's whole output in its error
// ("error getting credentials - err: exit status 1, out: `…`"), and a
// helper that fails after printing its answer prints the secret.
type quietKeychain struct{ next authn.Keychain }

func (k quietKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	return k.ResolveContext(context.Background(), r)
}

func (k quietKeychain) ResolveContext(ctx context.Context, r authn.Resource) (authn.Authenticator, error) {
	a, err := authn.Resolve(ctx, k.next, r)
	if err != nil {
		return nil, keychainError{err}
	}
	return a, nil
}

// keychainError is a keychain's error without the helper's output.
type keychainError struct{ err error }

func (e keychainError) Error() string {
	msg := e.err.Error()
	if i := strings.Index(msg, ", out: `"); i >= 0 {
		msg = msg[:i] + " (what the helper printed is not shown)"
	}
	return "reading credentials from the Docker config: " + msg
}

func (e keychainError) Unwrap() error { return e.err }
