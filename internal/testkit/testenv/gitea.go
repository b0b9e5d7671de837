package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Environment variables of the Gitea scripts/test starts.
const (
	// EnvGiteaURL is http://127.0.0.1:PORT.
	EnvGiteaURL = "PIN_TEST_GITEA_URL"
	// EnvGiteaUser and EnvGiteaPassword are an admin's credentials.
	EnvGiteaUser     = "PIN_TEST_GITEA_USER"
	EnvGiteaPassword = "PIN_TEST_GITEA_PASSWORD"
)

// Gitea is the test Gitea (v1.27.3, built by scripts/gitea), with an
// admin user.
type Gitea struct {
	URL, User, Password string
}

// GiteaServer returns the test Gitea once its API answers.
func GiteaServer(t testing.TB) Gitea {
	t.Helper()
	g := Gitea{
		URL:      lookup(t, "gitea", runAsRootHint, EnvGiteaURL),
		User:     lookup(t, "gitea", runAsRootHint, EnvGiteaUser),
		Password: lookup(t, "gitea", runAsRootHint, EnvGiteaPassword),
	}
	if err := probe(&http.Client{Timeout: probeTimeout}, g.URL+"/api/v1/version", http.StatusOK); err != nil {
		unavailable(t, "gitea", runAsRootHint, "%s=%s does not answer: %v", EnvGiteaURL, g.URL, err)
	}
	return g
}

var giteaSeq atomic.Int64

// NewRepo makes a repository of the admin user whose main branch holds
// one commit (a README), named name with a suffix of its own, and returns
// its name and a clone URL that carries the admin's credentials.
func (g Gitea) NewRepo(t testing.TB, name string) (repo, cloneURL string) {
	t.Helper()
	repo = fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano()%1e9, giteaSeq.Add(1))
	g.API(t, "POST", "/user/repos", map[string]any{"name": repo, "auto_init": true, "default_branch": "main", "readme": "Default"}, nil)
	u, err := url.Parse(g.URL)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	u.User = url.UserPassword(g.User, g.Password)
	u.Path = "/" + g.User + "/" + repo + ".git"
	return repo, u.String()
}

// Token makes an API token of the admin user that may write
// repositories.
func (g Gitea) Token(t testing.TB) string {
	t.Helper()
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	g.API(t, "POST", "/users/"+g.User+"/tokens", map[string]any{
		"name": fmt.Sprintf("pin-test-%d-%d", time.Now().UnixNano(), giteaSeq.Add(1)), "scopes": []string{"write:repository", "read:user"},
	}, &tok)
	if tok.SHA1 == "" {
		t.Fatal("testenv: gitea made a token with no value")
	}
	return tok.SHA1
}

// API calls Gitea's API (/api/v1 + path) as the admin, with body as
// JSON, and decodes the answer into out (when not nil). Any status but
// 2xx fails the test.
func (g Gitea) API(t testing.TB, method, path string, body, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.URL+"/api/v1"+path, r)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	req.SetBasicAuth(g.User, g.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("testenv: gitea %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("testenv: gitea %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("testenv: gitea %s %s: %v", method, path, err)
		}
	}
}
