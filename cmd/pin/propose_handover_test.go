package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// giteaSource is the source repository of the test image, on the test
// Gitea: v1.0.0 released at its first commit, v1.1.0 and v1.2.0 at later
// ones, each with notes. It returns its page and the revisions of
// v1.0.0 and v1.2.0.
func giteaSource(t *testing.T, g testenv.Gitea) (page, rev0, rev2 string) {
	t.Helper()
	repo, _ := g.NewRepo(t, "app-src")
	base := "/repos/" + g.User + "/" + repo
	var br struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	g.API(t, "GET", base+"/branches/main", nil, &br)
	rev0 = br.Commit.ID
	g.API(t, "POST", base+"/releases", map[string]any{"tag_name": "v1.0.0", "target_commitish": "main", "name": "v1.0.0", "body": "The first release."}, nil)
	for i, notes := range []string{"Fixes the frobnicator.", "Adds widgets:\n\n- one\n- two"} {
		var c struct {
			Commit struct {
				SHA string `json:"sha"`
			} `json:"commit"`
		}
		g.API(t, "POST", fmt.Sprintf("%s/contents/CHANGES-%d.md", base, i), map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(notes)), "message": "release"}, &c)
		tag := fmt.Sprintf("v1.%d.0", i+1)
		g.API(t, "POST", base+"/releases", map[string]any{"tag_name": tag, "target_commitish": "main", "name": tag, "body": notes}, nil)
		rev2 = c.Commit.SHA
	}
	return g.URL + "/" + g.User + "/" + repo, rev0, rev2
}

// appLayout writes an OCI layout holding registry.example.org/acme/app
// 1.0.0 and 1.2.0, labelled with their source, revisions and version
// (and documentation, holding markup), and returns their digests.
func appLayout(t *testing.T, dir, source, rev0, rev2 string) (d0, d2 string) {
	t.Helper()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []struct{ version, rev string }{{"1.0.0", rev0}, {"1.2.0", rev2}} {
		img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64", Config: v1.Config{Labels: map[string]string{
			"org.opencontainers.image.source":        source,
			"org.opencontainers.image.revision":      x.rev,
			"org.opencontainers.image.version":       x.version,
			"org.opencontainers.image.documentation": "https://docs.example.org/app <img src=x onerror=alert(1)> **bold**",
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "registry.example.org/acme/app:" + x.version})); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		if i == 0 {
			d0 = d.String()
		} else {
			d2 = d.String()
		}
	}
	return d0, d2
}

const appCatalogue = `host "mesh-1" {
  snapshot = "mesh-1.json"
}

registry "registry.example.org" {
  mirror = "registry"
}

module "app" {
  image  = "registry.example.org/acme/app"
  policy = "exact"
  pin    = "%s"
  %s
  runs_on "mesh-1" { container = "app" }
}
%s`

// seedApp pushes to remote's main a repository of the app: its layout,
// mesh-1 running nothing, the lock of pin oldPin, and a catalogue that
// pins newPin (with extra lines in the module, and a propose block). It
// returns a fresh clone.
func seedApp(t *testing.T, remote, layoutDir, oldPin, newPin, extra, propose string) string {
	t.Helper()
	seed := filepath.Join(t.TempDir(), "seed")
	gitIn(t, filepath.Dir(seed), "clone", "--quiet", remote, seed)
	if err := os.CopyFS(filepath.Join(seed, "registry"), os.DirFS(layoutDir)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(seed, "mesh-1.json"), snapshotOnly(t))
	writeFile(t, filepath.Join(seed, "catalogue.hcl"), fmt.Sprintf(appCatalogue, oldPin, "", ""))
	if r := pin(t, seed, "resolve"); r.code != 0 {
		t.Fatalf("the old lock: exit %d\n%s", r.code, r.stderr)
	}
	writeFile(t, filepath.Join(seed, "catalogue.hcl"), fmt.Sprintf(appCatalogue, newPin, extra, propose))
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "--quiet", "-m", "the app")
	gitIn(t, seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	clone := filepath.Join(t.TempDir(), "checkout")
	gitIn(t, filepath.Dir(clone), "clone", "--quiet", remote, clone)
	return clone
}

// giteaHandoverPull is a pull request as Gitea's API reads it back, with
// who it is handed to.
type giteaHandoverPull struct {
	Number int    `json:"number"`
	Body   string `json:"body"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
	Assignees []struct {
		Login string `json:"login"`
	} `json:"assignees"`
	Reviewers []struct {
		Login string `json:"login"`
	} `json:"requested_reviewers"`
	Head struct {
		SHA string `json:"sha"`
	} `json:"head"`
}

// scheduledMerges counts the automerge scheduled on pull request n, as
// Gitea keeps it: its timeline's scheduled and cancelled merges.
func scheduledMerges(t *testing.T, g testenv.Gitea, repo string, n int) (scheduled, cancelled int) {
	t.Helper()
	var tl []struct {
		Type string `json:"type"`
	}
	g.API(t, "GET", fmt.Sprintf("/repos/%s/%s/issues/%d/timeline?limit=50", g.User, repo, n), nil, &tl)
	for _, e := range tl {
		switch e.Type {
		case "pull_scheduled_merge":
			scheduled++
		case "pull_cancel_scheduled_merge":
			cancelled++
		}
	}
	return scheduled, cancelled
}

// renderMarkdown is the HTML Gitea renders text to, as it shows a body.
func renderMarkdown(t *testing.T, g testenv.Gitea, text string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", g.URL+"/api/v1/markdown/raw", strings.NewReader(text))
	req.SetBasicAuth(g.User, g.Password)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("markdown: %s: %s", resp.Status, b)
	}
	return string(b)
}

// deployRepo is a repository on the Gitea for the app's deploy, with a
// label, a collaborator to review, and main protected by a required
// check ("ci"), so that an automerge waits for it.
func deployRepo(t *testing.T, g testenv.Gitea, name, reviewer string) (repo, url string) {
	t.Helper()
	repo, url = g.NewRepo(t, name)
	base := "/repos/" + g.User + "/" + repo
	g.API(t, "POST", base+"/labels", map[string]any{"name": "dependencies", "color": "#ee0701"}, nil)
	g.API(t, "PUT", base+"/collaborators/"+reviewer, map[string]any{"permission": "write"}, nil)
	g.API(t, "POST", base+"/branch_protections", map[string]any{"rule_name": "main", "enable_push": true, "enable_status_check": true, "status_check_contexts": []string{"ci"}}, nil)
	return repo, url
}

// The request a reviewer merges without leaving it, on the real Gitea:
// the image's labels point at its source on the same Gitea, and the
// request pin opens carries the compare link of the two revisions, the
// notes of both releases between the versions (not the old one's), its
// label, reviewer and assignee, and automerge as Gitea stores it (a
// scheduled merge in its timeline, waiting on the required check); a
// label holding Markdown and HTML renders as text. A second run changes
// nothing.
func TestProposeGiteaHandover(t *testing.T) {
	gitUser(t)
	g := testenv.GiteaServer(t)
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	g.API(t, "POST", "/users/"+g.User+"/tokens", map[string]any{"name": fmt.Sprintf("pin-handover-%d", time.Now().UnixNano()),
		"scopes": []string{"write:repository", "write:issue", "read:user"}}, &tok)
	t.Setenv("GITEA_TOKEN", tok.SHA1)
	reviewer := fmt.Sprintf("rev%d", time.Now().UnixNano()%1e9)
	g.API(t, "POST", "/admin/users", map[string]any{"username": reviewer, "email": reviewer + "@example.org", "password": "a-Passw0rd-for-tests", "must_change_password": false}, nil)

	page, rev0, rev2 := giteaSource(t, g)
	lay := filepath.Join(t.TempDir(), "layout")
	d0, d2 := appLayout(t, lay, page, rev0, rev2)
	args := []string{"propose", "--forge", "gitea", "--label", "dependencies", "--reviewer", reviewer, "--assignee", g.User, "--automerge"}

	t.Run("automerge", func(t *testing.T) {
		repo, url := deployRepo(t, g, "app-deploy", reviewer)
		clone := seedApp(t, url, lay, "1.0.0@"+d0, "1.2.0@"+d2, "", "")
		r := pin(t, clone, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "request  #1 opened: ") || !strings.Contains(r.stdout, "merge    automerge: the forge merges it once its required checks pass") {
			t.Fatalf("first run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var pr giteaHandoverPull
		g.API(t, "GET", "/repos/"+g.User+"/"+repo+"/pulls/1", nil, &pr)
		if len(pr.Labels) != 1 || pr.Labels[0].Name != "dependencies" || len(pr.Assignees) != 1 || pr.Assignees[0].Login != g.User || len(pr.Reviewers) != 1 || pr.Reviewers[0].Login != reviewer {
			t.Errorf("handed to: labels %+v, assignees %+v, reviewers %+v", pr.Labels, pr.Assignees, pr.Reviewers)
		}
		for _, s := range []string{
			"(" + page + "/compare/" + rev0 + "..." + rev2 + ") (the `revision` labels of the old and new images)",
			"<details><summary>v1.2.0</summary>\n\n> Adds widgets:\n>\n> - one\n> - two\n",
			"<details><summary>v1.1.0</summary>\n\n> Fixes the frobnicator.\n",
			"### Automerge\n\nOn: the forge merges this request once its required checks pass.",
		} {
			if !strings.Contains(pr.Body, s) {
				t.Errorf("the body lacks %q:\n%s", s, pr.Body)
			}
		}
		if strings.Contains(pr.Body, "The first release.") {
			t.Errorf("the body holds the old version's notes:\n%s", pr.Body)
		}
		if s, c := scheduledMerges(t, g, repo, 1); s != 1 || c != 0 {
			t.Errorf("automerge as Gitea stores it: %d scheduled, %d cancelled", s, c)
		}
		html := renderMarkdown(t, g, pr.Body)
		if strings.Contains(html, "<img") || strings.Contains(html, "<strong>bold</strong>") || !strings.Contains(html, "**bold**") {
			t.Errorf("the documentation label renders as markup:\n%s", html)
		}

		r = pin(t, clone, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "pushed   nothing") || !strings.Contains(r.stdout, " unchanged: ") {
			t.Fatalf("second run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var again giteaHandoverPull
		g.API(t, "GET", "/repos/"+g.User+"/"+repo+"/pulls/1", nil, &again)
		if again.Body != pr.Body || again.Head.SHA != pr.Head.SHA || len(again.Labels) != 1 || len(again.Assignees) != 1 {
			t.Errorf("the second run changed the request: %+v", again)
		}
		if s, c := scheduledMerges(t, g, repo, 1); s != 1 || c != 0 {
			t.Errorf("after the second run: %d scheduled, %d cancelled", s, c)
		}
	})

	// A downgrade the catalogue accepts: the request is opened and
	// handed over, never set to automerge, and its body says why.
	t.Run("accepted downgrade", func(t *testing.T) {
		repo, url := deployRepo(t, g, "app-downgrade", reviewer)
		clone := seedApp(t, url, lay, "1.2.0@"+d2, "1.0.0@"+d0, `allow_downgrade = "1.2 corrupts widgets"`, "")
		r := pin(t, clone, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "request  #1 opened: ") || !strings.Contains(r.stdout, "merge    by a person, not automerge: it holds a downgrade the catalogue accepts (app)") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var pr giteaHandoverPull
		g.API(t, "GET", "/repos/"+g.User+"/"+repo+"/pulls/1", nil, &pr)
		if !strings.Contains(pr.Body, "### Automerge\n\nOff: it holds a downgrade the catalogue accepts (app), and a downgrade needs a person.") || len(pr.Labels) != 1 {
			t.Errorf("body:\n%s", pr.Body)
		}
		if s, _ := scheduledMerges(t, g, repo, 1); s != 0 {
			t.Errorf("an accepted downgrade was set to automerge (%d scheduled)", s)
		}
	})

	// Outside the schedule (Wednesdays; pin's clock in these tests is a
	// Tuesday), nothing is pushed and no request opened, and pin says
	// when the window opens; on the Wednesday, it proposes.
	t.Run("schedule", func(t *testing.T) {
		repo, url := deployRepo(t, g, "app-schedule", reviewer)
		clone := seedApp(t, url, lay, "1.0.0@"+d0, "1.2.0@"+d2, "", "\npropose {\n  labels   = [\"dependencies\"]\n  schedule = [\"* * * * 3\"]\n}\n")
		r := pin(t, clone, "propose", "--forge", "gitea")
		if r.code != 0 || !strings.Contains(r.stdout, `Outside the schedule "* * * * 3" (UTC): nothing pushed; the next window opens at 2026-12-02 00:00 UTC.`) {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if prs := giteaPulls(t, g, repo); len(prs) != 0 {
			t.Errorf("requests outside the schedule: %+v", prs)
		}
		if head := gitIn(t, clone, "ls-remote", "origin", "refs/heads/pin/update"); head != "" {
			t.Errorf("pushed outside the schedule: %s", head)
		}
		r = pinAt(t, clone, time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), "propose", "--forge", "gitea")
		if r.code != 0 || !strings.Contains(r.stdout, "request  #1 opened: ") {
			t.Fatalf("in the window: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		var pr giteaHandoverPull
		g.API(t, "GET", "/repos/"+g.User+"/"+repo+"/pulls/1", nil, &pr)
		if len(pr.Labels) != 1 || pr.Labels[0].Name != "dependencies" {
			t.Errorf("the catalogue's label: %+v", pr.Labels)
		}
	})
}
