package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/lock"
)

const (
	d1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	d2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	d3 = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

func fixture(t *testing.T) (*Coverage, string) {
	t.Helper()
	cat, diags := catalogue.Parse(catalogue.Source{Filename: "c.hcl", Bytes: []byte(`
host "dock" {}
module "web" {
  image  = "registry.example.org/pin/web"
  policy = "at-least-running"
  runs_on "dock" { compose = "stack/web" }
}
module "db" {
  image  = "postgres"
  policy = "at-least-running"
  pin    = "16"
}
module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  pin    = "1.27"
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	lk := &lock.Lock{Modules: []*lock.Module{
		{Name: "web", Image: "registry.example.org/pin/web", Tag: "latest", Digest: d1},
		{Name: "db", Image: "index.docker.io/library/postgres", Tag: "16", Digest: d2},
		{Name: "forge", Image: "registry.example.org/forge/forgejo", Tag: "1.27.3", Digest: d3},
	}}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(`# the stack
services:
  web:
    image: "registry.example.org/pin/web:latest"  # floating
    network_mode: none
  db:
    image: postgres:16@`+d3+`
  tool:
    build: .
  other:
    image: example.org/other:1
`), 0o644)
	return NewCoverage(cat, lk), filepath.Join(dir, "compose.yaml")
}

func TestOverride(t *testing.T) {
	cov, f := fixture(t)
	p, err := compose.Load(context.Background(), compose.Options{Files: []string{f}, Env: []string{}, ProjectName: "stack"})
	if err != nil {
		t.Fatal(err)
	}
	r := Override(p, cov, nil)
	want := `# Written by pin export from the lock; pin export rewrites it, do not edit.
# docker compose -f compose.yaml -f compose.pin.yaml up -d
# runs exactly the locked images.
services:
  db:
    image: postgres:16@` + d2 + `
  web:
    image: registry.example.org/pin/web:latest@` + d1 + `
`
	if d := cmp.Diff(want, string(r.Files[0].Bytes)); d != "" {
		t.Fatalf("override (-want +got):\n%s", d)
	}
	if r.Files[0].Path != filepath.Join(filepath.Dir(f), "compose.pin.yaml") {
		t.Errorf("path %s", r.Files[0].Path)
	}
	// postgres:16@d3: the lock names 16 as d2.
	if len(r.Findings) != 1 || r.Findings[0].Where != f+":7" || !strings.Contains(r.Findings[0].Msg, "tag 16 and the digest disagree") {
		t.Errorf("findings %+v", r.Findings)
	}
	var skipped []string
	for _, s := range r.Skipped {
		skipped = append(skipped, s.What+": "+s.Why)
	}
	if d := cmp.Diff([]string{"service other: no module has image example.org/other", "service tool: it is only built: there is no image to pin"}, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	// A second run over its own output changes nothing.
	if again := Override(p, cov, r.Files[0].Bytes); again.Files[0].Changed() {
		t.Error("second run changes the override")
	}
}

func TestInPlaceKeepsFormatting(t *testing.T) {
	cov, f := fixture(t)
	p, err := compose.Load(context.Background(), compose.Options{Files: []string{f}, Env: []string{}, ProjectName: "stack"})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(f)
	r, err := InPlace(p, cov, map[string][]byte{f: src})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(`web:latest"`, `web:latest@`+d1+`"`, `postgres:16@`+d3, `postgres:16@`+d2).Replace(string(src))
	if d := cmp.Diff(want, string(r.Files[0].Bytes)); d != "" {
		t.Fatalf("rewritten (-want +got):\n%s", d)
	}
	again, err := InPlace(p, cov, map[string][]byte{f: r.Files[0].Bytes})
	if err != nil || again.Files[0].Changed() {
		t.Fatalf("second run changes the file (%v)", err)
	}
}

func TestEnv(t *testing.T) {
	cov, _ := fixture(t)
	old := []byte("# deploy settings\nexport FORGE_IMAGE=registry.example.org/forge/forgejo:1.22\nREPLICAS=2\n")
	r := Env("deploy.env", cov, old)
	want := "# deploy settings\nexport FORGE_IMAGE=registry.example.org/forge/forgejo:1.27.3@" + d3 + "\nREPLICAS=2\n" +
		"DB_IMAGE=index.docker.io/library/postgres:16@" + d2 + "\nWEB_IMAGE=registry.example.org/pin/web:latest@" + d1 + "\n"
	if d := cmp.Diff(want, string(r.Files[0].Bytes)); d != "" {
		t.Fatalf("env (-want +got):\n%s", d)
	}
	if again := Env("deploy.env", cov, r.Files[0].Bytes); again.Files[0].Changed() {
		t.Error("second run changes the env file")
	}
}

func TestKustomize(t *testing.T) {
	cov, _ := fixture(t)
	manifest := []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: forge}
spec:
  template:
    spec:
      containers:
      - name: forge
        image: registry.example.org/forge/forgejo:1.27
`)
	refs, _, err := imageref.ManifestRefs("deploy.yaml", manifest)
	if err != nil {
		t.Fatal(err)
	}
	old := []byte(`# kustomization of forge
resources:
- deploy.yaml
images:
- name: busybox
  newTag: "1.36"
namespace: forge
`)
	r, err := Kustomize("kustomization.yaml", cov, refs, old)
	if err != nil {
		t.Fatal(err)
	}
	want := `# kustomization of forge
resources:
- deploy.yaml
images:
- name: busybox
  newTag: "1.36"
- name: registry.example.org/forge/forgejo
  newName: registry.example.org/forge/forgejo
  newTag: "1.27.3"
  digest: ` + d3 + `
namespace: forge
`
	if d := cmp.Diff(want, string(r.Files[0].Bytes)); d != "" {
		t.Fatalf("kustomization (-want +got):\n%s", d)
	}
	again, err := Kustomize("kustomization.yaml", cov, refs, r.Files[0].Bytes)
	if err != nil || again.Files[0].Changed() {
		t.Fatalf("second run changes the kustomization (%v)", err)
	}
}

// TestEnvNamed: what an env file's line makes run, as Compose's .env and
// a shell read it: a comment after the value (" #…") is not part of it,
// a quoted value ends at its quote, "export" may be followed by a tab,
// and a byte-order mark does not hide the first line's name; the line's
// comment and the mark are kept when the value is rewritten.
func TestEnvNamed(t *testing.T) {
	cov, _ := fixture(t)
	const forge = "registry.example.org/forge/forgejo"
	for _, c := range []struct{ line, named, written string }{
		{"FORGE_IMAGE=" + forge + ":1.22 # the forge", forge + ":1.22", "FORGE_IMAGE=" + forge + ":1.27.3@" + d3 + " # the forge"},
		{`FORGE_IMAGE="` + forge + `:1.22" # the forge`, forge + ":1.22", "FORGE_IMAGE=" + forge + ":1.27.3@" + d3 + " # the forge"},
		{"FORGE_IMAGE='" + forge + ":1.22'", forge + ":1.22", "FORGE_IMAGE=" + forge + ":1.27.3@" + d3},
		{"export\tFORGE_IMAGE=" + forge + ":1.22", forge + ":1.22", "export FORGE_IMAGE=" + forge + ":1.27.3@" + d3},
		{"\xef\xbb\xbfFORGE_IMAGE=" + forge + ":1.22", forge + ":1.22", "\xef\xbb\xbfFORGE_IMAGE=" + forge + ":1.27.3@" + d3},
		{"FORGE_IMAGE=" + forge + ":1.22#not-a-comment", forge + ":1.22#not-a-comment", "FORGE_IMAGE=" + forge + ":1.27.3@" + d3},
		{"FORGE_IMAGE=${FORGE:-" + forge + ":1.22}", "", "FORGE_IMAGE=" + forge + ":1.27.3@" + d3},
	} {
		r := Env("deploy.env", cov, []byte(c.line+"\n"))
		var e Entry
		for _, x := range r.Entries {
			if x.Module == "forge" {
				e = x
			}
		}
		var named string
		if len(e.Named) > 0 {
			named = e.Named[0].Ref
			if e.Named[0].At != "deploy.env:1" {
				t.Errorf("%q: at %s", c.line, e.Named[0].At)
			}
		}
		if named != c.named {
			t.Errorf("%q: named %q, want %q", c.line, named, c.named)
		}
		if first, _, _ := strings.Cut(string(r.Files[0].Bytes), "\n"); first != c.written {
			t.Errorf("%q: written %q, want %q", c.line, first, c.written)
		}
	}
}
