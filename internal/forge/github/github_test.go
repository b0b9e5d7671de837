package github

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/forge"
)

// GitHub cannot be reached from pin's tests. This server checks that the
// adapter's requests have the shapes GitHub's REST API documents
// (docs.github.com/rest/pulls/pulls, API version 2022-11-28): the method,
// the path under the API's base, the query, the headers and the JSON
// fields; and it answers as those pages show. It is a seam pin owns, not
// a stand-in for GitHub's behaviour.
type server struct {
	t    *testing.T
	seen []string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := s.t
	if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
	}
	if got := r.Header.Get("X-GitHub-Api-Version"); got != "2022-11-28" {
		t.Errorf("%s %s: X-GitHub-Api-Version %q", r.Method, r.URL.Path, got)
	}
	if !strings.Contains(r.Header.Get("Accept"), "application/vnd.github") {
		t.Errorf("%s %s: Accept %q", r.Method, r.URL.Path, r.Header.Get("Accept"))
	}
	var body map[string]any
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		if len(b) > 0 {
			if err := json.Unmarshal(b, &body); err != nil {
				t.Errorf("%s %s: body is not JSON: %s", r.Method, r.URL.Path, b)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q", r.Method, r.URL.Path, ct)
			}
		}
	}
	s.seen = append(s.seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	pr := func(n int, head string) map[string]any {
		return map[string]any{"number": n, "state": "open", "html_url": fmt.Sprintf("https://github.com/pin-tool/deploy/pull/%d", n), "title": "t", "body": "b",
			"head": map[string]any{"ref": head, "label": "pin-tool:" + head}, "base": map[string]any{"ref": "main"}}
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/pulls":
		q := r.URL.Query()
		if q.Get("state") != "all" || q.Get("head") != "pin-tool:pin/update" || q.Get("base") != "main" || q.Get("per_page") != "100" {
			t.Errorf("list query %s", r.URL.RawQuery)
		}
		if q.Get("page") == "" {
			w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/repos/pin-tool/deploy/pulls?page=2>; rel="next", <%s/api/v3/repos/pin-tool/deploy/pulls?page=2>; rel="last"`, "http://"+r.Host, "http://"+r.Host))
			json.NewEncoder(w).Encode([]any{pr(3, "pin/update")})
			return
		}
		merged := pr(5, "pin/update")
		merged["state"], merged["merged_at"] = "closed", "2026-11-30T10:00:00Z"
		json.NewEncoder(w).Encode([]any{merged})
	case r.Method == "POST" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/pulls":
		want := map[string]any{"title": "pin: update forge to 1.27.3", "head": "pin/update", "base": "main", "body": "| table |\n", "maintainer_can_modify": true}
		if diff := cmp.Diff(want, body); diff != "" {
			t.Errorf("create body (-want +got):\n%s", diff)
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(pr(7, "pin/update"))
	case r.Method == "PATCH" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/pulls/7":
		want := map[string]any{"title": "pin: update forge to 1.28.0", "body": "new\n"}
		if diff := cmp.Diff(want, body); diff != "" {
			t.Errorf("update body (-want +got):\n%s", diff)
		}
		json.NewEncoder(w).Encode(pr(7, "pin/update"))
	case r.Method == "PATCH" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/pulls/8":
		w.WriteHeader(http.StatusUnprocessableEntity)
		json.NewEncoder(w).Encode(map[string]any{"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest/pulls/pulls#update-a-pull-request"})
	default:
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

func TestRequestShapes(t *testing.T) {
	s := &server{t: t}
	srv := httptest.NewServer(s)
	defer srv.Close()
	r, err := New(srv.URL+"/api/v3", "s3cret", "pin-tool", "deploy", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := r.List(ctx, "main", "pin/update")
	if err != nil || len(got) != 2 || got[0].Number != 3 || got[1].Number != 5 || got[0].Branch != "pin/update" || got[0].Base != "main" || got[0].State != "open" || got[1].State != "merged" {
		t.Fatalf("List: %+v, %v", got, err)
	}
	opened, err := r.Open(ctx, forge.Proposal{Base: "main", Branch: "pin/update", Title: "pin: update forge to 1.27.3", Body: "| table |\n"})
	if err != nil || opened.Number != 7 || opened.URL != "https://github.com/pin-tool/deploy/pull/7" {
		t.Fatalf("Open: %+v, %v", opened, err)
	}
	if _, err := r.Update(ctx, 7, forge.Proposal{Base: "main", Branch: "pin/update", Title: "pin: update forge to 1.28.0", Body: "new\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Update(ctx, 8, forge.Proposal{Title: "x", Body: "y"}); err == nil || !strings.Contains(err.Error(), "422") {
		t.Errorf("a 422: %v", err)
	}
	want := []string{
		"GET /api/v3/repos/pin-tool/deploy/pulls?base=main&head=pin-tool%3Apin%2Fupdate&per_page=100&state=all",
		"GET /api/v3/repos/pin-tool/deploy/pulls?base=main&head=pin-tool%3Apin%2Fupdate&page=2&per_page=100&state=all",
		"POST /api/v3/repos/pin-tool/deploy/pulls?",
		"PATCH /api/v3/repos/pin-tool/deploy/pulls/7?",
		"PATCH /api/v3/repos/pin-tool/deploy/pulls/8?",
	}
	if diff := cmp.Diff(want, s.seen); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// Without an API address, the adapter speaks to api.github.com.
func TestDefaultAPI(t *testing.T) {
	r, err := New("", "", "o", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.c.BaseURL(); got != DefaultAPI {
		t.Errorf("base URL %s", got)
	}
}
