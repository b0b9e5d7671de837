package forge

import (
	"fmt"
	"net/url"
	"strings"
)

// Remote is what a git remote's URL says of the repository behind it.
type Remote struct {
	// Web is the forge's address for an http(s) remote
	// ("https://gitea.example.org/"), "" for ssh and others.
	Web string
	// Owner and Name are the repository's last two path segments.
	Owner, Name string
}

// ParseRemote reads a git remote URL: https://host[/prefix]/owner/name(.git),
// ssh://[user@]host[:port]/owner/name(.git) or user@host:owner/name(.git).
// Credentials in the URL are left out of Web.
func ParseRemote(raw string) (Remote, error) {
	var path string
	var web string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return Remote{}, fmt.Errorf("remote %q: %w", redact(raw), err)
		}
		path = u.Path
		if u.Scheme == "http" || u.Scheme == "https" {
			segs := strings.Split(strings.Trim(path, "/"), "/")
			prefix := ""
			if len(segs) > 2 {
				prefix = strings.Join(segs[:len(segs)-2], "/") + "/"
			}
			web = u.Scheme + "://" + u.Host + "/" + prefix
		}
	case strings.Contains(raw, ":"):
		_, path, _ = strings.Cut(raw, ":")
	default:
		return Remote{}, fmt.Errorf("remote %q names no repository on a forge (a local path?): name it with --repository OWNER/NAME", redact(raw))
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) < 2 || segs[len(segs)-2] == "" || segs[len(segs)-1] == "" {
		return Remote{}, fmt.Errorf("remote %q has no OWNER/NAME path: name the repository with --repository OWNER/NAME", redact(raw))
	}
	return Remote{Web: web, Owner: segs[len(segs)-2], Name: strings.TrimSuffix(segs[len(segs)-1], ".git")}, nil
}

// redact leaves a URL's password out of messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}
