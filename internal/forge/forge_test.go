package forge

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

func TestTargets(t *testing.T) {
	p := Proposal{Base: "main", Branch: "pin/update", Title: "pin: update forge to 1.27.3", Body: "| a | b |\n|---|---|\n\nwhy\n"}
	for _, tc := range []struct {
		c          Convention
		ref        string
		branch     bool
		seen       []string
		hasOptions []string
	}{
		{ConventionBranch, "refs/heads/pin/update", true, nil, nil},
		{ConventionGitLab, "refs/heads/pin/update", true, nil, []string{"merge_request.create", "merge_request.target=main",
			"merge_request.title=pin: update forge to 1.27.3", `merge_request.description=| a | b |\n|---|---|\n\nwhy\n`}},
		{ConventionAGit, "refs/for/main/pin-update", false, []string{"refs/pull/*/head"}, []string{"topic=pin-update", "force-push=true",
			"title={base64}" + base64.StdEncoding.EncodeToString([]byte(p.Title)),
			"description={base64}" + base64.StdEncoding.EncodeToString([]byte(p.Body))}},
		{ConventionGerrit, "refs/for/main", false, []string{"refs/changes/*"}, []string{"topic=pin-update"}},
	} {
		got, err := tc.c.Target(p)
		if err != nil {
			t.Fatalf("%s: %v", tc.c, err)
		}
		if got.Ref != tc.ref || got.Branch != tc.branch || !slices.Equal(got.Seen, tc.seen) {
			t.Errorf("%s: %+v", tc.c, got)
		}
		for _, o := range tc.hasOptions {
			if !slices.Contains(got.Options, o) {
				t.Errorf("%s: no option %q in %q", tc.c, o, got.Options)
			}
		}
		// git refuses a push option with a new line.
		for _, o := range got.Options {
			if strings.ContainsAny(o, "\n\x00") {
				t.Errorf("%s: option %q holds a new line", tc.c, o)
			}
		}
	}
	if _, err := Convention("svn").Target(p); err == nil {
		t.Error("an unknown convention: no error")
	}
	if _, err := ConventionBranch.Target(Proposal{Branch: "x"}); err == nil {
		t.Error("no base: no error")
	}
}
