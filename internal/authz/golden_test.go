package authz

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestImageIDMessagesGolden: what pin authz says of a create that names
// its image by an image ID, the Engine holding it (judged as the image it
// names) or not (refused, saying what to give instead), and of a create
// whose body the Engine kept: a change to any is a reviewed change.
func TestImageIDMessagesGolden(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	for _, c := range []struct {
		what string
		req  Request
	}{
		{"docker run --name forgejo sha256:<ID of 1.22.6>", createOf("forgejo", id22, nil)},
		{"docker run --name forgejo sha256:<12 hex digits of it>", createOf("forgejo", id22[:19], nil)},
		{"docker run --name forgejo sha256:<an ID the Engine does not hold>", createOf("forgejo", "sha256:"+strings.Repeat("9", 64), nil)},
		{"a create of forgejo whose body the Engine kept (--fail-open)", Request{RequestMethod: "POST", RequestURI: "/v1.41/containers/create?name=forgejo"}},
	} {
		s, _ := sideServer(t)
		s.FailOpen = true
		r := s.Authorize(ctx, c.req)
		out.WriteString("# " + c.what + "\n")
		if r.Allow {
			out.WriteString("allowed\n\n")
			continue
		}
		out.WriteString(r.Msg + "\n\n")
	}
	golden := filepath.Join("testdata", "imageid.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("messages differ from %s (go test -run ImageIDMessagesGolden -update to rewrite):\n%s", golden, out.String())
	}
}
