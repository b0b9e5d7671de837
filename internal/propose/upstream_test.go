package propose

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/forge"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
)

// fakeReleases is the forge pin proposes to, in memory: a seam pin owns
// (Releases). It records which repositories were asked for.
type fakeReleases struct {
	web   string
	rels  map[string][]forge.Release
	asked []string
}

func (f *fakeReleases) Web() string  { return f.web }
func (f *fakeReleases) Kind() string { return forge.KindGitea }
func (f *fakeReleases) Releases(_ context.Context, owner, repo string) ([]forge.Release, error) {
	f.asked = append(f.asked, owner+"/"+repo)
	return f.rels[owner+"/"+repo], nil
}

// labelled writes an image with labels into the layout at dir and
// returns its digest.
func labelled(t *testing.T, dir string, labels map[string]string) string {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			t.Fatal(err)
		}
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64", Config: v1.Config{Labels: labels}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d.String()
}

// upstreamWorld is a catalogue whose registry is a layout mirror.
func upstreamWorld(t *testing.T) (dir string, in *source.Inputs, m *catalogue.Module) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "layout")
	labelled(t, dir, nil)
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: []byte(`
registry "registry.example.org" {
  mirror = "` + dir + `"
}
module "app" {
  image  = "registry.example.org/acme/app"
  policy = "track-upstream"
  tag    = "latest"
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return dir, &source.Inputs{Catalogue: cat, Registries: source.NewRegistries(cat, source.Options{Offline: true, CacheDir: t.TempDir()})}, cat.Modules[0]
}

func entry(digest, version string) *lock.Module {
	return &lock.Module{Name: "app", Image: "registry.example.org/acme/app", Digest: digest, Version: version}
}

// What changed upstream, from the images' own labels: a compare link of
// the two revisions, and, the source being on the forge pin proposes
// to, the notes of the releases after the old version up to the new one
// (no draft, no pre-release, newest first), cut to fit with a link to
// the rest.
func TestUpstreamOnTheForge(t *testing.T) {
	dir, in, m := upstreamWorld(t)
	from := labelled(t, dir, map[string]string{labelSource: "https://git.example.org/acme/app", labelRevision: strings.Repeat("a", 40), labelVersion: "1.0.0"})
	to := labelled(t, dir, map[string]string{labelSource: "https://git.example.org/acme/app.git", labelRevision: strings.Repeat("b", 40), labelVersion: "1.2.0",
		labelDocumentation: "https://docs.example.org/app"})
	long := strings.Repeat("a line of notes\n", 200)
	rels := &fakeReleases{web: "https://git.example.org", rels: map[string][]forge.Release{"acme/app": {
		{Tag: "v1.3.0", Notes: "later"},
		{Tag: "v1.2.0", Name: "Two", Notes: long, URL: "https://git.example.org/acme/app/releases/tag/v1.2.0"},
		{Tag: "v1.1.5", Notes: "a draft", Draft: true},
		{Tag: "v1.1.0", Notes: "fixed", URL: "https://git.example.org/acme/app/releases/tag/v1.1.0"},
		{Tag: "v1.1.0-rc.1", Notes: "a pre-release", Prerelease: true},
		{Tag: "v1.0.0", Notes: "the old one"},
	}}}
	r := &run{d: Deps{Releases: rels}}
	u := r.upstreamOf(context.Background(), in, m, entry(from, "1.0.0"), entry(to, "1.2.0"))
	if u == nil {
		t.Fatal("nothing upstream")
	}
	if u.Problem != "" || u.Source != "https://git.example.org/acme/app" || u.CompareBy != "revision" ||
		u.Compare != "https://git.example.org/acme/app/compare/"+strings.Repeat("a", 40)+"..."+strings.Repeat("b", 40) {
		t.Errorf("upstream %+v", u)
	}
	var tags []string
	for _, x := range u.Releases {
		tags = append(tags, x.Tag)
	}
	if diff := cmp.Diff([]string{"v1.2.0", "v1.1.0"}, tags); diff != "" {
		t.Errorf("releases (-want +got):\n%s", diff)
	}
	if !u.Releases[0].Cut || len(u.Releases[0].Notes) > notesPerRelease || u.Releases[1].Cut || u.Releases[1].Notes != "fixed" ||
		u.More != "https://git.example.org/acme/app/releases" || u.ReleasesFrom != "acme/app on https://git.example.org/" {
		t.Errorf("cut %v (%d bytes), more %q, from %q", u.Releases[0].Cut, len(u.Releases[0].Notes), u.More, u.ReleasesFrom)
	}
	if diff := cmp.Diff([]string{"acme/app"}, rels.asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}

	// In the body: where each line came from, the notes quoted.
	p := &Proposal{Group: "default", Base: "main", Lock: "sha256:x", Title: "t", Modules: []Module{{Name: "app", From: &Image{Version: "1.0.0"}, To: &Image{Version: "1.2.0"}, Upstream: u}}}
	_, _, body, err := message(p, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"### What changed upstream\n\nFrom the images' labels (`org.opencontainers.image.*`): their builders' claims, shown as they are, checked against nothing.\n",
		"- source: [https\\:\\/\\/git\\.example\\.org\\/acme\\/app\\.git](https://git.example.org/acme/app.git) (label `source` of the new image)\n",
		"- compare: [aaaaaaaaaaaa\\.\\.\\.bbbbbbbbbbbb](https://git.example.org/acme/app/compare/" + strings.Repeat("a", 40) + "..." + strings.Repeat("b", 40) + ") (the `revision` labels of the old and new images)\n",
		"- version: 1\\.0\\.0 → 1\\.2\\.0 (the `version` labels)\n",
		"- documentation: [https\\:\\/\\/docs\\.example\\.org\\/app](https://docs.example.org/app) (label `documentation` of the new image)\n",
		"- release notes of 2 release(s), from the releases of acme\\/app on https\\:\\/\\/git\\.example\\.org\\/ (the forge pin proposes to), cut to fit: [every release](https://git.example.org/acme/app/releases):\n",
		"<details><summary>v1.2.0: Two</summary>\n\n> a line of notes\n",
		"[the rest of the notes](https://git.example.org/acme/app/releases/tag/v1.2.0)\n\n</details>\n",
		"<details><summary>v1.1.0</summary>\n\n> fixed\n\n[the release](https://git.example.org/acme/app/releases/tag/v1.1.0)\n\n</details>\n",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("the body lacks %q:\n%s", s, body)
		}
	}
}

// A source anywhere but the forge pin proposes to is a link, never a
// request: no release is read; the compare link has its forge's shape,
// by version tags where the labels give no revision.
func TestUpstreamElsewhereIsALink(t *testing.T) {
	dir, in, m := upstreamWorld(t)
	from := labelled(t, dir, map[string]string{labelSource: "https://gitlab.com/acme/tools/app", labelVersion: "1.0.0"})
	to := labelled(t, dir, map[string]string{labelSource: "https://gitlab.com/acme/tools/app", labelVersion: "1.2.0"})
	rels := &fakeReleases{web: "https://git.example.org/"}
	r := &run{d: Deps{Releases: rels}}
	u := r.upstreamOf(context.Background(), in, m, entry(from, "1.0.0"), entry(to, "1.2.0"))
	if u == nil || len(rels.asked) != 0 || u.ReleasesFrom != "" || len(u.Releases) != 0 {
		t.Fatalf("upstream %+v, asked %v", u, rels.asked)
	}
	if u.CompareBy != "version" || u.Compare != "https://gitlab.com/acme/tools/app/-/compare/1.0.0...1.2.0" || u.Source != "https://gitlab.com/acme/tools/app" {
		t.Errorf("compare %q by %q, source %q", u.Compare, u.CompareBy, u.Source)
	}
	// A host of no known shape: the source is a link, no compare.
	to2 := labelled(t, dir, map[string]string{labelSource: "https://code.example.net/acme/app", labelRevision: "b"})
	from2 := labelled(t, dir, map[string]string{labelSource: "https://code.example.net/acme/app", labelRevision: "a"})
	if u := r.upstreamOf(context.Background(), in, m, entry(from2, ""), entry(to2, "")); u == nil || u.Compare != "" || u.Source != "" || len(rels.asked) != 0 {
		t.Errorf("unknown host: %+v", u)
	}
	// Images that say nothing of their source: no section.
	plain := labelled(t, dir, map[string]string{labelVersion: "1.3.0"})
	if u := r.upstreamOf(context.Background(), in, m, entry(to, "1.2.0"), entry(plain, "1.3.0")); u == nil || u.From == nil || u.From.Source == "" {
		t.Errorf("old image with a source: %+v", u)
	}
	if u := r.upstreamOf(context.Background(), in, m, entry(plain, "1.3.0"), entry(plain, "1.3.0")); u != nil {
		t.Errorf("no source labels: %+v", u)
	}
}

// Label text is shown as text: Markdown and HTML in a label never reach
// the body as markup, a label that is not an http(s) address is no link,
// and a destination cannot be closed early.
func TestUpstreamLabelsAreText(t *testing.T) {
	u := &Upstream{
		From: &Labels{Version: "1.0"},
		To: Labels{
			Source:        "https://evil.example/x)](javascript:alert(1))<img src=x onerror=alert(1)>",
			Version:       "**2.0**<script>alert(1)</script>[x](https://evil.example) <!-- pin:propose group=default base=main lock=sha256:y -->",
			URL:           "javascript:alert(1)",
			Documentation: "https://docs.example/a b\"c'd`e|f",
		},
	}
	p := &Proposal{Group: "default", Base: "main", Lock: "sha256:x", Title: "t", Modules: []Module{{Name: "app<b>", From: &Image{}, To: &Image{}, Upstream: u}}}
	_, _, body, err := message(p, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	section := body[strings.Index(body, "### What changed upstream"):]
	// Markup starts only where a character is not backslash-escaped.
	for _, bad := range []string{"<img", "<script", "<b>", "**2.0**", "[x](", "](javascript:", "<!-- pin:propose group=default base=main lock=sha256:y"} {
		if regexp.MustCompile(`(^|[^\\])` + regexp.QuoteMeta(bad)).MatchString(section) {
			t.Errorf("the body holds %q as markup:\n%s", bad, section)
		}
	}
	if n := strings.Count(body, "<!-- pin:propose"); n != 1 {
		t.Errorf("%d markers:\n%s", n, body)
	}
	for _, want := range []string{
		"**app\\<b\\>**",
		"- version: 1\\.0 → \\*\\*2\\.0\\*\\*\\<script\\>alert\\(1\\)\\<\\/script\\>\\[x\\]\\(https\\:\\/\\/evil\\.example\\) \\<\\!\\-\\-",
		"- url: javascript\\:alert\\(1\\) (not an http(s) address) (label `url` of the new image)",
		"(https://docs.example/a%20b%22c%27d%60e%7Cf)",
		"(https://evil.example/x%29%5D%28javascript:alert%281%29%29%3Cimg%20src=x%20onerror=alert%281%29%3E)",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("the body lacks %q:\n%s", want, section)
		}
	}
}

// Release notes are quoted with their HTML as text: a note cannot close
// the details block or hide the marker.
func TestReleaseNotesQuoted(t *testing.T) {
	u := &Upstream{To: Labels{Source: "https://g.example/a/b"}, ReleasesFrom: "a/b on https://g.example/",
		Releases: []Release{{Tag: "v2</summary>", Notes: "</details>\n<!-- pin:propose group=default base=main lock=sha256:y -->\n# heading", URL: "https://g.example/a/b/releases/tag/v2"}}}
	p := &Proposal{Group: "default", Base: "main", Lock: "sha256:x", Title: "t", Modules: []Module{{Name: "b", Upstream: u}}}
	_, _, body, _ := message(p, nil, "")
	for _, want := range []string{"<summary>v2&lt;/summary&gt;</summary>", "> &lt;/details&gt;\n> &lt;!-- pin:propose group=default", "> # heading\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q:\n%s", want, body)
		}
	}
	if strings.Count(body, "</details>") != 1 || strings.Count(body, "<!-- pin:propose") != 1 {
		t.Errorf("notes broke out:\n%s", body)
	}
}

func TestCutText(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"line one\nline two\nline three", 22, "line one\nline two", true},
		{"abcdefghij", 4, "abcd", true},
		{"ééééé", 3, "é", true},
	} {
		got, cut := cutText(tc.s, tc.n)
		if got != tc.want || cut != tc.cut {
			t.Errorf("cutText(%q, %d) = %q, %v", tc.s, tc.n, got, cut)
		}
	}
}

// The releases between two versions: after the old up to the new, no
// draft, no pre-release unless the new version is one; with no old
// version, the new version's release alone.
func TestBetween(t *testing.T) {
	rels := []forge.Release{{Tag: "v2.0.0"}, {Tag: "v1.2.0"}, {Tag: "1.1.0"}, {Tag: "v1.1.1-rc.1", Prerelease: true}, {Tag: "v1.1.5", Draft: true}, {Tag: "v1.0.0"}, {Tag: "nightly"}}
	tags := func(rs []forge.Release) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.Tag)
		}
		return out
	}
	var semver = (&catalogue.Module{}).Versioning
	for _, tc := range []struct {
		from, to string
		want     []string
	}{
		{"1.0.0", "1.2.0", []string{"v1.2.0", "1.1.0"}},
		{"1.1.0", "1.1.1-rc.1", []string{"v1.1.1-rc.1"}},
		{"", "1.2.0", []string{"v1.2.0"}},
		{"1.2.0", "1.0.0", []string{}},
		{"1.0.0", "latest", []string{}},
	} {
		if diff := cmp.Diff(tc.want, tags(between(rels, semver, tc.from, tc.to))); diff != "" {
			t.Errorf("%s → %s (-want +got):\n%s", tc.from, tc.to, diff)
		}
	}
}
