package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

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
	var ae *AuthError
	if errors.As(err, &ae) {
		return err
	}
	if terr.Request != nil && terr.Request.URL != nil && strings.HasPrefix(terr.Request.URL.Path, "/v2/") {
		if ae := authError(terr, terr.Request.URL.Host); ae != nil {
			return replaceErr(err, terr, ae)
		}
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

// AuthError is a refusal of pin's credentials, or of what they may read:
// an answer 401 or 403 of a registry or of its token server. It says what
// pin sent, and what to run so that pin has credentials the registry
// takes; it unwraps to go-containerregistry's *transport.Error.
type AuthError struct {
	// Registry is the registry's host[:port], as in image names.
	Registry string
	// TokenServer is the token server's URL (the challenge's realm) when
	// it refused; "" when the registry did.
	TokenServer string
	// Repository is the repository pin asked to read, when it is known.
	Repository string
	// Status is the HTTP status: 401 or 403.
	Status int
	creds  credState
	err    *transport.Error
}

// credState is what the session knows it sent.
type credState int

const (
	credsUnknown credState = iota
	credsNone              // the Docker config has no credentials for the registry
	credsBasic             // it has some, sent to the registry itself
	credsToken             // it has some, sent to the token server for the token sent
)

// credsKey is the context key under which the session leaves, on a
// refused request, the credState of what it sent.
type credsKey struct{}

// authError reads err as an AuthError for registry when it is an answer
// 401 or 403; nil otherwise.
func authError(err error, registry string) *AuthError {
	var terr *transport.Error
	if !errors.As(err, &terr) || (terr.StatusCode != http.StatusUnauthorized && terr.StatusCode != http.StatusForbidden) {
		return nil
	}
	ae := &AuthError{Registry: registry, Status: terr.StatusCode, err: terr}
	if r := terr.Request; r != nil {
		if r.URL != nil {
			ae.Repository = repoOfPath(r.URL.Path)
		}
		ae.creds, _ = r.Context().Value(credsKey{}).(credState)
	}
	return ae
}

// credentialsFrom says where pin reads credentials, as docs/reference.md does.
const credentialsFrom = "pin reads $DOCKER_CONFIG/config.json, else ~/.docker/config.json, then the auth.json podman login writes"

func (e *AuthError) Error() string {
	var b strings.Builder
	who := "registry " + e.Registry
	if e.TokenServer != "" {
		who = fmt.Sprintf("the token server %s of registry %s", redactURL(e.TokenServer), e.Registry)
	}
	repo := e.Repository
	if repo == "" {
		repo = "its repositories"
	}
	login := "docker login " + e.Registry
	helper := "or name a credential helper for it in the Docker config's \"credHelpers\""
	theirs := "the credentials the Docker config has for " + e.Registry
	switch {
	case e.creds == credsNone:
		fmt.Fprintf(&b, "%s asks for credentials to read %s, and the Docker config has none for %s: run %s, %s", who, repo, e.Registry, login, helper)
	case e.Status == http.StatusUnauthorized && (e.creds == credsBasic || (e.creds == credsToken && e.TokenServer != "")):
		fmt.Fprintf(&b, "%s refused %s: run %s again, or mend the credential helper the Docker config names for %s", who, theirs, login, e.Registry)
	case e.creds == credsBasic || e.creds == credsToken:
		// A token that does not cover the repository, or a 403: the
		// credentials are good, and may not read it (some registries say
		// the same of a repository that does not exist).
		fmt.Fprintf(&b, "%s does not let %s read %s (nor would it say whether %s exists): run %s as a user who may read it", who, theirs, repo, repo, login)
	default:
		fmt.Fprintf(&b, "%s asks for credentials to read %s, and the Docker config has none for it or ones it refuses: run %s, %s", who, repo, login, helper)
	}
	fmt.Fprintf(&b, " (%s); it answered %s", credentialsFrom, e.answer())
	return b.String()
}

// answer is what the server said: the request, the status and its
// errors' codes and messages (without their details, which repeat the
// request).
func (e *AuthError) answer() string {
	var b strings.Builder
	if r := e.err.Request; r != nil && r.URL != nil {
		fmt.Fprintf(&b, "%s %s: ", r.Method, redactURL(r.URL.String()))
	}
	fmt.Fprintf(&b, "HTTP %d %s", e.Status, http.StatusText(e.Status))
	for _, d := range e.err.Errors {
		fmt.Fprintf(&b, ": %s: %s", d.Code, d.Message)
	}
	return b.String()
}

func (e *AuthError) Unwrap() error { return e.err }

// replaceErr puts ae where terr was in err: err itself when it is terr,
// else err's words with terr's replaced by ae's, unwrapping to ae.
func replaceErr(err error, terr *transport.Error, ae *AuthError) error {
	if err == error(terr) {
		return ae
	}
	return replaced{msg: strings.Replace(err.Error(), terr.Error(), ae.Error(), 1), err: ae}
}

type replaced struct {
	msg string
	err error
}

func (e replaced) Error() string { return e.msg }
func (e replaced) Unwrap() error { return e.err }
