package admit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pin-tool/pin/lock"
)

func get(s *Server, path string) (int, string) {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Code, w.Body.String()
}

// TestReadyz: /readyz answers 200 only once the catalogue and the lock
// are loaded; before, /healthz still answers (the process lives) and a
// review is undecided, answered by the failure policy.
func TestReadyz(t *testing.T) {
	loaded := testServer(t, hostFunc(cluster), &fakeRegistry{})
	e := loaded.Enforcer
	s := &Server{Namespaces: loaded.Namespaces, FailurePolicy: Fail}

	if code, body := get(s, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not loaded") {
		t.Fatalf("nothing loaded: /readyz %d %q", code, body)
	}
	if code, _ := get(s, "/healthz"); code != http.StatusOK {
		t.Fatalf("nothing loaded: /healthz %d", code)
	}
	r := s.Review(context.Background(), request("Deployment", "UPDATE", deployment("1.22.6", 1), deployment("1.27.3", 1)))
	if r.Allowed || !strings.Contains(r.Result.Message, "not loaded") {
		t.Fatalf("a review before loading: %+v", r)
	}

	// The catalogue without the lock is not ready either.
	half := *e
	half.Lock = nil
	s.Install(&half)
	if code, body := get(s, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "lock") {
		t.Fatalf("catalogue only: /readyz %d %q", code, body)
	}

	full := *e
	full.Lock = &lock.Lock{}
	s.Install(&full)
	if code, body := get(s, "/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("loaded: /readyz %d %q", code, body)
	}
	r = s.Review(context.Background(), request("Deployment", "UPDATE", deployment("1.22.6", 1), deployment("1.27.3", 1)))
	if r.Allowed || !strings.Contains(r.Result.Message, "refusing a downgrade") {
		t.Fatalf("a downgrade once loaded: %+v", r.Result)
	}
}
