package forge

import "testing"

func TestParseSource(t *testing.T) {
	known := map[string]string{"https://git.example.org/": KindGitea, "http://127.0.0.1:3000/sub/": KindGitea}
	for _, tc := range []struct {
		raw, web, kind, compare string
	}{
		{"https://github.com/acme/app", "https://github.com/acme/app", KindGitHub, "https://github.com/acme/app/compare/v1...v2"},
		{"https://GitHub.com/acme/app.git", "https://github.com/acme/app", KindGitHub, "https://github.com/acme/app/compare/v1...v2"},
		{"https://github.com/acme/app/tree/main/sub", "https://github.com/acme/app", KindGitHub, "https://github.com/acme/app/compare/v1...v2"},
		{"https://gitlab.com/group/sub/app", "https://gitlab.com/group/sub/app", KindGitLab, "https://gitlab.com/group/sub/app/-/compare/v1...v2"},
		{"https://gitlab.com/group/app/-/tree/main", "https://gitlab.com/group/app", KindGitLab, "https://gitlab.com/group/app/-/compare/v1...v2"},
		{"https://codeberg.org/forgejo/forgejo", "https://codeberg.org/forgejo/forgejo", KindGitea, "https://codeberg.org/forgejo/forgejo/compare/v1...v2"},
		{"https://git.example.org/acme/app", "https://git.example.org/acme/app", KindGitea, "https://git.example.org/acme/app/compare/v1...v2"},
		{"http://127.0.0.1:3000/sub/acme/app", "http://127.0.0.1:3000/sub/acme/app", KindGitea, "http://127.0.0.1:3000/sub/acme/app/compare/v1...v2"},
		// Unknown shapes and anything that is not a repository page.
		{"https://code.example.net/acme/app", "", "", ""},
		{"http://127.0.0.1:3000/acme/app", "", "", ""},
		{"https://github.com:8443/acme/app", "", "", ""},
		{"git@github.com:acme/app.git", "", "", ""},
		{"javascript:alert(1)", "", "", ""},
		{"https://github.com/acme", "", "", ""},
		{"https://github.com/acme/app?x=1", "", "", ""},
		{"https://github.com/acme/a)b", "", "", ""},
	} {
		s, ok := ParseSource(tc.raw, known)
		if ok != (tc.web != "") || ok && (s.Web() != tc.web || s.Kind != tc.kind || s.Compare("v1", "v2") != tc.compare) {
			t.Errorf("%s: %+v, %v (web %q)", tc.raw, s, ok, s.Web())
		}
	}
	s, _ := ParseSource("https://github.com/acme/app", nil)
	if got := s.Compare("a/b", "c d"); got != "https://github.com/acme/app/compare/a%2Fb...c%20d" {
		t.Errorf("escaped compare %s", got)
	}
	if got := s.Releases(); got != "https://github.com/acme/app/releases" {
		t.Errorf("releases %s", got)
	}
}

// GitLab's push options carry labels and assignees; other hand-over is
// refused by the conventions that cannot carry it.
func TestConventionHandover(t *testing.T) {
	p := Proposal{Base: "main", Branch: "pin/update", Title: "t", Body: "b", Handover: Handover{Labels: []string{"pin"}, Assignees: []string{"bob"}}}
	tg, err := ConventionGitLab.Target(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"merge_request.label=pin", "merge_request.assign=bob"}
	if got := tg.Options[len(tg.Options)-2:]; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("options %q", tg.Options)
	}
	for _, tc := range []struct {
		c  Convention
		h  Handover
		ok bool
	}{
		{ConventionGitLab, Handover{Labels: []string{"x"}, Assignees: []string{"y"}}, true},
		{ConventionGitLab, Handover{Reviewers: []string{"x"}}, false},
		{ConventionGitLab, Handover{Automerge: true}, false},
		{ConventionAGit, Handover{Labels: []string{"x"}}, false},
		{ConventionBranch, Handover{Automerge: true}, false},
		{ConventionGerrit, Handover{}, true},
	} {
		if err := tc.c.Carries(tc.h); (err == nil) != tc.ok {
			t.Errorf("%s %+v: %v", tc.c, tc.h, err)
		}
	}
}
