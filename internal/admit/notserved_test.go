package admit

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/image"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestReviewNotServed: a Deployment updated to a tag, or a digest, its
// registry does not have is refused saying so: the reference as given
// (with its tag), that the registry has no such tag or manifest, what
// runs, and what to deploy. The answers are golden (the message, and the
// AdmissionResponse as JSON). Then each suggestion is run: deploying what
// runs is allowed, and so is the tag once it is pushed (a newer release).
func TestReviewNotServed(t *testing.T) {
	ctx := context.Background()
	missing := digestOf("never pushed")
	var out strings.Builder
	var answers []string
	for _, c := range []struct{ what, ref string }{
		{"a tag the registry does not have", repo + ":9.9.9"},
		{"a digest the registry does not serve", repo + "@" + missing},
		{"a tag and a digest, neither served", repo + ":9.9.9@" + missing},
	} {
		s := testServer(t, hostFunc(cluster), &fakeRegistry{})
		r := s.Review(ctx, request("Deployment", "UPDATE", deploymentOf(c.ref), deployment("1.27.3", 1)))
		if r.Allowed {
			t.Fatalf("%s: allowed", c.what)
		}
		msg := r.Result.Message
		for _, want := range []string{c.ref, "registry.example.org has no image", "prod/deployment/forgejo/forgejo runs"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the message lacks %q:\n%s", c.what, want, msg)
			}
		}
		if strings.Contains(msg, "image ID") || strings.Contains(msg, "allow-downgrade") {
			t.Errorf("%s: the message speaks of an image ID or of an override:\n%s", c.what, msg)
		}
		js, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("# " + c.what + ": " + c.ref + "\n" + msg + "\n\n" + string(js) + "\n\n")
		answers = append(answers, msg)
	}
	golden(t, "notserved.golden", out.String())

	// What the refusal says to deploy: what runs.
	deploy := regexp.MustCompile(`to run what [^,]+ runs, deploy (\S+)`).FindStringSubmatch(answers[0])
	if deploy == nil {
		t.Fatalf("no reference to deploy in:\n%s", answers[0])
	}
	s := testServer(t, hostFunc(cluster), &fakeRegistry{})
	if r := s.Review(ctx, request("Deployment", "UPDATE", deploymentOf(deploy[1]), deployment("1.27.3", 1))); !r.Allowed {
		t.Errorf("deploying %s, as the refusal says: %s", deploy[1], r.Result.Message)
	}
	// Or push the tag first: a newer release under it is then allowed.
	created, _ := time.Parse("2006-01-02", "2026-11-01")
	pushed := image.Image{Repository: repo, Tag: "9.9.9", Digest: digestOf("9.9.9"), Created: created, Labels: map[string]string{image.LabelVersion: "9.9.9"}}
	images["9.9.9"], images[pushed.Digest] = pushed, pushed
	t.Cleanup(func() { delete(images, "9.9.9"); delete(images, pushed.Digest) })
	if r := s.Review(ctx, request("Deployment", "UPDATE", deploymentOf(repo+":9.9.9"), deployment("1.27.3", 1))); !r.Allowed {
		t.Errorf("9.9.9 once pushed: %s", r.Result.Message)
	}
}

// deploymentOf is deployment with the image given whole.
func deploymentOf(ref string) string {
	return strings.Replace(deployment("x", 1), repo+":x", ref, 1)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -run %s -update rewrites it); got:\n%s", p, t.Name(), got)
	}
}
