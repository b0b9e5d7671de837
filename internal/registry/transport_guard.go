package registry

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// isLoopback reports whether host[:port] is localhost or a loopback address.
func isLoopback(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// guard refuses plain http except to loopback hosts, and to the registry
// asked when it is insecure. go-containerregistry alone falls back to http
// for private addresses (10/8, 172.16/12, 192.168/16) too.
type guard struct {
	next       http.RoundTripper
	host       string // host[:port] of the registry asked
	allowHTTP  bool
	tokenHosts []string
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !isLoopback(req.URL.Host) && !(g.allowHTTP && req.URL.Host == g.host) {
		return nil, fmt.Errorf("plain http to %s refused: the registry is not marked insecure", req.URL.Host)
	}
	// The last line of defence for credentials: a user name and password
	// go to the registry, or to its token server when realmAllowed says
	// so, and nowhere else (screen refuses such a realm earlier, with a
	// better message).
	if scheme, _, _ := strings.Cut(req.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "basic") && !realmAllowed(req.URL, g.host, g.tokenHosts) {
		return nil, fmt.Errorf("sending the credentials of %s to %s refused: %w", g.host, req.URL.Host, ErrRefused)
	}
	// pin only reads: the one request with a body is an OAuth2 token
	// request, whose body holds a refresh token or a password. It goes
	// where credentials may go, redirected or not.
	if req.Method != http.MethodGet && req.Method != http.MethodHead && !realmAllowed(req.URL, g.host, g.tokenHosts) {
		return nil, fmt.Errorf("%s %s refused: only the registry and its token server get more than a GET: %w", req.Method, req.URL.Host, ErrRefused)
	}
	return g.next.RoundTrip(req)
}

// realmAllowed reports whether credentials for the registry at regHost
// (host[:port], as asked) may be sent to u, the realm of a
// WWW-Authenticate challenge: u is on the registry's own host and port, or
// u is https on a host of the registry's parent domain (its host without
// the first label: index.docker.io may send them to auth.docker.io,
// registry.gitlab.com to gitlab.com). An IP address, localhost, a name of
// fewer than three labels, and a parent that looks like a public suffix
// (two labels, a two-letter country code under a label of three letters or
// fewer: co.uk, com.au) have no parent domain: only their own host may
// have their credentials.
//
// Beyond these, u may be on one of tokenHosts (host or host:port, from the
// catalogue's token_hosts), over https or on loopback.
//
// go-containerregistry, left alone, sends them to any https realm that is
// not a private address. The Public Suffix List would draw the line more
// exactly; pin does without it, and errs on the side of refusing.
func realmAllowed(u *url.URL, regHost string, tokenHosts []string) bool {
	if strings.EqualFold(withPort(u.Host, u.Scheme), withPort(regHost, u.Scheme)) {
		return true
	}
	for _, h := range tokenHosts {
		if (u.Scheme == "https" || isLoopback(u.Host)) && strings.EqualFold(withPort(u.Host, u.Scheme), withPort(h, u.Scheme)) {
			return true
		}
	}
	if u.Scheme != "https" {
		return false
	}
	parent := parentDomain(hostOnly(regHost))
	h := strings.ToLower(u.Hostname())
	return parent != "" && (h == parent || strings.HasSuffix(h, "."+parent))
}

// parentDomain is host without its first label, or "" when host has no
// parent domain that may be trusted with its credentials.
func parentDomain(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if net.ParseIP(host) != nil || isLoopback(host) {
		return ""
	}
	labels := strings.Split(host, ".")
	if len(labels) < 3 {
		return ""
	}
	parent := labels[1:]
	if len(parent) == 2 && len(parent[1]) == 2 && len(parent[0]) <= 3 {
		return "" // co.uk, com.au, org.br: a public suffix, not a domain
	}
	return strings.Join(parent, ".")
}

// hostOnly strips the port of host[:port].
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// withPort adds the scheme's default port to host when it has none.
func withPort(host, scheme string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "443"
	if scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}
