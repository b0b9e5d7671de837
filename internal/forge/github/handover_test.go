package github

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/forge"
)

// handoverServer checks the shapes of the hand-over calls as GitHub
// documents them (docs.github.com/rest/issues/labels,
// /rest/issues/assignees, /rest/pulls/review-requests,
// /rest/releases/releases, and GraphQL's enablePullRequestAutoMerge and
// disablePullRequestAutoMerge at /api/graphql beside GitHub Enterprise
// Server's /api/v3), and answers as those pages show. auto is the pull
// request's auto_merge, as the GraphQL calls leave it.
type handoverServer struct {
	t    *testing.T
	seen []string
	auto bool
}

func (s *handoverServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := s.t
	if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
	}
	b, _ := io.ReadAll(r.Body)
	var body any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("%s %s: body is not JSON: %s", r.Method, r.URL.Path, b)
		}
	}
	s.seen = append(s.seen, r.Method+" "+r.URL.Path)
	want := func(w any) {
		t.Helper()
		if diff := cmp.Diff(w, body); diff != "" {
			t.Errorf("%s %s body (-want +got):\n%s", r.Method, r.URL.Path, diff)
		}
	}
	switch {
	case r.Method == "POST" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/issues/7/labels":
		want([]any{"dependencies", "pin"})
		json.NewEncoder(w).Encode([]any{map[string]any{"name": "dependencies"}, map[string]any{"name": "pin"}})
	case r.Method == "POST" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/issues/7/assignees":
		want(map[string]any{"assignees": []any{"bob"}})
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"number": 7})
	case r.Method == "POST" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/pulls/7/requested_reviewers":
		want(map[string]any{"reviewers": []any{"alice"}})
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"number": 7})
	case r.Method == "GET" && r.URL.Path == "/api/v3/repos/pin-tool/deploy/pulls/7":
		pr := map[string]any{"number": 7, "node_id": "PR_kwDOA7", "state": "open", "auto_merge": nil}
		if s.auto {
			pr["auto_merge"] = map[string]any{"merge_method": "merge", "enabled_by": map[string]any{"login": "pin"}}
		}
		json.NewEncoder(w).Encode(pr)
	case r.Method == "POST" && r.URL.Path == "/api/graphql":
		m, _ := body.(map[string]any)
		q, _ := m["query"].(string)
		if diff := cmp.Diff(map[string]any{"id": "PR_kwDOA7"}, m["variables"]); diff != "" {
			t.Errorf("graphql variables (-want +got):\n%s", diff)
		}
		switch {
		case strings.Contains(q, "enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: MERGE})"):
			s.auto = true
		case strings.Contains(q, "disablePullRequestAutoMerge(input: {pullRequestId: $id})"):
			s.auto = false
		default:
			t.Errorf("graphql query %q", q)
		}
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{}})
	case r.Method == "GET" && r.URL.Path == "/api/v3/repos/acme/app/releases":
		if r.URL.Query().Get("per_page") != "100" {
			t.Errorf("releases query %s", r.URL.RawQuery)
		}
		json.NewEncoder(w).Encode([]any{
			map[string]any{"tag_name": "v1.2.0", "name": "Two", "body": "notes", "html_url": "https://ghe.example/acme/app/releases/tag/v1.2.0", "draft": false, "prerelease": false},
			map[string]any{"tag_name": "v1.3.0-rc.1", "body": "", "html_url": "x", "draft": true, "prerelease": true},
		})
	default:
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

func TestHandoverShapes(t *testing.T) {
	s := &handoverServer{t: t}
	srv := httptest.NewServer(s)
	defer srv.Close()
	r, err := New(srv.URL+"/api/v3", "s3cret", "pin-tool", "deploy", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Hand(ctx, forge.Request{Number: 7}, forge.Handover{Labels: []string{"dependencies", "pin"}, Assignees: []string{"bob"}, Reviewers: []string{"alice"}}); err != nil {
		t.Fatal(err)
	}
	if on, err := r.Automerge(ctx, 7); err != nil || on {
		t.Fatalf("Automerge before: %v, %v", on, err)
	}
	if err := r.SetAutomerge(ctx, 7, true); err != nil {
		t.Fatal(err)
	}
	if on, err := r.Automerge(ctx, 7); err != nil || !on {
		t.Fatalf("Automerge after enabling: %v, %v", on, err)
	}
	if err := r.SetAutomerge(ctx, 7, false); err != nil || s.auto {
		t.Fatalf("disabling: %v, auto %v", err, s.auto)
	}
	rels, err := r.Releases(ctx, "acme", "app")
	want := []forge.Release{{Tag: "v1.2.0", Name: "Two", Notes: "notes", URL: "https://ghe.example/acme/app/releases/tag/v1.2.0"}, {Tag: "v1.3.0-rc.1", URL: "x", Draft: true, Prerelease: true}}
	if diff := cmp.Diff(want, rels); err != nil || diff != "" {
		t.Errorf("Releases: %v (-want +got):\n%s", err, diff)
	}
	if r.Web() != srv.URL+"/" || r.Kind() != forge.KindGitHub {
		t.Errorf("Web %s, Kind %s", r.Web(), r.Kind())
	}
	if diff := cmp.Diff([]string{
		"POST /api/v3/repos/pin-tool/deploy/issues/7/labels",
		"POST /api/v3/repos/pin-tool/deploy/issues/7/assignees",
		"POST /api/v3/repos/pin-tool/deploy/pulls/7/requested_reviewers",
		"GET /api/v3/repos/pin-tool/deploy/pulls/7",
		"GET /api/v3/repos/pin-tool/deploy/pulls/7",
		"POST /api/graphql",
		"GET /api/v3/repos/pin-tool/deploy/pulls/7",
		"GET /api/v3/repos/pin-tool/deploy/pulls/7",
		"POST /api/graphql",
		"GET /api/v3/repos/acme/app/releases",
	}, s.seen); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// GraphQL errors come back with status 200: they are errors all the same.
func TestAutomergeGraphQLError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/graphql" {
			json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": "Pull request Auto merge is not allowed for this repository"}}})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"number": 7, "node_id": "PR_x"})
	}))
	defer srv.Close()
	r, _ := New(srv.URL, "s3cret", "o", "r", srv.Client())
	if err := r.SetAutomerge(context.Background(), 7, true); err == nil || !strings.Contains(err.Error(), "Auto merge is not allowed") {
		t.Errorf("err %v", err)
	}
	if got := r.Web(); got != srv.URL+"/" {
		t.Errorf("Web %s", got)
	}
}

func TestDefaultWeb(t *testing.T) {
	r, _ := New("", "", "o", "r", nil)
	if r.Web() != "https://github.com/" || r.graphQL() != "https://api.github.com/graphql" {
		t.Errorf("Web %s, GraphQL %s", r.Web(), r.graphQL())
	}
}
