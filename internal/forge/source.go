package forge

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Kinds of forge whose URL shapes pin knows.
const (
	KindGitHub = "github"
	KindGitea  = "gitea" // Gitea and Forgejo
	KindGitLab = "gitlab"
)

// publicForges are the public forges whose kind a host names.
var publicForges = map[string]string{
	"github.com":   KindGitHub,
	"gitlab.com":   KindGitLab,
	"codeberg.org": KindGitea,
	"gitea.com":    KindGitea,
}

// Source is a repository on a forge, as an image's source label names it.
type Source struct {
	// Base is the forge's address ("https://github.com/"), as Remote.Web.
	Base string
	// Owner is the owner (on GitLab, the group path); Name the project.
	Owner, Name string
	// Kind is KindGitHub, KindGitea or KindGitLab.
	Kind string
}

// Web is the repository's page.
func (s Source) Web() string { return s.Base + s.Owner + "/" + s.Name }

// Compare is the forge's page comparing two revisions or tags.
func (s Source) Compare(from, to string) string {
	sep := "/compare/"
	if s.Kind == KindGitLab {
		sep = "/-/compare/"
	}
	return s.Web() + sep + url.PathEscape(from) + "..." + url.PathEscape(to)
}

// Releases is the forge's page of the repository's releases.
func (s Source) Releases() string {
	if s.Kind == KindGitLab {
		return s.Web() + "/-/releases"
	}
	return s.Web() + "/releases"
}

// ParseSource reads an http(s) repository URL ("https://github.com/o/r",
// with or without ".git", a trailing path such as "/tree/main" left out)
// on a forge whose URL shape is known: a public one (github.com,
// gitlab.com, codeberg.org, gitea.com), or one of known, which maps a
// forge's address (as Remote.Web gives it: "https://git.example.org/")
// to its kind. It reports false for anything else.
func ParseSource(raw string, known map[string]string) (Source, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return Source{}, false
	}
	path := strings.Trim(u.Path, "/")
	var s Source
	// The longest address first: a forge at a sub-path beside another.
	bases := slices.Sorted(maps.Keys(known))
	slices.Reverse(bases)
	for _, base := range bases {
		kind := known[base]
		b, err := url.Parse(base)
		if err != nil || !strings.EqualFold(b.Scheme, u.Scheme) || !strings.EqualFold(b.Host, u.Host) {
			continue
		}
		prefix := strings.Trim(b.Path, "/")
		if prefix != "" {
			if path != prefix && !strings.HasPrefix(path, prefix+"/") {
				continue
			}
			path = strings.Trim(strings.TrimPrefix(path, prefix), "/")
		}
		s = Source{Base: strings.TrimSuffix(base, "/") + "/", Kind: kind}
		break
	}
	if s.Kind == "" {
		kind, ok := publicForges[strings.ToLower(u.Hostname())]
		if !ok || u.Port() != "" {
			return Source{}, false
		}
		s = Source{Base: u.Scheme + "://" + strings.ToLower(u.Host) + "/", Kind: kind}
	}
	segs := strings.Split(path, "/")
	if s.Kind == KindGitLab {
		// A project's path ends where GitLab's "/-/" pages begin.
		for i, seg := range segs {
			if seg == "-" {
				segs = segs[:i]
				break
			}
		}
	} else if len(segs) > 2 {
		segs = segs[:2]
	}
	if len(segs) < 2 {
		return Source{}, false
	}
	for _, seg := range segs {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, " \t<>\"'`()[]|") {
			return Source{}, false
		}
	}
	s.Owner = strings.Join(segs[:len(segs)-1], "/")
	s.Name = strings.TrimSuffix(segs[len(segs)-1], ".git")
	if s.Name == "" {
		return Source{}, false
	}
	return s, true
}
