package main

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitHTTP serves the bare repositories under root over git's smart HTTP
// (git http-backend, the real one), asking every request for a user name
// and password as a forge does; it accepts any.
func gitHTTP(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u == "" || p == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="forge"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestProposeKeepsCredentialsOut: a credential a user can give pin
// propose — the password of --remote's URL, a token written as its user
// name (https://glpat-…@host), the URL git has for the remote named, a
// credential helper's password, an API token variable — appears in no
// output: the table, JSON, errors (git's relayed ones too), progress, the
// body file, any file of the checkout.
func TestProposeKeepsCredentialsOut(t *testing.T) {
	gitUser(t)
	remote := localRemote(t)
	clone := seedIncident(t, remote, nil)
	gitIn(t, remote, "config", "http.receivepack", "true")
	base := strings.TrimPrefix(gitHTTP(t, filepath.Dir(remote)), "http://")
	repo := "/" + filepath.Base(remote)
	secrets := []string{"PwSecret-7f3a9c", "glpat-UserSecret4b8d", "HelperSecret2e6f", "ghp_OriginSecret9a1c", "TokenSecret5d7e"}
	gitIn(t, clone, "config", "credential.helper", "!f() { echo username=pin; echo password="+secrets[2]+"; }; f")
	gitIn(t, clone, "remote", "add", "forge", "http://"+secrets[3]+"@"+base+repo)
	gitIn(t, clone, "remote", "add", "down", "http://"+secrets[3]+"@127.0.0.1:1/r.git")
	t.Setenv("GITEA_TOKEN", secrets[4])
	body := filepath.Join(t.TempDir(), "body.md")

	var outputs strings.Builder
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"propose", "--remote", "http://x-token:" + secrets[0] + "@" + base + repo, "--body-file", body}, exitOK},
		{[]string{"propose", "--remote", "http://x-token:" + secrets[0] + "@" + base + repo, "--body-file", body}, exitOK}, // already holds it
		{[]string{"propose", "--remote", "http://x-token:" + secrets[0] + "@" + base + repo, "--format", "json"}, exitOK},
		{[]string{"propose", "--remote", "http://" + secrets[1] + "@" + base + repo, "--branch-prefix", "tok/"}, exitOK},
		{[]string{"propose", "--remote", "forge", "--branch-prefix", "origin/"}, exitOK},
		{[]string{"propose", "--remote", "http://x-token:" + secrets[0] + "@127.0.0.1:1/r.git"}, exitSource},
		{[]string{"propose", "--remote", "http://" + secrets[1] + "@127.0.0.1:1/r.git", "--format", "json"}, exitSource},
		{[]string{"propose", "--remote", "down"}, exitSource},
		{[]string{"propose", "--remote", "http://x-token:" + secrets[0] + "@" + base + repo, "--branch-prefix", "gitea/", "--forge", "gitea", "--repository", "o/r", "--forge-url", "http://pin:" + secrets[4] + "@127.0.0.1:1/"}, exitSource},
	} {
		r := pin(t, clone, tc.args...)
		if r.code != tc.code {
			t.Errorf("pin %s: exit %d, want %d\n%s%s", strings.Join(tc.args, " "), r.code, tc.code, r.stdout, r.stderr)
		}
		outputs.WriteString(r.stdout + r.stderr)
	}
	written := outputs.String()
	b, err := os.ReadFile(body)
	if err != nil {
		t.Fatal(err)
	}
	written += string(b)
	filepath.WalkDir(clone, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			written += string(b)
		}
		return nil
	})
	for _, s := range secrets {
		if strings.Contains(written, s) {
			t.Errorf("secret %s is in what pin printed or wrote", s)
		}
	}
	if !strings.Contains(outputs.String(), "http://***@"+base+repo) {
		t.Errorf("the remote is not named, redacted:\n%s", outputs.String())
	}
	t.Logf("outputs:\n%s", outputs.String())
}
