package imageref

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRefForms: an image behind an anchor or a tag is a plain value Apply
// rewrites; an alias reads as its anchor's value and a block scalar as its
// text, each with the Form that says Apply cannot rewrite it there.
func TestRefForms(t *testing.T) {
	src := `x-img: &img registry.example.org/pin/web:1.1
services:
  web:
    image: *img
  db:
    image: >-
      registry.example.org/pin/db:1.9
  a:
    image: &a reg.example/a:1
  b:
    image: !!str reg.example/b:1
  c:
    image: |
      reg.example/c:1
  d:
    image: *a
`
	refs, err := ComposeRefs("compose.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, strings.Join([]string{r.Where(), r.Service, r.Value, r.Raw, r.Form, r.Anchor, r.Alias}, "|"))
	}
	want := []string{
		"compose.yaml:4|web|registry.example.org/pin/web:1.1|*img|the YAML alias *img||img",
		"compose.yaml:6|db|registry.example.org/pin/db:1.9|>-|a YAML block scalar (>-)||",
		"compose.yaml:9|a|reg.example/a:1|reg.example/a:1||a|",
		"compose.yaml:11|b|reg.example/b:1|reg.example/b:1|||",
		"compose.yaml:13|c|reg.example/c:1|||a YAML block scalar (|)||",
		"compose.yaml:16|d|reg.example/a:1|*a|the YAML alias *a||a",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("refs (-want +got):\n%s", d)
	}
	// The anchored and tagged values are rewritten where they are, the
	// anchor and the tag kept; an alias or a block scalar is an error.
	out, err := Apply([]byte(src), []Edit{{Ref: refs[2], New: "reg.example/a:2"}, {Ref: refs[3], New: "reg.example/b:2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "image: &a reg.example/a:2\n") || !strings.Contains(string(out), "image: !!str reg.example/b:2\n") {
		t.Errorf("rewritten:\n%s", out)
	}
	for _, r := range []Ref{refs[0], refs[1]} {
		if _, err := Apply([]byte(src), []Edit{{Ref: r, New: "x"}}); err == nil || !strings.Contains(err.Error(), "which pin does not rewrite") {
			t.Errorf("Apply to %s: %v", r.Form, err)
		}
	}
}

// TestManifestCommentDocuments: a document of only comments (a trailing
// one, as generators and people leave them) or null is skipped, as kubectl
// skips it; an object without kind is still refused.
func TestManifestCommentDocuments(t *testing.T) {
	src := `apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers: [{name: a, image: reg.example/a:1}]
---
# nothing here yet
---
~
---
# the end
`
	refs, objs, err := ManifestRefs("app.yaml", []byte(src))
	if err != nil || len(refs) != 1 || len(objs) != 1 {
		t.Fatalf("%d refs, %d objects, %v", len(refs), len(objs), err)
	}
	if _, _, err := ManifestRefs("app.yaml", []byte(src+"---\nmetadata: {name: b}\n")); err == nil || !strings.Contains(err.Error(), "app.yaml:13: not a Kubernetes object") {
		t.Errorf("an object without kind: %v", err)
	}
}
