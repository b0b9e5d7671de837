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
