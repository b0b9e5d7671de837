package registry

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/types"
)

// screen checks each answer before go-containerregistry reads it:
//
//   - a 401 whose WWW-Authenticate challenge names a token server (realm)
//     that realmAllowed refuses is an error, so that no credentials are sent
//     there;
//   - a tag list whose Link header points to another host or scheme is an
//     error;
//   - a manifest or blob GET answered 200 is read here, bounded by
//     maxManifestSize or maxConfigSize (refused at once when Content-Length
//     is larger), and checked against the digest in its URL and the
//     Docker-Content-Digest header; a body cut short is io.ErrUnexpectedEOF,
//     which retrying retries;
//   - the body of an error answer loses the credentials the request
//     carried, should the registry echo them.
//
// host is the registry asked (host[:port]).
type screen struct {
	next       http.RoundTripper
	host       string
	tokenHosts []string
}

func (s *screen) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*http.Response, error) {
		resp.Body.Close() // unread: the connection is dropped, not drained
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		if err := s.checkChallenge(resp); err != nil {
			return fail(err)
		}
	case resp.StatusCode == http.StatusOK && strings.HasSuffix(req.URL.Path, "/tags/list"):
		if err := checkLink(req, resp); err != nil {
			return fail(err)
		}
	case resp.StatusCode == http.StatusOK && req.Method == http.MethodGet && (strings.Contains(req.URL.Path, "/manifests/") || strings.Contains(req.URL.Path, "/blobs/")):
		if err := readChecked(req, resp); err != nil {
			return fail(err)
		}
	}
	if resp.StatusCode >= 400 {
		redactBody(req, resp)
	}
	return resp, nil
}

// checkChallenge refuses a Bearer challenge whose realm may not have the
// registry's credentials. Basic challenges have no realm URL.
func (s *screen) checkChallenge(resp *http.Response) error {
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		scheme, params, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "bearer") {
			continue
		}
		realm := challengeParam(params, "realm")
		u, err := url.Parse(realm)
		if err != nil || u.Host == "" {
			return fmt.Errorf("%s asks to authenticate at %q, not a URL: %w", s.host, realm, ErrRefused)
		}
		if !realmAllowed(u, s.host, s.tokenHosts) {
			return fmt.Errorf("%s asks to authenticate at %s, which is not on its host: credentials are not sent there; if that is the registry's own token server, add token_hosts = [%q] to the catalogue's registry block: %w", s.host, redactURL(realm), u.Host, ErrRefused)
		}
	}
	return nil
}

// challengeParam finds key="value" (or key=value) in a challenge's
// parameters.
func challengeParam(params, key string) string {
	for params != "" {
		params = strings.TrimLeft(params, " ,")
		k, rest, ok := strings.Cut(params, "=")
		if !ok {
			return ""
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				v, rest = rest[1:], ""
			} else {
				v, rest = rest[1:1+end], rest[2+end:]
			}
		} else {
			v, rest, _ = strings.Cut(rest, ",")
		}
		if strings.EqualFold(strings.TrimSpace(k), key) {
			return v
		}
		params = rest
	}
	return ""
}

// checkLink refuses a tag list whose next page is on another host or
// scheme.
func checkLink(req *http.Request, resp *http.Response) error {
	link := resp.Header.Get("Link")
	if link == "" {
		return nil
	}
	start, end := strings.Index(link, "<"), strings.Index(link, ">")
	if start != 0 || end < 0 {
		return nil // go-containerregistry says what is wrong with it
	}
	next, err := url.Parse(link[1:end])
	if err != nil {
		return nil
	}
	next = req.URL.ResolveReference(next)
	if next.Host != req.URL.Host || next.Scheme != req.URL.Scheme {
		return fmt.Errorf("the Link header of %s points to %s, another host: not followed: %w", req.URL.Host, redactURL(next.String()), ErrRefused)
	}
	return nil
}

// readChecked reads a manifest or blob answer into memory, bounded, and
// checks it against the digests the request and the answer name.
func readChecked(req *http.Request, resp *http.Response) error {
	what, limit := "manifest", int64(maxManifestSize)
	if strings.Contains(req.URL.Path, "/blobs/") {
		what, limit = "blob", int64(maxConfigSize)
	}
	if resp.ContentLength > limit {
		return fmt.Errorf("%s %s is %s, more than the %s pin reads: %w", what, urlRef(req.URL), sizeText(resp.ContentLength), sizeText(limit), ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	resp.Body.Close()
	if err != nil {
		return err // a cut body is io.ErrUnexpectedEOF: retried
	}
	if int64(len(b)) > limit {
		return fmt.Errorf("%s %s is more than the %s pin reads: %w", what, urlRef(req.URL), sizeText(limit), ErrTooLarge)
	}
	// The digest asked for, then the one the registry states. A schema 1
	// manifest's stated digest is of its signed form; pin refuses those
	// anyway, later and more clearly.
	if _, ref, ok := strings.Cut(req.URL.Path, "/"+what+"s/"); ok && strings.HasPrefix(ref, "sha256:") {
		if err := verify(b, ref); err != nil {
			return fmt.Errorf("%s %s: %w", what, urlRef(req.URL), err)
		}
	}
	if stated := resp.Header.Get("Docker-Content-Digest"); strings.HasPrefix(stated, "sha256:") &&
		!strings.HasPrefix(resp.Header.Get("Content-Type"), string(types.DockerManifestSchema1)) {
		if got := digestOf(b); got != stated {
			return fmt.Errorf("%s %s: the registry says it is %s, its content is %s: %w", what, urlRef(req.URL), stated, got, ErrDigestMismatch)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return nil
}

// redactBody cuts the credentials the request carried out of an error
// answer's body (at most 64 KiB of it is kept; error bodies are small).
func redactBody(req *http.Request, resp *http.Response) {
	secrets := credentials(req.Header.Get("Authorization"))
	if len(secrets) == 0 {
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	s := string(b)
	for _, secret := range secrets {
		s = strings.ReplaceAll(s, secret, "<redacted>")
	}
	resp.Body = io.NopCloser(strings.NewReader(s))
	resp.ContentLength = int64(len(s))
}

// credentials are the secrets in an Authorization header value: the value,
// its credentials part, and for Basic the decoded "user:password" and the
// password, longest first.
func credentials(auth string) []string {
	if auth == "" {
		return nil
	}
	out := []string{auth}
	scheme, cred, ok := strings.Cut(auth, " ")
	if !ok || cred == "" {
		return out
	}
	out = append(out, cred)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
			out = append(out, string(dec))
			if _, pass, ok := strings.Cut(string(dec), ":"); ok && len(pass) >= 4 {
				out = append(out, pass)
			}
		}
	}
	return out
}

// urlRef names what a manifest or blob URL asks for: "repo:tag" or
// "repo@digest", on its host.
func urlRef(u *url.URL) string {
	p := strings.TrimPrefix(u.Path, "/v2/")
	for _, kind := range []string{"/manifests/", "/blobs/"} {
		if repo, ref, ok := strings.Cut(p, kind); ok {
			return reference(u.Host+"/"+repo, ref)
		}
	}
	return u.Host + u.Path
}

// redactURL drops a URL's user information and query (tokens travel in
// either).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unreadable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}

// sizeText renders a byte count for people: "4 MiB", "5000000 bytes".
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
