package gitea

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/forge"
	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// pushBranch pushes a commit on main to branch of the repository at url.
func pushBranch(t *testing.T, url, branch string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	os.WriteFile(cfg, []byte("[user]\n\tname = T\n\temail = t@example.org\n"), 0o644)
	for _, args := range [][]string{
		{"clone", "--quiet", url, dir},
		{"-C", dir, "commit", "--quiet", "--allow-empty", "-m", "a change"},
		{"-C", dir, "push", "--quiet", "origin", "HEAD:refs/heads/" + branch},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+cfg, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Against the real Gitea: a request is opened from a branch, found again
// among the open ones (only those from that branch into that base), and
// its title and body updated.
func TestRequests(t *testing.T) {
	g := testenv.GiteaServer(t)
	repo, url := g.NewRepo(t, "requests")
	pushBranch(t, url, "pin/update")
	pushBranch(t, url, "other")
	ctx := context.Background()
	r := New(g.URL, g.Token(t), g.User, repo, nil)

	if got, err := r.List(ctx, "main", "pin/update"); err != nil || len(got) != 0 {
		t.Fatalf("List before: %v, %v", got, err)
	}
	other, err := r.Open(ctx, forge.Proposal{Base: "main", Branch: "other", Title: "another", Body: "not pin's"})
	if err != nil {
		t.Fatal(err)
	}
	p := forge.Proposal{Base: "main", Branch: "pin/update", Title: "pin: update forge to 1.27.3", Body: "| a |\n|---|\n\n<!-- marker -->\n"}
	opened, err := r.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if opened.Number == other.Number || opened.Branch != "pin/update" || opened.Base != "main" || !strings.HasSuffix(opened.URL, "/pulls/"+strconv.Itoa(opened.Number)) {
		t.Fatalf("opened %+v", opened)
	}
	got, err := r.List(ctx, "main", "pin/update")
	if err != nil || len(got) != 1 || got[0].Number != opened.Number || got[0].Title != p.Title || strings.TrimSpace(got[0].Body) != strings.TrimSpace(p.Body) {
		t.Fatalf("List: %+v, %v", got, err)
	}
	if got, _ := r.List(ctx, "release", "pin/update"); len(got) != 0 {
		t.Errorf("List into another base: %+v", got)
	}
	p.Title, p.Body = "pin: update forge to 1.28.0", "new body\n"
	if u, err := r.Update(ctx, opened.Number, p); err != nil || u.Number != opened.Number || u.Title != p.Title {
		t.Fatalf("Update: %+v, %v", u, err)
	}
	got, _ = r.List(ctx, "main", "pin/update")
	if len(got) != 1 || got[0].Title != p.Title || strings.TrimSpace(got[0].Body) != "new body" || got[0].State != "open" {
		t.Errorf("after Update: %+v", got)
	}
	// Closed, it is still listed, as closed.
	g.API(t, "PATCH", fmt.Sprintf("/repos/%s/%s/pulls/%d", g.User, repo, opened.Number), map[string]any{"state": "closed"}, nil)
	if got, _ := r.List(ctx, "main", "pin/update"); len(got) != 1 || got[0].State != "closed" {
		t.Errorf("after closing: %+v", got)
	}
	// A bad token is an error, not an empty list.
	if _, err := New(g.URL, "not-a-token", g.User, repo, nil).List(ctx, "main", "pin/update"); err == nil {
		t.Error("a bad token: no error")
	}
}

// Against the real Gitea: a request handed over (a label of the
// repository's, an assignee; a label it lacks is an error naming it),
// automerge set and taken back as Gitea's timeline keeps it (main
// requires a check, so the merge waits), and releases read.
func TestHandover(t *testing.T) {
	g := testenv.GiteaServer(t)
	repo, url := g.NewRepo(t, "handover")
	pushBranch(t, url, "pin/update")
	base := "/repos/" + g.User + "/" + repo
	g.API(t, "POST", base+"/labels", map[string]any{"name": "dependencies", "color": "#ee0701"}, nil)
	g.API(t, "POST", base+"/branch_protections", map[string]any{"rule_name": "main", "enable_push": true, "enable_status_check": true, "status_check_contexts": []string{"ci"}}, nil)
	g.API(t, "POST", base+"/releases", map[string]any{"tag_name": "v1.0.0", "target_commitish": "main", "name": "One", "body": "notes of one"}, nil)
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	g.API(t, "POST", "/users/"+g.User+"/tokens", map[string]any{"name": fmt.Sprintf("handover-%d", time.Now().UnixNano()), "scopes": []string{"write:repository", "write:issue", "read:user"}}, &tok)
	ctx := context.Background()
	r := New(g.URL, tok.SHA1, g.User, repo, nil)

	q, err := r.Open(ctx, forge.Proposal{Base: "main", Branch: "pin/update", Title: "t", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Hand(ctx, q, forge.Handover{Labels: []string{"dependencies"}, Assignees: []string{g.User}}); err != nil {
		t.Fatal(err)
	}
	got, err := r.List(ctx, "main", "pin/update")
	if err != nil || len(got) != 1 || strings.Join(got[0].Labels, ",") != "dependencies" || strings.Join(got[0].Assignees, ",") != g.User {
		t.Fatalf("after Hand: %+v, %v", got, err)
	}
	if err := r.Hand(ctx, got[0], forge.Handover{Labels: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `has no label "nope"`) {
		t.Errorf("a label the repository lacks: %v", err)
	}
	if on, err := r.Automerge(ctx, q.Number); err != nil || on {
		t.Fatalf("Automerge before: %v, %v", on, err)
	}
	if err := r.SetAutomerge(ctx, q.Number, true); err != nil {
		t.Fatal(err)
	}
	if on, err := r.Automerge(ctx, q.Number); err != nil || !on {
		t.Fatalf("Automerge after: %v, %v", on, err)
	}
	if err := r.SetAutomerge(ctx, q.Number, true); err != nil {
		t.Errorf("set twice: %v", err)
	}
	if err := r.SetAutomerge(ctx, q.Number, false); err != nil {
		t.Fatal(err)
	}
	if on, err := r.Automerge(ctx, q.Number); err != nil || on {
		t.Fatalf("Automerge taken back: %v, %v", on, err)
	}
	rels, err := r.Releases(ctx, g.User, repo)
	if err != nil || len(rels) != 1 || rels[0].Tag != "v1.0.0" || rels[0].Name != "One" || rels[0].Notes != "notes of one" || !strings.HasSuffix(rels[0].URL, "/releases/tag/v1.0.0") {
		t.Errorf("Releases: %+v, %v", rels, err)
	}
	if r.Web() != g.URL+"/" || r.Kind() != forge.KindGitea {
		t.Errorf("Web %s, Kind %s", r.Web(), r.Kind())
	}
}
