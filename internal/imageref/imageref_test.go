package imageref

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const composeSrc = `# the forge
services:
  forge:
    image: "registry.example.org/forge/forgejo:1.27"   # floating
    ports: ["3000:3000"]
  web: {image: 'registry.example.org/web:2', restart: always}
  db:
    image: postgres:16
  builder:
    build: .
`

func TestComposeRefs(t *testing.T) {
	refs, err := ComposeRefs("compose.yaml", []byte(composeSrc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.Where()+" "+r.Service+" "+r.Value+" "+r.Raw)
	}
	want := []string{
		`compose.yaml:4 forge registry.example.org/forge/forgejo:1.27 "registry.example.org/forge/forgejo:1.27"`,
		`compose.yaml:6 web registry.example.org/web:2 'registry.example.org/web:2'`,
		`compose.yaml:8 db postgres:16 postgres:16`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("refs (-want +got):\n%s", d)
	}
}

func TestApplyKeepsEveryOtherByte(t *testing.T) {
	refs, err := ComposeRefs("compose.yaml", []byte(composeSrc))
	if err != nil {
		t.Fatal(err)
	}
	var edits []Edit
	for _, r := range refs {
		edits = append(edits, Edit{Ref: r, New: r.Value + "@sha256:00"})
	}
	got, err := Apply([]byte(composeSrc), edits)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		`forgejo:1.27"`, `forgejo:1.27@sha256:00"`,
		`web:2'`, `web:2@sha256:00'`,
		`postgres:16`, `postgres:16@sha256:00`,
	).Replace(composeSrc)
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Fatalf("rewritten (-want +got):\n%s", d)
	}
	// A reference that moved since it was read is not overwritten blindly.
	if _, err := Apply([]byte("services:\n  x:\n    image: other\n"), edits[:1]); err == nil {
		t.Fatal("Apply wrote over a reference that is not where it was read")
	}
}

const manifestSrc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: forge
spec:
  template:
    spec:
      initContainers:
        - name: migrate
          image: registry.example.org/forge/forgejo:1.27
      containers:
        - name: forge
          image: registry.example.org/forge/forgejo:1.27 # app
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: dump
            image: "postgres:16"
`

func TestManifestRefs(t *testing.T) {
	refs, objs, err := ManifestRefs("k.yaml", []byte(manifestSrc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.Where()+" "+r.Object+" "+r.Container+" "+r.Value)
	}
	want := []string{
		"k.yaml:10 deployment/forge migrate registry.example.org/forge/forgejo:1.27",
		"k.yaml:13 deployment/forge forge registry.example.org/forge/forgejo:1.27",
		"k.yaml:25 cronjob/backup dump postgres:16",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("refs (-want +got):\n%s", d)
	}
	if len(objs) != 2 || objs[1].Kind != "CronJob" {
		t.Fatalf("objects: %+v", objs)
	}
}

func TestBadInput(t *testing.T) {
	_, err := ComposeRefs("bad.yaml", []byte("services:\n  a:\n    image: [x\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:") {
		t.Fatalf("syntax error: %v", err)
	}
	_, _, err = ManifestRefs("m.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\nfoo: bar\n"))
	if err == nil || !strings.Contains(err.Error(), "m.yaml:5: not a Kubernetes object") {
		t.Fatalf("not kubernetes: %v", err)
	}
}
