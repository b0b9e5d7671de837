package propose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/forge"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/internal/version"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// The OCI labels that say where an image's software came from.
const (
	labelSource        = "org.opencontainers.image.source"
	labelRevision      = "org.opencontainers.image.revision"
	labelVersion       = "org.opencontainers.image.version"
	labelURL           = "org.opencontainers.image.url"
	labelDocumentation = "org.opencontainers.image.documentation"
)

// Bounds of the release notes a body holds.
const (
	// notesPerRelease is the most of one release's notes shown.
	notesPerRelease = 2000
	// notesInAll is the most of all releases' notes shown, and
	// releasesShown the most releases.
	notesInAll    = 16000
	releasesShown = 12
)

// Upstream is what changed in a module's software between the two
// images, as their labels claim it, with the release notes of the forge
// pin proposes to where the source is there.
type Upstream struct {
	// From is what the old image's labels say (nil: a module added); To
	// the new image's.
	From *Labels `json:"from"`
	To   Labels  `json:"to"`
	// Source is the repository's page, from To's source label, when its
	// forge's URL shape is known; Compare its page comparing the two
	// images' revisions (CompareBy "revision") or versions as tags
	// (CompareBy "version"); "" when there is none.
	Source    string `json:"source"`
	Compare   string `json:"compare"`
	CompareBy string `json:"compare_by"`
	// ReleasesFrom names the releases read ("OWNER/NAME on
	// https://forge/"), "" when none were: the source is on another host,
	// or no forge API was given.
	ReleasesFrom string    `json:"releases_from"`
	Releases     []Release `json:"releases"`
	// More is the page of every release, when Releases leaves some out
	// or cuts their notes.
	More string `json:"more"`
	// Problem says what could not be read, "" when nothing.
	Problem string `json:"problem"`
}

// Labels are an image's labels that say where it came from.
type Labels struct {
	Source        string `json:"source"`
	Revision      string `json:"revision"`
	Version       string `json:"version"`
	URL           string `json:"url"`
	Documentation string `json:"documentation"`
}

// empty reports whether l says nothing of where the image came from
// (a version alone is in the table already).
func (l Labels) empty() bool {
	return l.Source == "" && l.Revision == "" && l.URL == "" && l.Documentation == ""
}

// Release is a release between the two versions, newest first.
type Release struct {
	Tag  string `json:"tag"`
	Name string `json:"name"`
	URL  string `json:"url"`
	// Notes are its notes as its authors wrote them, cut to fit; Cut says
	// they were.
	Notes string `json:"notes"`
	Cut   bool   `json:"cut"`
}

// Releases reads the releases of repositories on the forge pin proposes
// to (packages forge/gitea and forge/github). No other host is asked.
type Releases interface {
	// Web is the forge's address ("https://gitea.example.org/").
	Web() string
	// Kind is forge.KindGitea or forge.KindGitHub.
	Kind() string
	Releases(ctx context.Context, owner, repo string) ([]forge.Release, error)
}

// blobReader is a registry that serves blobs by digest: an image's
// config holds every label, where resolve.Registry's Image keeps only
// those ordering reads.
type blobReader interface {
	Blob(ctx context.Context, repo, digest string) ([]byte, error)
}

var (
	_ blobReader = (*registry.Remote)(nil)
	_ blobReader = registry.Offline{}
	_ blobReader = (*registry.Layout)(nil)
)

// upstream fills in what changed upstream for each of mods that has a
// new image, reading the images' configs (by digest: cached) from the
// registries of in, and release notes from d.Releases.
func (r *run) upstream(ctx context.Context, in *source.Inputs, plan *resolve.Plan, mods []Module) {
	entries := map[string]*resolve.Decision{}
	for _, d := range plan.Decisions {
		entries[d.Module.Name] = d
	}
	for i := range mods {
		d := entries[mods[i].Name]
		if d == nil || d.New() == nil {
			continue
		}
		mods[i].Upstream = r.upstreamOf(ctx, in, d.Module, d.Old, d.New())
	}
}

// upstreamOf is what changed upstream from old (nil: none) to new, or
// nil when neither image says anything of where it came from.
func (r *run) upstreamOf(ctx context.Context, in *source.Inputs, m *catalogue.Module, old, new *lock.Module) *Upstream {
	u := &Upstream{Releases: []Release{}}
	var problems []string
	to, err := imageLabels(ctx, in, new, m.Platform())
	if err != nil {
		problems = append(problems, fmt.Sprintf("the labels of %s: %v", new.Ref(), err))
	}
	u.To = to
	if old != nil && old.Digest != "" {
		from, err := imageLabels(ctx, in, old, m.Platform())
		if err != nil {
			problems = append(problems, fmt.Sprintf("the labels of %s: %v", old.Ref(), err))
		}
		u.From = &from
	}
	if u.To.empty() && (u.From == nil || u.From.empty()) && len(problems) == 0 {
		return nil
	}
	fromVersion, toVersion := "", new.Version
	if u.To.Version != "" {
		toVersion = u.To.Version
	}
	if old != nil {
		fromVersion = old.Version
		if u.From != nil && u.From.Version != "" {
			fromVersion = u.From.Version
		}
	}
	known := map[string]string{}
	if r.d.Releases != nil {
		known[r.d.Releases.Web()] = r.d.Releases.Kind()
	}
	src, ok := forge.ParseSource(u.To.Source, known)
	if ok {
		u.Source = src.Web()
	}
	moved := u.moved()
	if ok && !moved {
		// Release notes only from the forge pin proposes to: a source
		// anywhere else is a link, never a request. Outside the
		// schedule, no forge is asked anything.
		if r.d.Releases != nil && src.Base == strings.TrimSuffix(r.d.Releases.Web(), "/")+"/" && r.outside() == nil {
			rels, err := r.releases(ctx, src)
			if err != nil {
				problems = append(problems, fmt.Sprintf("the releases of %s/%s: %v", src.Owner, src.Name, err))
			} else {
				u.ReleasesFrom = src.Owner + "/" + src.Name + " on " + src.Base
				picked := between(rels, m.Versioning, fromVersion, toVersion)
				u.Releases, u.More = cutReleases(picked, src.Releases())
			}
		}
		switch {
		case u.From != nil && u.From.Revision != "" && u.To.Revision != "" && u.From.Revision != u.To.Revision:
			u.Compare, u.CompareBy = src.Compare(u.From.Revision, u.To.Revision), "revision"
		case old != nil && fromVersion != "" && toVersion != "" && fromVersion != toVersion:
			u.Compare, u.CompareBy = src.Compare(r.tagOf(src, fromVersion), r.tagOf(src, toVersion)), "version"
		}
	}
	u.Problem = strings.Join(problems, "; ")
	return u
}

// moved reports whether the two images name different sources (".git"
// and a trailing "/" aside).
func (u *Upstream) moved() bool {
	if u.From == nil || u.From.Source == "" || u.To.Source == "" {
		return false
	}
	key := func(s string) string {
		return strings.ToLower(strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(s), "/"), ".git"))
	}
	return key(u.From.Source) != key(u.To.Source)
}

// releases lists src's releases once per run.
func (r *run) releases(ctx context.Context, src forge.Source) ([]forge.Release, error) {
	key := src.Web()
	if got, ok := r.released[key]; ok {
		return got.rels, got.err
	}
	rels, err := r.d.Releases.Releases(ctx, src.Owner, src.Name)
	if r.released == nil {
		r.released = map[string]releasesRead{}
	}
	r.released[key] = releasesRead{rels, err}
	return rels, err
}

type releasesRead struct {
	rels []forge.Release
	err  error
}

// tagOf is the tag of src's release of version v, when one was read
// (1.2.3 may be tagged v1.2.3), else v.
func (r *run) tagOf(src forge.Source, v string) string {
	for _, rel := range r.released[src.Web()].rels {
		if rel.Tag == v || rel.Tag == "v"+v {
			return rel.Tag
		}
	}
	return v
}

// imageLabels reads the labels of entry's image: its config's, by digest.
func imageLabels(ctx context.Context, in *source.Inputs, entry *lock.Module, platform string) (Labels, error) {
	if in == nil || in.Registries == nil || entry.Digest == "" {
		return Labels{}, errors.New("no registry to read it from")
	}
	reg := in.Registries.For(entry.Image)
	blobs, ok := reg.(blobReader)
	if reg == nil || !ok {
		return Labels{}, errors.New("no registry to read it from")
	}
	img, err := reg.Image(ctx, entry.Image, entry.Digest, platform)
	if err != nil {
		return Labels{}, err
	}
	b, err := blobs.Blob(ctx, entry.Image, img.ConfigDigest)
	if err != nil {
		return Labels{}, err
	}
	var cf struct {
		Config struct {
			Labels map[string]string `json:"Labels"`
		} `json:"config"`
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		return Labels{}, fmt.Errorf("config %s: %w", img.ConfigDigest, err)
	}
	l := cf.Config.Labels
	return Labels{Source: l[labelSource], Revision: l[labelRevision], Version: l[labelVersion], URL: l[labelURL], Documentation: l[labelDocumentation]}, nil
}

// between are the releases after from up to to under scheme, newest
// first; drafts never. With no from (or one that is not a version), the
// release of to alone.
func between(rels []forge.Release, scheme version.Scheme, from, to string) []forge.Release {
	tv, ok := scheme.Parse(to)
	if !ok {
		return nil
	}
	fv, haveFrom := scheme.Parse(from)
	type rv struct {
		r forge.Release
		v version.Version
	}
	var out []rv
	for _, rel := range rels {
		v, ok := scheme.Parse(rel.Tag)
		if !ok || rel.Draft || version.Compare(v, tv) > 0 {
			continue
		}
		if haveFrom && version.Compare(v, fv) <= 0 || !haveFrom && version.Compare(v, tv) != 0 {
			continue
		}
		if rel.Prerelease && !tv.Prerelease() {
			continue
		}
		out = append(out, rv{rel, v})
	}
	slices.SortStableFunc(out, func(a, b rv) int {
		if c := version.Compare(b.v, a.v); c != 0 {
			return c
		}
		return strings.Compare(a.r.Tag, b.r.Tag)
	})
	res := make([]forge.Release, 0, len(out))
	for _, x := range out {
		res = append(res, x.r)
	}
	return res
}

// cutReleases cuts rels to what a body holds: at most releasesShown, each
// one's notes to notesPerRelease, and all of them to notesInAll. more is
// the page of every release when anything was left out or cut.
func cutReleases(rels []forge.Release, page string) (out []Release, more string) {
	out = []Release{}
	left := notesInAll
	for i, rel := range rels {
		if i == releasesShown || left <= 0 {
			return out, page
		}
		notes := strings.TrimSpace(strings.ReplaceAll(rel.Notes, "\r\n", "\n"))
		x := Release{Tag: rel.Tag, Name: rel.Name, URL: rel.URL}
		x.Notes, x.Cut = cutText(notes, min(notesPerRelease, left))
		left -= len(x.Notes)
		if x.Cut {
			more = page
		}
		out = append(out, x)
	}
	return out, more
}

// cutText is s up to n bytes, cut at a line break in its second half if
// there is one, never inside a character.
func cutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], '\n'); i > n/2 {
		cut = i
	}
	return strings.TrimSpace(s[:cut]), true
}
